package gate_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"os"
	"os/exec"
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

// TestWaylandHoldSeenByAnotherProcess: a hold set here is seen by a
// HoldWatch in another process (this test binary run again as
// TestHoldWatchProcess, as an agent loop in its own process), and that
// process sees it lift once past its Until, with nothing cleared.
func TestWaylandHoldSeenByAnotherProcess(t *testing.T) {
	waylandtest.Need(t, "sway")
	c := waylandtest.Start(t, 320, 200)
	dpy := c.Socket()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	child := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHoldWatchProcess$", "-test.count=1")
	child.Env = append(os.Environ(), "ACU_TEST_HOLD_WATCH="+dpy)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb strings.Builder
	child.Stderr = &errb
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if l, ok := strings.CutPrefix(sc.Text(), "hold: "); ok {
				lines <- l
			}
		}
		close(lines)
	}()
	defer func() { cancel(); _ = child.Wait() }()
	next := func(what string) string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				_ = child.Wait()
				t.Fatalf("the other process ended before %s: %s", what, errb.String())
			}
			return l
		case <-ctx.Done():
			t.Fatalf("the other process reported no %s", what)
		}
		return ""
	}
	if got := next("its first look"); got != "free" {
		t.Fatalf("the other process first saw %q, want free", got)
	}
	owner := gate.New(gate.Options{})
	defer owner.Close()
	now := time.Now()
	if err := owner.SetHold(ctx, dpy, gate.Hold{By: "a browser (live view)", Since: now, Until: now.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	if got := next("the hold"); !strings.HasPrefix(got, "held taken over by a browser (live view)") {
		t.Fatalf("the other process saw %q, want the hold", got)
	}
	if got := next("the lapse"); got != "free" {
		t.Fatalf("the other process saw %q after the hold's Until, want free", got)
	}
}

// TestHoldWatchProcess is TestWaylandHoldSeenByAnotherProcess's other
// process: with ACU_TEST_HOLD_WATCH set to a display, it watches the
// display's hold through a gate of its own and prints each change ("hold:
// free", "hold: held DETAIL") until the hold has come and gone.
func TestHoldWatchProcess(t *testing.T) {
	dpy := os.Getenv("ACU_TEST_HOLD_WATCH")
	if dpy == "" {
		t.Skip("the other process of TestWaylandHoldSeenByAnotherProcess")
	}
	g := gate.New(gate.Options{})
	defer g.Close()
	w, err := g.HoldWatch(t.Context(), dpy)
	if err != nil {
		t.Fatal(err)
	}
	last, seen := "", false
	for deadline := time.Now().Add(45 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		held, detail, err := w.Held(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		state := "free"
		if held {
			state, seen = "held "+detail, true
		}
		if state != last {
			fmt.Printf("hold: %s\n", state)
			last = state
		}
		if seen && !held {
			return
		}
	}
	t.Fatal("the hold did not come and go")
}
