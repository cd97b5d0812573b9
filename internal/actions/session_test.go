package actions

import (
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/store"
)

// A client's requests on a display go to one live session run, which ends
// (completed, with counts) once the client has been idle.
func TestSessionRunsEndAfterIdle(t *testing.T) {
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "acu.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reg := runs.New(db, runs.Options{})
	var mu sync.Mutex
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := &sessions{runs: reg, idle: time.Minute, now: clock, live: make(map[sessionKey]*session)}

	a, err := s.record(t.Context(), "mcp", ":1", AuditEvent{Client: "mcp", Display: ":1", Ran: 2, OK: true})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := s.record(t.Context(), "mcp", ":1", AuditEvent{Client: "mcp", Display: ":1", Ran: 0, OK: false, Code: "user_active"})
	other, _ := s.record(t.Context(), "cli", ":1", AuditEvent{Client: "cli", Display: ":1", Ran: 1, OK: true})
	if a == "" || a != b || other == a {
		t.Fatalf("session runs %q %q %q: want one per client and display", a, b, other)
	}
	mu.Lock()
	now = now.Add(30 * time.Second)
	mu.Unlock()
	s.record(t.Context(), "cli", ":1", AuditEvent{Client: "cli", Display: ":1", Ran: 1, OK: true})
	mu.Lock()
	now = now.Add(45 * time.Second) // mcp idle 75 s, cli 45 s
	mu.Unlock()
	s.reap(t.Context(), false)
	run, err := reg.Get(t.Context(), a)
	if err != nil || run.Live() || run.Status != runs.StatusCompleted {
		t.Fatalf("idle session = %+v, %v; want completed", run, err)
	}
	var res sessionResult
	if err := json.Unmarshal(run.Result, &res); err != nil || res.Requests != 2 || res.Actions != 2 || res.Failed != 1 {
		t.Errorf("result = %s, want 2 requests, 2 actions, 1 failed", run.Result)
	}
	if run, _ := reg.Get(t.Context(), other); !run.Live() {
		t.Errorf("active client's session ended")
	}
	// The idle client's next request starts a new session.
	c, _ := s.record(t.Context(), "mcp", ":1", AuditEvent{Client: "mcp", Display: ":1", OK: true})
	if c == a || c == "" {
		t.Errorf("new request after idle went to %q, want a new session", c)
	}
	s.reap(t.Context(), true)
	if len(reg.Live()) != 0 {
		t.Errorf("live runs after the final reap: %v", reg.Live())
	}
}
