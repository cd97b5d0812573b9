package launch_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acu-dev/acu/internal/launch"
)

func TestArgv(t *testing.T) {
	tests := []struct {
		name, exec string
		want       []string
	}{
		{"plain", "xterm -T hi", []string{"xterm", "-T", "hi"}},
		{"field codes removed", "gedit %U", []string{"gedit"}},
		{"codes inside an arg", "app --file=%f --x", []string{"app", "--file=", "--x"}},
		{"percent", "printf 100%%", []string{"printf", "100%"}},
		{"name and path", "app --name %c --from %k", []string{"app", "--name", "My App", "--from", "/a/b.desktop"}},
		{"icon", "app %i", []string{"app", "--icon", "app-icon"}},
		{"quoted", `sh -c "echo \"a b\" \$HOME \\ done"`, []string{"sh", "-c", `echo "a b" $HOME \ done`}},
		{"empty quoted", `app ""`, []string{"app", ""}},
		{"extra spaces", "  app   x  ", []string{"app", "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := launch.Entry{ID: "t", Name: "My App", Path: "/a/b.desktop", Icon: "app-icon", Exec: tt.exec}
			got, err := e.Argv()
			if err != nil {
				t.Fatalf("Argv(%q) = %v", tt.exec, err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Argv(%q) diff (-want +got):\n%s", tt.exec, d)
			}
		})
	}
	for _, bad := range []string{`app "open`, "app %z", ""} {
		if got, err := (launch.Entry{Exec: bad}).Argv(); err == nil {
			t.Errorf("Argv(%q) = %q, want an error", bad, got)
		}
	}
	if _, err := (launch.Entry{Exec: "htop", Terminal: true}).Argv(); !errors.Is(err, launch.ErrTerminal) {
		t.Errorf("Argv(Terminal=true) = %v, want ErrTerminal", err)
	}
}

func FuzzArgv(f *testing.F) {
	for _, s := range []string{"xterm %U", `sh -c "a \" b"`, "%%", `"`, "a %i %c %k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = launch.Entry{Exec: s, Name: "n", Icon: "i"}.Argv()
	})
}

func writeEntry(t *testing.T, dir, file, body string) {
	t.Helper()
	p := filepath.Join(dir, file)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFind(t *testing.T) {
	user, sys := t.TempDir(), t.TempDir()
	writeEntry(t, sys, "calc.desktop", "[Desktop Entry]\nType=Application\nName=Calculator\nExec=sys-calc\n")
	writeEntry(t, user, "calc.desktop", "[Desktop Entry]\nType=Application\nName=Calculator\nExec=user-calc %U\n")
	writeEntry(t, sys, "kde/edit.desktop", "[Desktop Entry]\nName=Editor\nExec=edit\n[Desktop Action new]\nExec=other\n")
	writeEntry(t, sys, "gone.desktop", "[Desktop Entry]\nName=Gone\nExec=gone\nHidden=true\n")
	dirs := []string{user, sys}
	tests := []struct{ name, want string }{
		{"calc", "user-calc %U"}, {"calc.desktop", "user-calc %U"}, {"calculator", "user-calc %U"},
		{"kde-edit", "edit"}, {"Editor", "edit"},
	}
	for _, tt := range tests {
		e, err := launch.Find(dirs, tt.name)
		if err != nil || e.Exec != tt.want {
			t.Errorf("Find(%q) = %+v, %v; want Exec %q", tt.name, e, err, tt.want)
		}
	}
	for _, name := range []string{"gone", "nothing"} {
		if _, err := launch.Find(dirs, name); !errors.Is(err, launch.ErrNotFound) {
			t.Errorf("Find(%q) = %v, want ErrNotFound", name, err)
		}
	}
}

func TestStartDetached(t *testing.T) {
	out := filepath.Join(t.TempDir(), "env")
	env := launch.Env([]string{"PATH=" + os.Getenv("PATH"), "DISPLAY=:5", "NO_AT_BRIDGE=1"}, ":42", "unix:path=/x", nil)
	p, err := launch.Start(launch.Spec{Argv: []string{"sh", "-c", `echo "$DISPLAY $AT_SPI_BUS_ADDRESS $NO_AT_BRIDGE $(ps -o pgid= -p $$)" > ` + out}, Env: env}, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	if len(f) != 3 || f[0] != ":42" || f[1] != "unix:path=/x" || f[2] != itoa(p.PID) {
		t.Errorf("child saw %q, want DISPLAY :42, the bus, no NO_AT_BRIDGE, and its own process group %d", b, p.PID)
	}
	if _, err := launch.Start(launch.Spec{Argv: []string{"no-such-program-acu"}}, nil); err == nil {
		t.Error("Start(missing program) = nil error")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
