package gate_test

import (
	"context"
	"image"
	"os/exec"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// TestWaylandUserFirst: on a real headless sway the gate's user-first
// check reads the compositor's idle protocol. acu's own rapid clicks are
// never taken for the user's; after another program types (wtype, the
// user here) an effect is refused as user_active until the user has been
// still for the quiet period.
func TestWaylandUserFirst(t *testing.T) {
	waylandtest.Need(t, "sway")
	waylandtest.Need(t, "wtype")
	c := waylandtest.Start(t, 640, 400)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	dpy := c.Socket()
	const quiet = 700 * time.Millisecond
	var au audits
	g := gate.New(gate.Options{DefaultDisplay: dpy, Audit: au.add, Policy: gate.Policy{PauseOnUser: true, Quiet: quiet}})
	defer g.Close()
	h, err := g.Hands(ctx, dpy)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if _, err := h.ClickAt(ctx, &image.Point{X: 20 + i, Y: 20}, gate.ButtonLeft, 1); err != nil {
			t.Fatalf("acu's own click %d: %v", i, err)
		}
	}

	wtype := exec.CommandContext(ctx, "wtype", "x")
	wtype.Env = append([]string{"PATH=/usr/bin:/bin"}, c.Env()...)
	if out, err := wtype.CombinedOutput(); err != nil {
		t.Fatalf("wtype: %v\n%s", err, out)
	}
	_, err = h.ClickAt(ctx, &image.Point{X: 30, Y: 30}, gate.ButtonLeft, 1)
	r, ok := gate.IsRefused(err)
	if !ok || r.Code != api.CodeUserActive {
		t.Fatalf("a click right after the user typed: %v, want a user_active refusal", err)
	}
	if r.RetryAfter <= 0 || r.RetryAfter > quiet {
		t.Errorf("retry after %s, want within the quiet period %s", r.RetryAfter, quiet)
	}
	// RetryAfter counts from the user's input as the watch recorded it,
	// however late the refusal came.
	time.Sleep(r.RetryAfter + 50*time.Millisecond)
	if _, err := h.ClickAt(ctx, &image.Point{X: 30, Y: 30}, gate.ButtonLeft, 1); err != nil {
		t.Fatalf("a click after the user was still for %s: %v", quiet, err)
	}
}
