package orchestrator

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/gate"
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
// (the parser POST /v1/apps/launch uses): visible
// applications with a name, and their program's base name.
func parseDesktopEntry(r io.Reader) (App, bool) {
	e, err := gate.ParseDesktopEntry(r, "")
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
// from Dirs on Display, through the gate (its policy, its audit, a
// scrubbed environment, accessibility on).
type DesktopLauncher struct {
	Gate    *gate.Gate
	Dirs    []string
	Display string
}

// Launch starts the entry named name and says what it started.
func (l DesktopLauncher) Launch(ctx context.Context, name string) (string, error) {
	if l.Gate == nil {
		return "", fmt.Errorf("launch %s: no gate to launch through", name)
	}
	res, err := l.Gate.LaunchFrom(ctx, l.Dirs, api.LaunchRequest{DesktopEntry: name, Display: l.Display})
	if err != nil {
		return "", err
	}
	prog := ""
	if len(res.Argv) > 0 {
		prog = res.Argv[0]
	}
	return fmt.Sprintf("started %s (%s, pid %d)", name, prog, res.PID), nil
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
