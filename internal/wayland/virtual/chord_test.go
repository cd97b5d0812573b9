package virtual_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// keyLog is a GTK 3 window (python3-gi) that prints every key press and
// release it gets, with the keysym's name, and "ready" once it has the
// keyboard focus.
const keyLog = `
import gi
gi.require_version("Gtk", "3.0")
from gi.repository import Gtk, Gdk
win = Gtk.Window(title="acu-keys")
def show(kind):
    def f(_, ev):
        print("%s %s" % (kind, Gdk.keyval_name(ev.keyval)), flush=True)
        return True
    return f
win.connect("key-press-event", show("press"))
win.connect("key-release-event", show("release"))
win.connect("focus-in-event", lambda *a: print("ready", flush=True))
win.connect("destroy", Gtk.main_quit)
win.show_all()
Gtk.main()
`

// TestChordHoldsKeysInOrder presses "ctrl+a+b" and "x+y" into a native
// GTK app on sway: the app sees the modifier, then a, then b pressed, and
// their releases in reverse, as X11's device sends such a chord.
func TestChordHoldsKeysInOrder(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import gi; gi.require_version('Gtk', '3.0'); from gi.repository import Gtk").Run(); err != nil {
		if os.Getenv("ACU_REQUIRE_WAYLAND") == "1" {
			t.Fatalf("python3-gi with GTK 3 is not installed: %v", err)
		}
		t.Skipf("python3-gi with GTK 3 is not installed: %v", err)
	}
	c := waylandtest.Start(t, 640, 400)
	d := open(t, c)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	script := filepath.Join(t.TempDir(), "keys.py")
	if err := os.WriteFile(script, []byte(keyLog), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, py, script)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8", "GDK_BACKEND=wayland", "NO_AT_BRIDGE=1"}, c.Env()...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the GTK app: %v", err)
	}
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cancel(); <-exited })
	next := func(what string) string {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the app exited before %s", what)
			}
			return l
		case <-ctx.Done():
			t.Fatalf("the app printed no %s", what)
		}
		return ""
	}
	for next("focus") != "ready" {
	}

	if err := d.Key(ctx, "ctrl+a+b x+y"); err != nil {
		t.Fatalf("Key: %v", err)
	}
	want := []string{
		"press Control_L", "press a", "press b", "release b", "release a", "release Control_L",
		"press x", "press y", "release y", "release x",
	}
	var got []string
	for range want {
		got = append(got, next("key event"))
	}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Fatalf("the app got\n  %s\nwant\n  %s", strings.Join(got, ", "), strings.Join(want, ", "))
	}
}
