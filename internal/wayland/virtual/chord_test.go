package virtual_test

import (
	"strings"
	"testing"

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
	c := waylandtest.Start(t, 640, 400)
	d := open(t, c)
	app := waylandtest.StartGTK(t, c, keyLog)
	for app.Next(t, "focus") != "ready" {
	}

	if err := d.Key(t.Context(), "ctrl+a+b x+y"); err != nil {
		t.Fatalf("Key: %v", err)
	}
	want := []string{
		"press Control_L", "press a", "press b", "release b", "release a", "release Control_L",
		"press x", "press y", "release y", "release x",
	}
	var got []string
	for range want {
		got = append(got, app.Next(t, "key event"))
	}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Fatalf("the app got\n  %s\nwant\n  %s", strings.Join(got, ", "), strings.Join(want, ", "))
	}
}
