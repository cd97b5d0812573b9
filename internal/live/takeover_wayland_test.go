package live

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/store"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// TestTakeoverLapsesOnWayland: on a headless sway, a take-over writes the
// hold beside the compositor's socket, where another gate's HoldWatch
// sees it; renewed while its viewer is there, it is handed back by itself
// once the viewer falls silent, and the hold is gone.
func TestTakeoverLapsesOnWayland(t *testing.T) {
	waylandtest.Need(t, "sway")
	c := waylandtest.Start(t, 320, 200)
	dpy := c.Socket()
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "acu.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	reg := runs.New(db, runs.Options{})
	const ttl = 2 * time.Second
	tk := NewTakeovers(TakeoverOptions{Runs: reg, TTL: ttl})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = tk.Run(ctx) }()
	defer func() { cancel(); <-done }()
	other := gate.New(gate.Options{})
	defer other.Close()
	hw, err := other.HoldWatch(t.Context(), dpy)
	if err != nil {
		t.Fatal(err)
	}

	st, err := tk.Take(t.Context(), dpy, "tester")
	if err != nil {
		t.Fatal(err)
	}
	if held, detail, err := hw.Held(t.Context()); err != nil || !held || !strings.Contains(detail, "tester") {
		t.Fatalf("Held after Take = %v, %q, %v; want held by tester", held, detail, err)
	}
	// The viewer renews it for longer than the hold was first written to
	// last: Run renews the hold meanwhile.
	for end := time.Now().Add(2 * ttl); time.Now().Before(end); time.Sleep(ttl / 8) {
		if err := tk.Renew(dpy); err != nil {
			t.Fatalf("Renew: %v", err)
		}
	}
	if held, _, err := hw.Held(t.Context()); err != nil || !held {
		t.Fatalf("Held while the viewer renews = %v, %v; want held", held, err)
	}
	res, err := reg.Wait(t.Context(), st.RunID, 20*time.Second)
	if err != nil || res.Status != runs.StatusCompleted {
		t.Fatalf("take-over run = %+v, %v; want completed after the viewer fell silent", res, err)
	}
	run, _ := reg.Get(t.Context(), st.RunID)
	if !strings.Contains(string(run.Result), "the viewer went away") {
		t.Errorf("run result %s, want the reason", run.Result)
	}
	if held, _, err := hw.Held(t.Context()); err != nil || held {
		t.Errorf("Held after the lapse = %v, %v; want false", held, err)
	}
	if _, err := os.Stat(gate.HoldFile(dpy)); !os.IsNotExist(err) {
		t.Errorf("the hold file after the lapse: %v, want none", err)
	}
}
