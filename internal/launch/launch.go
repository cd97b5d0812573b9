// Package launch starts applications on a display for acu: from a desktop
// entry (found by id or Name in the XDG data directories, its Exec line
// parsed per the Desktop Entry specification) or from an argv, detached in
// its own process group so it outlives the request that started it.
//
// It sits under the server (POST /v1/apps/launch). It does not watch for
// the application's window: its caller does that on the display.
package launch

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrNotFound is returned (wrapped) by Find when no entry matches.
var ErrNotFound = errors.New("no such desktop entry")

// ErrTerminal is returned (wrapped) for entries with Terminal=true, which
// acu does not start (it does not pick a terminal for them).
var ErrTerminal = errors.New("desktop entry needs a terminal")

// Entry is an application's desktop entry.
type Entry struct {
	ID        string // file name without .desktop ("org.gnome.Calculator")
	Path      string
	Name      string
	Comment   string // the entry's description ("Edit text files")
	Exec      string
	Icon      string
	Type      string // "Application", "Link", "Directory"
	Terminal  bool
	Hidden    bool // Hidden=true: the entry counts as deleted
	NoDisplay bool // NoDisplay=true: not shown in menus (still launchable)
}

// AppDirs lists the "applications" directories of the XDG data
// directories, most important first: $XDG_DATA_HOME (default
// ~/.local/share), then $XDG_DATA_DIRS (default /usr/local/share:/usr/share).
func AppDirs(getenv func(string) string) []string {
	var dirs []string
	home := getenv("XDG_DATA_HOME")
	if home == "" && getenv("HOME") != "" {
		home = filepath.Join(getenv("HOME"), ".local/share")
	}
	if home != "" {
		dirs = append(dirs, filepath.Join(home, "applications"))
	}
	sys := getenv("XDG_DATA_DIRS")
	if sys == "" {
		sys = "/usr/local/share:/usr/share"
	}
	for _, d := range strings.Split(sys, ":") {
		if d != "" {
			dirs = append(dirs, filepath.Join(d, "applications"))
		}
	}
	return dirs
}

// Find returns the desktop entry whose id ("xterm", "xterm.desktop",
// "org.gnome.Calculator") or Name (case-insensitive) is name, searching
// dirs in order; an id match anywhere wins over a Name match. Entries in
// subdirectories have ids joined by "-" ("kde-foo"), as the specification
// says.
func Find(dirs []string, name string) (Entry, error) {
	id := strings.TrimSuffix(name, ".desktop")
	var byName *Entry
	seen := map[string]bool{}
	for _, d := range dirs {
		var found *Entry
		_ = filepath.WalkDir(d, func(p string, de fs.DirEntry, err error) error {
			if err != nil || de.IsDir() || !strings.HasSuffix(p, ".desktop") || found != nil {
				return nil
			}
			rel, _ := filepath.Rel(d, p)
			eid := strings.ReplaceAll(strings.TrimSuffix(rel, ".desktop"), string(filepath.Separator), "-")
			if seen[eid] {
				return nil // shadowed by a more important directory
			}
			seen[eid] = true
			e, err := Read(p)
			if err != nil || e.Hidden {
				return nil
			}
			e.ID = eid
			if eid == id {
				found = &e
			} else if byName == nil && strings.EqualFold(e.Name, name) {
				byName = &e
			}
			return nil
		})
		if found != nil {
			return *found, nil
		}
	}
	if byName != nil {
		return *byName, nil
	}
	return Entry{}, fmt.Errorf("%w: %q in %s: give a desktop file's id (its name without .desktop) or its Name", ErrNotFound, name, strings.Join(dirs, ", "))
}

// Read parses the [Desktop Entry] group of a desktop file.
func Read(path string) (Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return Entry{}, fmt.Errorf("read desktop entry: %w", err)
	}
	defer f.Close()
	return Parse(f, path)
}

// Parse reads the [Desktop Entry] group of a desktop file's content; path
// is recorded (for %k) and named in errors. Localized keys (Name[de]) and
// other groups (actions) are skipped.
func Parse(r io.Reader, path string) (Entry, error) {
	e := Entry{Path: path}
	sc := bufio.NewScanner(r)
	in := false
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
		switch strings.TrimSpace(k) {
		case "Name":
			e.Name = unescape(strings.TrimSpace(v))
		case "Comment":
			e.Comment = unescape(strings.TrimSpace(v))
		case "Exec":
			e.Exec = unescape(strings.TrimSpace(v))
		case "Icon":
			e.Icon = strings.TrimSpace(v)
		case "Type":
			e.Type = strings.TrimSpace(v)
		case "Terminal":
			e.Terminal = strings.TrimSpace(v) == "true"
		case "Hidden":
			e.Hidden = strings.TrimSpace(v) == "true"
		case "NoDisplay":
			e.NoDisplay = strings.TrimSpace(v) == "true"
		}
	}
	if err := sc.Err(); err != nil {
		return Entry{}, fmt.Errorf("read desktop entry %s: %w", path, err)
	}
	return e, nil
}

// unescape undoes the string escapes of desktop entry values (\s \n \t \r
// \\); Exec's own quoting is parsed afterwards by Argv.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 's':
			b.WriteByte(' ')
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '\\':
			b.WriteByte('\\')
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// Argv turns the entry's Exec line into an argv: arguments split on
// spaces, double-quoted arguments with \" \` \$ \\ escapes, field codes
// for files and URLs (%f %F %u %U and the deprecated ones) removed, %c
// the Name, %k the file's path, %i "--icon ICON", %% a percent sign.
func (e Entry) Argv() ([]string, error) {
	if e.Terminal {
		return nil, fmt.Errorf("%w: %q has Terminal=true, and acu does not choose a terminal: launch an argv such as [\"xterm\", \"-e\", ...] instead", ErrTerminal, e.ID)
	}
	var (
		args    []string
		cur     strings.Builder
		has     bool
		inQuote bool
	)
	s := e.Exec
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case inQuote && ch == '\\' && i+1 < len(s) && strings.IndexByte("\"`$\\", s[i+1]) >= 0:
			i++
			cur.WriteByte(s[i])
		case ch == '"':
			inQuote, has = !inQuote, true
		case !inQuote && ch == ' ':
			if has {
				args = append(args, cur.String())
				cur.Reset()
				has = false
			}
		case ch == '%' && i+1 < len(s):
			i++
			switch s[i] {
			case '%':
				cur.WriteByte('%')
				has = true
			case 'c':
				cur.WriteString(e.Name)
				has = true
			case 'k':
				cur.WriteString(e.Path)
				has = true
			case 'i':
				if e.Icon != "" && !has {
					args = append(args, "--icon")
					cur.WriteString(e.Icon)
					has = true
				}
			case 'f', 'F', 'u', 'U', 'd', 'D', 'n', 'N', 'v', 'm':
			default:
				return nil, fmt.Errorf("desktop entry %q: Exec has an unknown field code %%%c", e.ID, s[i])
			}
		default:
			cur.WriteByte(ch)
			has = true
		}
	}
	if inQuote {
		return nil, fmt.Errorf("desktop entry %q: Exec has an unclosed quote", e.ID)
	}
	if has {
		args = append(args, cur.String())
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("desktop entry %q has no Exec line", e.ID)
	}
	return args, nil
}

// Spec is what to start.
type Spec struct {
	Argv []string
	Env  []string // the whole environment (DISPLAY included)
	Dir  string   // working directory; "" for the caller's
}

// Process is a started application.
type Process struct {
	PID  int
	done chan struct{}
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Start starts the program detached: its own process group (a signal to
// acu's group does not reach it), standard streams on /dev/null. A
// goroutine reaps it when it exits; it is not killed when acu stops.
func Start(spec Spec, log *slog.Logger) (*Process, error) {
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return nil, errors.New("argv must name a program")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	path, err := exec.LookPath(spec.Argv[0])
	if err != nil {
		return nil, fmt.Errorf("launch %s: %w", spec.Argv[0], err)
	}
	cmd := exec.Command(path, spec.Argv[1:]...)
	cmd.Args[0] = spec.Argv[0]
	cmd.Env = spec.Env
	cmd.Dir = spec.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("launch %s: %w", spec.Argv[0], err)
	}
	p := &Process{PID: cmd.Process.Pid, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		log.Info("launched program exited", "pid", p.PID, "argv0", spec.Argv[0], "err", err)
		close(p.done)
	}()
	return p, nil
}

// Env is the environment for a program on display: base without secrets
// (Scrub: API keys, tokens, passwords, database URLs, acu's own ACU_*
// settings; names in allow pass all the same) and without the variables
// that tie a program to another desktop or turn accessibility off, plus
// DISPLAY, GNOME_ACCESSIBILITY=1 and, when acu knows the display's
// accessibility bus, AT_SPI_BUS_ADDRESS.
func Env(base []string, display, atspiBus string, allow []string) []string {
	base = Scrub(base, allow)
	env := make([]string, 0, len(base)+3)
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "DISPLAY", "AT_SPI_BUS_ADDRESS", "NO_AT_BRIDGE", "GNOME_ACCESSIBILITY", "WAYLAND_DISPLAY":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "DISPLAY="+display, "GNOME_ACCESSIBILITY=1")
	if atspiBus != "" {
		env = append(env, "AT_SPI_BUS_ADDRESS="+atspiBus)
	}
	return env
}
