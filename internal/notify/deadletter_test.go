package notify

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/pgtest"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/acu-dev/acu/internal/store"
)

func deadCount(t *testing.T, reg *prometheus.Registry, notifier string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "acu_notify_dead_letters_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "notifier" && l.GetValue() == notifier {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// A notification exec can never deliver is given up on: after MaxAttempts
// failures, or at once when the message holds a NUL. The row is set aside
// (never due again), an event lands on its (ended) run, and the dead-letter
// metric counts it.
func TestDispatcherDeadLetters(t *testing.T) {
	for _, tc := range []struct {
		name         string
		command      string
		message      string
		wantAttempts int
		wantErr      string
	}{
		{"too many attempts", `sh -c 'echo refused >&2; exit 3' sh {message}`, "m", 3, "refused"},
		{"NUL in the message", `sh -c 'exit 0' sh {message}`, "done\x00rm -rf ~", 1, "NUL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			db := openStore(t, pgtest.Path(t, "acu.db"))
			now := time.Now()
			if err := db.CreateRun(ctx, store.Run{ID: "wait_d", Kind: "wait", Status: "watching", StartedAt: now}); err != nil {
				t.Fatal(err)
			}
			if err := db.EndRun(ctx, "wait_d", "resolved", "", nil, now); err != nil {
				t.Fatal(err)
			}
			ex, err := NewExec(ExecOptions{Command: tc.command})
			if err != nil {
				t.Fatal(err)
			}
			reg := prometheus.NewRegistry()
			d, err := NewDispatcher(db, DispatcherOptions{Notifiers: []Notifier{ex}, Backoff: fastBackoff, MaxAttempts: 3, Registerer: reg})
			if err != nil {
				t.Fatal(err)
			}
			startDispatcher(t, d)
			if err := d.Notify(ctx, Notification{Key: "wait_d:resolved", RunID: "wait_d", Event: "resolved", Message: tc.message}); err != nil {
				t.Fatal(err)
			}
			var it store.OutboxItem
			waitFor(t, "the dead letter", func() bool {
				it = outboxByKey(t, db, "wait_d", "wait_d:resolved:exec")
				return it.Dead()
			})
			if it.Attempts != tc.wantAttempts || it.Delivered() || !strings.Contains(it.LastError, tc.wantErr) {
				t.Errorf("row = %d attempts, delivered %v, error %q; want %d attempts, undelivered, error containing %q",
					it.Attempts, it.Delivered(), it.LastError, tc.wantAttempts, tc.wantErr)
			}
			if n := len(attemptsOf(t, db, it.ID)); n != tc.wantAttempts {
				t.Errorf("recorded attempts = %d, want %d", n, tc.wantAttempts)
			}
			due, err := db.DueOutbox(ctx, time.Now().Add(time.Hour), 10)
			if err != nil || len(due) != 0 {
				t.Errorf("DueOutbox = %v, %v; want nothing due", due, err)
			}
			evs, err := db.EventsAfter(ctx, 0, store.EventFilter{RunID: "wait_d", Streams: []string{store.StreamDeadLetter}})
			if err != nil || len(evs) != 1 {
				t.Fatalf("dead-letter events = %v, %v; want 1", evs, err)
			}
			var ev struct {
				Notifier string `json:"notifier"`
				Attempts int    `json:"attempts"`
				Error    string `json:"error"`
			}
			if err := json.Unmarshal(evs[0].Data, &ev); err != nil || ev.Notifier != "exec" || ev.Attempts != tc.wantAttempts || ev.Error != it.LastError {
				t.Errorf("event = %s (%v), want notifier exec, %d attempts, the last error", evs[0].Data, err, tc.wantAttempts)
			}
			if n := deadCount(t, reg, "exec"); n != 1 {
				t.Errorf("acu_notify_dead_letters_total{notifier=exec} = %v, want 1", n)
			}
			dead, total, err := db.DeadLetters(context.Background(), 10)
			if err != nil || total != 1 || len(dead) != 1 || dead[0].ID != it.ID {
				t.Errorf("DeadLetters = %v, %d, %v; want the row", dead, total, err)
			}
		})
	}
}
