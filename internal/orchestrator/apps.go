package orchestrator

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/acu-dev/acu/internal/launch"
)

// App is an installed application, from its desktop entry.
type App struct {
	Name    string `json:"name"`
	Exec    string `json:"exec,omitempty"`    // the program, without field codes
	Comment string `json:"comment,omitempty"` // the entry's description
}

// maxApps caps the applications sent to the planner.
const maxApps = 150

// DesktopApps reads the desktop entries (*.desktop) in dirs, for example
// /usr/share/applications and ~/.local/share/applications: visible
// applications only (Type=Application, not NoDisplay or Hidden), by name,
// at most 150. Unreadable directories are skipped.
func DesktopApps(dirs []string) []App {
	seen := map[string]bool{}
	var out []App
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join(d, "*.desktop"))
		for _, f := range files {
			a, ok := readDesktopEntry(f)
			if !ok || seen[a.Name] {
				continue
			}
			seen[a.Name] = true
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i].Name) < strings.ToLower(out[j].Name) })
	if len(out) > maxApps {
		out = out[:maxApps]
	}
	return out
}

func readDesktopEntry(path string) (App, bool) {
	f, err := os.Open(path)
	if err != nil {
		return App{}, false
	}
	defer f.Close()
	return parseDesktopEntry(f)
}

// parseDesktopEntry reads the [Desktop Entry] group of a desktop file
// (launch.Parse, the parser POST /v1/apps/launch uses): visible
// applications with a name, and their program's base name.
func parseDesktopEntry(r io.Reader) (App, bool) {
	e, err := launch.Parse(r, "")
	if err != nil || e.Type != "Application" || e.Hidden || e.NoDisplay || e.Name == "" {
		return App{}, false
	}
	a := App{Name: e.Name, Comment: e.Comment}
	e.Terminal = false // listed all the same; only the program's name is wanted
	if argv, err := e.Argv(); err == nil {
		a.Exec = filepath.Base(argv[0])
	}
	return a, true
}

// DesktopLauncher starts applications by desktop entry (file id or Name)
// from Dirs on Display, detached, with accessibility on (launch.Env).
type DesktopLauncher struct {
	Dirs    []string
	Display string
	Bus     string   // the display's accessibility bus address, "" when unknown
	Env     []string // the base environment (os.Environ()); secrets are scrubbed (launch.Env)
	Allow   []string // secret-looking variables passed on all the same (ACU_LAUNCH_ENV_ALLOW)
	Logger  *slog.Logger
}

// Launch starts the entry named name and says what it started.
func (l DesktopLauncher) Launch(_ context.Context, name string) (string, error) {
	e, err := launch.Find(l.Dirs, name)
	if err != nil {
		return "", err
	}
	argv, err := e.Argv()
	if err != nil {
		return "", fmt.Errorf("launch %s: %w", name, err)
	}
	p, err := launch.Start(launch.Spec{Argv: argv, Env: launch.Env(l.Env, l.Display, l.Bus, l.Allow)}, l.Logger)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("started %s (%s, pid %d)", e.Name, argv[0], p.PID), nil
}

// line is the app as the models see it: "- Name (program): description".
func (a App) line() string {
	s := "- " + a.Name
	if a.Exec != "" {
		s += " (" + a.Exec + ")"
	}
	if a.Comment != "" {
		s += ": " + a.Comment
	}
	return s
}
