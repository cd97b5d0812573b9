package store

import (
	"testing"
	"time"
)

func TestPruneEvents(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	clock := now
	db, err := Open(t.Context(), testDB(t, "acu.db"), Options{Clock: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	mk := func(id string, progress int) {
		t.Helper()
		if _, err := db.CreateRunEvent(ctx, Run{ID: id, Kind: "wait", Status: "running", StartedAt: clock}, Event{RunID: id, Stream: "lifecycle", Data: []byte(`{"phase":"start"}`)}); err != nil {
			t.Fatal(err)
		}
		for range progress {
			if _, err := db.AppendEvent(ctx, Event{RunID: id, Stream: "verdict", Data: []byte(`{}`)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("old", 7000) // more than one batch
	if _, _, err := db.EndRunEvent(ctx, RunEnd{ID: "old", Status: "resolved", EndedAt: now.Add(-48 * time.Hour)}, Event{RunID: "old", Stream: "lifecycle", Data: []byte(`{"phase":"end"}`)}); err != nil {
		t.Fatal(err)
	}
	mk("recent", 3)
	if _, _, err := db.EndRunEvent(ctx, RunEnd{ID: "recent", Status: "resolved", EndedAt: now}, Event{RunID: "recent", Stream: "lifecycle", Data: []byte(`{"phase":"end"}`)}); err != nil {
		t.Fatal(err)
	}
	mk("live", 3)

	n, err := db.PruneEvents(ctx, now.Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if n != 7000 {
		t.Errorf("PruneEvents deleted %d, want 7000", n)
	}
	count := func(run string) (lifecycle, other int) {
		evs, err := db.EventsAfter(ctx, 0, EventFilter{RunID: run, Limit: 10000})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.Stream == "lifecycle" {
				lifecycle++
			} else {
				other++
			}
		}
		return lifecycle, other
	}
	for _, tt := range []struct {
		run             string
		lifecycle, rest int
	}{{"old", 2, 0}, {"recent", 2, 3}, {"live", 1, 3}} {
		if l, o := count(tt.run); l != tt.lifecycle || o != tt.rest {
			t.Errorf("run %s: %d lifecycle and %d other events, want %d and %d", tt.run, l, o, tt.lifecycle, tt.rest)
		}
	}
	if r, err := db.GetRun(ctx, "old"); err != nil || r.Status != "resolved" {
		t.Errorf("pruned run = %+v, %v; want it kept", r, err)
	}
}
