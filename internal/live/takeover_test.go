package live

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/input"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/store"
)

// TestTakeoverLapses: a take-over whose viewer falls silent is handed back
// by itself; its hold leaves the display and its run says why.
func TestTakeoverLapses(t *testing.T) {
	_, dpy := newHub(t)
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "acu.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	reg := runs.New(db, runs.Options{})
	tk := NewTakeovers(TakeoverOptions{Runs: reg, TTL: 300 * time.Millisecond})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = tk.Run(ctx) }()
	defer func() { cancel(); <-done }()

	st, err := tk.Take(t.Context(), dpy, "tester")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tk.Take(t.Context(), dpy, "someone else"); err == nil {
		t.Error("a second taker got a held display")
	}
	c, err := display.Open(t.Context(), dpy, display.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if held, _, _ := input.NewHoldWatch(c).Held(t.Context()); !held {
		t.Error("the display is not held after Take")
	}
	if err := tk.Input(t.Context(), dpy, []api.LiveInput{{Type: "jump"}}); err == nil || !strings.Contains(err.Error(), "events[0]") {
		t.Errorf("a bad event = %v, want an error naming events[0]", err)
	}
	res, err := reg.Wait(t.Context(), st.RunID, 20*time.Second)
	if err != nil || res.Status != runs.StatusCompleted {
		t.Fatalf("take-over run = %+v, %v; want completed after the viewer fell silent", res, err)
	}
	run, _ := reg.Get(t.Context(), st.RunID)
	if !strings.Contains(string(run.Result), "the viewer went away") {
		t.Errorf("run result %s, want the reason", run.Result)
	}
	if held, _, _ := input.NewHoldWatch(c).Held(t.Context()); held {
		t.Error("the display is still held after the lapse")
	}
	if st := tk.State(dpy); st.Active {
		t.Errorf("State = %+v, want inactive", st)
	}
}
