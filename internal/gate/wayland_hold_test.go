package gate_test

import (
	"encoding/json"
	"image"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// TestWaylandHold: on a real headless sway, a take-over's hold one gate
// sets (the live view's) is seen by another gate's HoldWatch (an agent
// loop's, in its own process) and refuses that gate's effects as the
// user's, the human's own input excepted; a hold whose owner stopped
// renewing it counts for nothing once past its Until, and a cleared one
// is gone.
func TestWaylandHold(t *testing.T) {
	waylandtest.Need(t, "sway")
	c := waylandtest.Start(t, 640, 400)
	ctx := t.Context()
	dpy := c.Socket()
	owner := gate.New(gate.Options{})
	defer owner.Close()
	other := gate.New(gate.Options{Policy: gate.Policy{PauseOnUser: true, Quiet: time.Millisecond}})
	defer other.Close()
	w, err := other.HoldWatch(ctx, dpy)
	if err != nil {
		t.Fatal(err)
	}
	h, err := other.Hands(ctx, dpy)
	if err != nil {
		t.Fatal(err)
	}
	click := func(ctx0 bool) error {
		cx := ctx
		if ctx0 {
			cx = gate.WithCaller(ctx, gate.Caller{Engine: "takeover", User: true})
		}
		_, err := h.ClickAt(cx, &image.Point{X: 10, Y: 10}, gate.ButtonLeft, 1)
		return err
	}
	if held, _, err := w.Held(ctx); err != nil || held {
		t.Fatalf("Held before any hold = %v, %v; want false", held, err)
	}

	const ttl = 1500 * time.Millisecond
	now := time.Now()
	until := now.Add(ttl)
	if err := owner.SetHold(ctx, dpy, gate.Hold{By: "a browser (live view)", Since: now, Until: until}); err != nil {
		t.Fatalf("SetHold: %v", err)
	}
	held, detail, err := w.Held(ctx)
	if err != nil || !held || !strings.Contains(detail, "a browser (live view)") {
		t.Fatalf("Held after SetHold = %v, %q, %v; want held by the browser", held, detail, err)
	}
	// The record beside the compositor's socket, readable by every acu
	// process that reaches the socket.
	file := gate.HoldFile(dpy)
	st, err := os.Stat(file)
	if err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("the hold file %s: %v, %v; want mode 0644", file, st, err)
	}
	b, _ := os.ReadFile(file)
	var rec gate.Hold
	if err := json.Unmarshal(b, &rec); err != nil || rec.By != "a browser (live view)" || !rec.Until.Equal(until) {
		t.Fatalf("the hold file holds %s (%v), want the hold", b, err)
	}
	err = click(false)
	if r, ok := gate.IsRefused(err); !ok || r.Code != api.CodeUserActive || !strings.Contains(r.Message, "taken this display over") {
		t.Fatalf("acu's click while held = %v, want a user_active refusal naming the take-over", err)
	}
	if err := click(true); err != nil {
		t.Fatalf("the human's click at the take-over while held: %v", err)
	}

	// The owner stops renewing: past Until the hold counts for nothing,
	// though its file is still there.
	time.Sleep(time.Until(until) + 50*time.Millisecond)
	if held, _, err := w.Held(ctx); err != nil || held {
		t.Fatalf("Held past Until = %v, %v; want false", held, err)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("the lapsed hold's file: %v, want it still there", err)
	}
	if err := click(false); err != nil {
		t.Fatalf("acu's click after the hold lapsed: %v", err)
	}

	// Renewed, then cleared.
	now = time.Now()
	if err := owner.SetHold(ctx, dpy, gate.Hold{By: "tester", Since: now, Until: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if held, detail, err := w.Held(ctx); err != nil || !held || !strings.Contains(detail, "tester") {
		t.Fatalf("Held after a renewal = %v, %q, %v; want held by tester", held, detail, err)
	}
	if err := owner.ClearHold(ctx, dpy); err != nil {
		t.Fatal(err)
	}
	if held, _, err := w.Held(ctx); err != nil || held {
		t.Fatalf("Held after ClearHold = %v, %v; want false", held, err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the hold file after ClearHold: %v, want none", err)
	}
	if err := owner.ClearHold(ctx, dpy); err != nil {
		t.Errorf("ClearHold without a hold: %v", err)
	}
}
