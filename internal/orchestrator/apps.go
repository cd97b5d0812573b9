package orchestrator

import (
	"bufio"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// App is an installed application, from its desktop entry.
type App struct {
	Name string `json:"name"`
	Exec string `json:"exec,omitempty"` // the program, without field codes
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
	return parseDesktopEntry(bufio.NewScanner(f))
}

// parseDesktopEntry reads the [Desktop Entry] group of a desktop file.
func parseDesktopEntry(sc *bufio.Scanner) (App, bool) {
	var a App
	in, app, hidden := false, false, false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			in = line == "[Desktop Entry]"
			continue
		}
		if !in || line == "" || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "Name":
			a.Name = v
		case "Exec":
			if fs := strings.Fields(v); len(fs) > 0 {
				a.Exec = filepath.Base(strings.Trim(fs[0], `"`))
			}
		case "Type":
			app = v == "Application"
		case "NoDisplay", "Hidden":
			hidden = hidden || v == "true"
		}
	}
	return a, app && !hidden && a.Name != ""
}
