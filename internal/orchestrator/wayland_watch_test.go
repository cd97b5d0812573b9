package orchestrator_test

import (
	"context"
	"fmt"
	"image"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/orchestrator"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// TestWaylandUserWatch: on a real headless sway the task engine's watch
// of the user's input reads the gate's user-first record (the
// compositor's idle protocol). acu's own clicks are not the user's; a
// key another program types (wtype, the user here) is, until the next
// Mark. Without the gate's record (ACU_ACT_PAUSE_ON_INPUT off) the watch
// is refused with the setting to change.
func TestWaylandUserWatch(t *testing.T) {
	waylandtest.Need(t, "sway")
	waylandtest.Need(t, "wtype")
	c := waylandtest.Start(t, 640, 400)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	dpy := c.Socket()

	off := gate.New(gate.Options{DefaultDisplay: dpy})
	h, err := off.Hands(ctx, dpy)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := orchestrator.NewUserWatch(ctx, h); err == nil || !strings.Contains(err.Error(), "ACU_ACT_PAUSE_ON_INPUT") {
		t.Errorf("NewUserWatch without the gate's user check: %v, want an error naming ACU_ACT_PAUSE_ON_INPUT", err)
	}
	off.Close()

	g := gate.New(gate.Options{DefaultDisplay: dpy, Policy: gate.Policy{PauseOnUser: true, Quiet: time.Millisecond}})
	defer g.Close()
	if h, err = g.Hands(ctx, dpy); err != nil {
		t.Fatal(err)
	}
	w, err := orchestrator.NewUserWatch(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	foreign := func() (bool, string) {
		t.Helper()
		ok, detail, err := w.Foreign(ctx)
		if err != nil {
			t.Fatalf("Foreign: %v", err)
		}
		return ok, detail
	}
	for i := range 20 {
		if _, err := h.ClickAt(ctx, &image.Point{X: 20 + i, Y: 20}, gate.ButtonLeft, 1); err != nil {
			t.Fatalf("acu's own click %d: %v", i, err)
		}
	}
	if ok, detail := foreign(); ok {
		t.Fatalf("acu's own clicks were taken for the user's input: %s", detail)
	}
	if err := w.Mark(ctx); err != nil {
		t.Fatal(err)
	}
	wtype := exec.CommandContext(ctx, "wtype", "x")
	wtype.Env = append([]string{"PATH=/usr/bin:/bin"}, c.Env()...)
	if out, err := wtype.CombinedOutput(); err != nil {
		t.Fatalf("wtype: %v\n%s", err, out)
	}
	if ok, detail := foreign(); !ok || !strings.Contains(detail, "ago") {
		t.Fatalf("after the user typed: Foreign = %v %q, want the user's input", ok, detail)
	}
	if err := w.Mark(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, detail := foreign(); ok {
		t.Errorf("after Mark: Foreign = %v %q, want no input since", ok, detail)
	}
}

// TestWaylandWindowArrangerSplit: on a real headless sway the split
// screen puts two native windows' client areas on the left and right
// halves of the output, through the gate's window operations (sway may
// shorten them to keep their title bars on the output).
func TestWaylandWindowArrangerSplit(t *testing.T) {
	waylandtest.Need(t, "sway")
	c := waylandtest.Start(t, 800, 600)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	dpy := c.Socket()
	g := gate.New(gate.Options{DefaultDisplay: dpy})
	defer g.Close()
	waylandtest.Client(t, c, "foot", "--title=Left Notes")
	waylandtest.Client(t, c, "foot", "--title=Right Sheet")
	for deadline := time.Now().Add(30 * time.Second); ; {
		l, err := g.Windows(ctx, dpy)
		if err == nil && len(l.Windows) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the two terminals never showed: %+v, %v", l, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	a, err := orchestrator.NewWindowArranger(ctx, g, dpy)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Arrange(ctx, [2]string{"left notes", "sheet"}); err != nil {
		t.Fatal(err)
	}
	// sway applies a resize when the client has drawn at the new size,
	// which a loaded machine can put after the window operation's answer:
	// the layout is read until it holds, or for 10 s.
	want := map[string]image.Rectangle{"Left Notes": image.Rect(0, 0, 400, 600), "Right Sheet": image.Rect(400, 0, 800, 600)}
	var bad []string
	for deadline := time.Now().Add(10 * time.Second); ; {
		l, err := g.Windows(ctx, dpy)
		if err != nil {
			t.Fatal(err)
		}
		bad = bad[:0]
		found := 0
		for _, w := range l.Windows {
			r, ok := want[w.Title]
			if !ok {
				continue
			}
			found++
			// sway keeps a floating window's title bar on the output, so
			// the client area loses its height: the halves are exact,
			// the height is the output's less at most a title bar.
			got := image.Rect(w.X, w.Y, w.X+w.W, w.Y+w.H)
			if got.Min.X != r.Min.X || got.Max.X != r.Max.X || !got.In(r) || got.Dy() < r.Dy()-40 {
				bad = append(bad, fmt.Sprintf("%s at %v, want %v (less at most a title bar's height)", w.Title, got, r))
			}
		}
		if found != len(want) {
			bad = append(bad, fmt.Sprintf("found %d of the windows %v", found, want))
		}
		if len(bad) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, b := range bad {
		t.Error(b)
	}
	if err := a.Arrange(ctx, [2]string{"left notes", "no such window"}); err == nil || !strings.Contains(err.Error(), "no such window") {
		t.Errorf("Arrange with a missing window = %v, want an error naming it", err)
	}
}
