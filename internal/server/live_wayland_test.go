package server_test

import (
	"context"
	"image"
	"math"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/guard/guardtest"
	wlframes "github.com/acu-dev/acu/internal/wayland/frames"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// gtkInputLog is an undecorated GTK 3 window (python3-gi) that prints
// "ready" once mapped, "enter" the first time the pointer enters it, then
// each button press and release with its position in the window, and each
// key press's keysym name.
const gtkInputLog = `
import gi
gi.require_version("Gtk", "3.0")
from gi.repository import Gtk, Gdk
win = Gtk.Window(title="acu-input")
win.set_decorated(False)
win.add_events(Gdk.EventMask.BUTTON_PRESS_MASK | Gdk.EventMask.BUTTON_RELEASE_MASK | Gdk.EventMask.ENTER_NOTIFY_MASK)
entered = []
def enter(_, ev):
    if not entered:
        entered.append(True)
        print("enter", flush=True)
    return False
win.connect("enter-notify-event", enter)
def button(kind):
    def f(_, ev):
        print("%s %d %d %d" % (kind, int(ev.x), int(ev.y), ev.button), flush=True)
        return True
    return f
win.connect("button-press-event", button("press"))
win.connect("button-release-event", button("release"))
win.connect("key-press-event", lambda _, ev: print("key %s" % Gdk.keyval_name(ev.keyval), flush=True) or True)
win.connect("map-event", lambda *a: print("ready", flush=True))
win.connect("destroy", Gtk.main_quit)
win.show_all()
Gtk.main()
`

// TestLiveTakeoverOnWayland: the live page in real Chromium, on a
// headless sway's display: taking over writes the hold another gate (an
// agent loop's) sees, a click in the page reaches a native GTK window at
// the pixel under the page's pointer, keys typed in the page reach it in
// order, and the hand-back lifts the hold and ends the run.
func TestLiveTakeoverOnWayland(t *testing.T) {
	waylandtest.NeedGTK(t)
	c := waylandtest.Start(t, 480, 300)
	sock := c.Socket()
	hub := wlframes.New(wlframes.Options{})
	t.Cleanup(func() { hub.Close() })
	f := serveLive(t, sock, hub, nil)

	// The GTK window, full screen (sway tiles it), focused.
	actx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	app := waylandtest.StartGTK(t, c, gtkInputLog)
	for app.Next(t, "its mapping") != "ready" {
	}
	// Where sway put it: its client area's origin (sway gives it the
	// keyboard focus once a keyboard exists, here the take-over's), read
	// again just before the click.
	origin := func() image.Point { return waylandtest.Window(actx, t, c, "acu-input", nil).Content.Min }
	origin()

	// Another gate, as an agent loop in another process has: it sees no
	// hold yet.
	other := gate.New(gate.Options{})
	defer other.Close()
	hw, err := other.HoldWatch(t.Context(), sock)
	if err != nil {
		t.Fatal(err)
	}
	if held, _, err := hw.Held(t.Context()); err != nil || held {
		t.Fatalf("Held before the take-over = %v, %v", held, err)
	}

	ctx := f.open(t, "/ui/?display="+url.QueryEscape(sock), 1400, 900)
	guardtest.Poll(t, ctx, "the live stream", `document.body.dataset.state === "live" && window.acuLive.frames > 0`)
	if err := chromedp.Do(ctx, chromedp.Click("#takeover")); err != nil {
		t.Fatal(err)
	}
	guardtest.Poll(t, ctx, "the take-over", `document.body.dataset.takeover === "on"`)
	st, err := f.c.Takeover(t.Context(), sock)
	if err != nil || !st.Active || st.RunID == "" {
		t.Fatalf("takeover state = %+v, %v; want active with a run", st, err)
	}
	if held, detail, err := hw.Held(t.Context()); err != nil || !held || !strings.Contains(detail, "live view") {
		t.Fatalf("another gate's HoldWatch during the take-over = %v, %q, %v; want held by the live view", held, detail, err)
	}

	// A click at window pixel (123, 45), at whole page coordinates (a
	// mouse event's may be whole numbers) inside the screen pixel's
	// square on the page, which spans at least 2 page pixels.
	if s := eval[float64](t, ctx, `document.getElementById("screen").getBoundingClientRect().height / window.acuLive.screenH`); s < 2 {
		t.Fatalf("the page shows the screen at scale %.2f, want at least 2 (a bigger browser window)", s)
	}
	o := origin()
	x, y := pagePoint(t, ctx, o.X+123, o.Y+45)
	x, y = math.Floor(x), math.Floor(y)
	// The pointer enters the window first, as a person's does: the
	// take-over's first event makes its virtual pointer, the seat's first
	// (a headless sway has no mouse), and a press sent before GTK has
	// bound the seat's new pointer is lost to it.
	if err := chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y)); err != nil {
		t.Fatal(err)
	}
	if l := app.Next(t, "the pointer's entry"); l != "enter" {
		t.Fatalf("the GTK window printed %q, want the pointer's entry", l)
	}
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(x, y)); err != nil {
		t.Fatal(err)
	}
	if got, want := app.Next(t, "the press")+", "+app.Next(t, "the release"), "press 123 45 1, release 123 45 1"; got != want {
		t.Errorf("the GTK window got %q, want %q", got, want)
	}
	// Keys typed in the page, in order.
	if err := chromedp.Do(ctx, chromedp.KeyEvent("hi there"), chromedp.KeyEvent("\r")); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for range 9 {
		keys = append(keys, strings.TrimPrefix(app.Next(t, "a key"), "key "))
	}
	if got, want := strings.Join(keys, " "), "h i space t h e r e Return"; got != want {
		t.Errorf("the GTK window got keys %q, want %q", got, want)
	}

	f.handBack(t, ctx, st.RunID)
	if held, _, err := hw.Held(t.Context()); err != nil || held {
		t.Errorf("Held after the hand-back = %v, %v; want false", held, err)
	}
	run, _ := f.reg.Get(t.Context(), st.RunID)
	if strings.Contains(string(run.Result), `"inputs":0`) || !strings.Contains(string(run.Result), `"inputs":`) {
		t.Errorf("take-over run result %s, want the human's inputs counted", run.Result)
	}
}
