package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acu-dev/acu/internal/pgtest"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func openAt(t testing.TB, path string, c *clock) *DB {
	t.Helper()
	opts := Options{}
	if c != nil {
		opts.Clock = c.Now
	}
	db, err := Open(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Open(%s) = %v", path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func openTest(t testing.TB) (*DB, *clock) {
	t.Helper()
	c := newClock()
	return openAt(t, testDB(t, "state/acu.db"), c), c
}

// onPostgres is set (ACU_TEST_ENGINE=postgres, as scripts/test.sh runs this
// package a second time) to run the tests on a real PostgreSQL server.
var onPostgres = os.Getenv("ACU_TEST_ENGINE") == "postgres"

// testDB returns where a test's database lives: a file under a temporary
// directory (name inside it), or a fresh PostgreSQL database.
func testDB(t testing.TB, name string) string {
	t.Helper()
	if onPostgres {
		return pgtest.DSN(t)
	}
	return filepath.Join(t.TempDir(), name)
}

// sqliteOnly skips a test of the SQLite file itself on PostgreSQL.
func sqliteOnly(t testing.TB) {
	t.Helper()
	if onPostgres {
		t.Skip("tests the SQLite file; PostgreSQL keeps its own")
	}
}

func mustCreate(t testing.TB, db *DB, r Run) {
	t.Helper()
	if err := db.CreateRun(context.Background(), r); err != nil {
		t.Fatalf("CreateRun(%s) = %v", r.ID, err)
	}
}

func TestOpenPragmasAndMigrations(t *testing.T) {
	sqliteOnly(t)
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "a", "b", "acu.db")
	db := openAt(t, path, nil)
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("database directory mode = %v, %v, want 0700", fi.Mode().Perm(), err)
	}
	for _, name := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(name); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode = %v, %v, want 0600", filepath.Base(name), fi.Mode().Perm(), err)
		}
	}

	for _, c := range []struct {
		pragma string
		want   string
	}{
		{"journal_mode", "wal"},
		{"foreign_keys", "1"},
		{"synchronous", "1"},
		{"busy_timeout", "5000"},
	} {
		var got string
		if err := db.w.QueryRowContext(ctx, "PRAGMA "+c.pragma).Scan(&got); err != nil {
			t.Fatalf("PRAGMA %s on writer: %v", c.pragma, err)
		}
		if got != c.want {
			t.Errorf("writer PRAGMA %s = %q, want %q", c.pragma, got, c.want)
		}
		if err := db.r.QueryRowContext(ctx, "PRAGMA "+c.pragma).Scan(&got); err != nil {
			t.Fatalf("PRAGMA %s on reader: %v", c.pragma, err)
		}
		if got != c.want {
			t.Errorf("reader PRAGMA %s = %q, want %q", c.pragma, got, c.want)
		}
	}
	if _, err := db.r.ExecContext(ctx, `INSERT INTO tasks (id, created_at) VALUES ('x', 1)`); err == nil {
		t.Error("write through the read pool succeeded, want query_only refusal")
	}

	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	want := ms[len(ms)-1].version
	check := func(db *DB) {
		t.Helper()
		v, err := db.SchemaVersion(ctx)
		if err != nil || v != want {
			t.Fatalf("SchemaVersion() = %d, %v, want %d", v, err, want)
		}
		var n int
		if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(ms) {
			t.Fatalf("schema_migrations rows = %d, %v, want %d", n, err, len(ms))
		}
	}
	check(db)
	mustCreate(t, db, Run{ID: "r1", Kind: "wait", Status: "running"})
	if err := db.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	for range 2 {
		db2 := openAt(t, path, nil)
		check(db2)
		if _, err := db2.GetRun(ctx, "r1"); err != nil {
			t.Fatalf("GetRun after reopen = %v", err)
		}
		db2.Close()
	}
}

func TestConcurrentOpenOfNewFile(t *testing.T) {
	path := testDB(t, "acu.db")
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			db, err := Open(t.Context(), path, Options{})
			if err == nil {
				err = db.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open #%d = %v", i, err)
		}
	}
}

func TestOpenEmptyPath(t *testing.T) {
	if _, err := Open(t.Context(), "", Options{}); err == nil {
		t.Fatal(`Open("") = nil error, want one`)
	}
}

func TestRunLifecycle(t *testing.T) {
	ctx := t.Context()
	db, clk := openTest(t)
	start := clk.Now()
	spec := json.RawMessage(`{"criteria":"x","deadline":"2026-01-02T03:09:05Z"}`)
	mustCreate(t, db, Run{ID: "wait_1", Kind: "wait", SessionKey: "s", TaskID: "t", Status: "running", Spec: spec})

	if err := db.CreateRun(ctx, Run{ID: "wait_1", Kind: "wait", Status: "running"}); !errors.Is(err, ErrExists) {
		t.Errorf("CreateRun(duplicate) = %v, want ErrExists", err)
	}
	if err := db.CreateRun(ctx, Run{ID: "bad", Kind: "wait", Status: "running", Spec: json.RawMessage(`{`)}); err == nil {
		t.Error("CreateRun(invalid spec JSON) = nil, want error")
	}
	if _, err := db.GetRun(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetRun(unknown) = %v, want ErrNotFound", err)
	}

	got, err := db.GetRun(ctx, "wait_1")
	if err != nil {
		t.Fatal(err)
	}
	want := Run{ID: "wait_1", Kind: "wait", SessionKey: "s", TaskID: "t", Status: "running", StartedAt: start, Spec: spec, UpdatedAt: start}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GetRun() mismatch (-want +got):\n%s", diff)
	}
	if !got.Live() {
		t.Error("new run not live")
	}

	clk.Advance(time.Second)
	spec2 := json.RawMessage(`{"criteria":"y"}`)
	if err := db.UpdateRunSpec(ctx, "wait_1", spec2); err != nil {
		t.Fatalf("UpdateRunSpec() = %v", err)
	}
	clk.Advance(time.Second)
	end := clk.Now()
	run, ev, err := db.EndRunEvent(ctx, RunEnd{ID: "wait_1", Status: "resolved", Result: json.RawMessage(`{"evidence":"e"}`)},
		Event{Stream: "lifecycle", Data: json.RawMessage(`{"phase":"end"}`)})
	if err != nil {
		t.Fatalf("EndRunEvent() = %v", err)
	}
	want.Status, want.EndedAt, want.Spec, want.Result, want.UpdatedAt = "resolved", end, spec2, json.RawMessage(`{"evidence":"e"}`), end
	if diff := cmp.Diff(want, run); diff != "" {
		t.Errorf("EndRunEvent() run mismatch (-want +got):\n%s", diff)
	}
	if ev.Seq != 1 || ev.Cursor == 0 || ev.RunID != "wait_1" {
		t.Errorf("EndRunEvent() event = %+v, want seq 1, a cursor, run wait_1", ev)
	}
	if got, _ := db.GetRun(ctx, "wait_1"); !cmp.Equal(got, run) {
		t.Errorf("GetRun after end = %+v, want %+v", got, run)
	}

	if _, _, err := db.EndRunEvent(ctx, RunEnd{ID: "wait_1", Status: "timeout"}, Event{Stream: "lifecycle"}); !errors.Is(err, ErrEnded) {
		t.Errorf("second EndRunEvent() = %v, want ErrEnded", err)
	}
	if err := db.EndRun(ctx, "wait_1", "error", "x", nil, time.Time{}); !errors.Is(err, ErrEnded) {
		t.Errorf("EndRun(ended) = %v, want ErrEnded", err)
	}
	if err := db.EndRun(ctx, "nope", "error", "x", nil, time.Time{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("EndRun(unknown) = %v, want ErrNotFound", err)
	}
	if err := db.UpdateRunSpec(ctx, "wait_1", spec); !errors.Is(err, ErrEnded) {
		t.Errorf("UpdateRunSpec(ended) = %v, want ErrEnded", err)
	}
	if _, err := db.AppendEvent(ctx, Event{RunID: "wait_1", Stream: "verdict"}); !errors.Is(err, ErrEnded) {
		t.Errorf("AppendEvent(ended run) = %v, want ErrEnded", err)
	}
	if _, err := db.AppendEvent(ctx, Event{RunID: "nope", Stream: "verdict"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("AppendEvent(unknown run) = %v, want ErrNotFound", err)
	}
	evs, err := db.EventsAfter(ctx, 0, EventFilter{RunID: "wait_1"})
	if err != nil || len(evs) != 1 {
		t.Errorf("EventsAfter(wait_1) = %d events, %v; want only the final one", len(evs), err)
	}

	// An explicit end time is kept.
	mustCreate(t, db, Run{ID: "r2", Kind: "agent", Status: "running"})
	at := time.Date(2025, 5, 5, 5, 5, 5, 5_000_000, time.UTC)
	if err := db.EndRun(ctx, "r2", "completed", "", nil, at); err != nil {
		t.Fatal(err)
	}
	if r, _ := db.GetRun(ctx, "r2"); !r.EndedAt.Equal(at) {
		t.Errorf("EndedAt = %v, want %v", r.EndedAt, at)
	}
}

func TestListRunsPagingAndFilters(t *testing.T) {
	ctx := t.Context()
	db, clk := openTest(t)
	var all []string // newest first
	for i := range 25 {
		kind := []string{"wait", "agent"}[i%2]
		task := ""
		if i%5 == 0 {
			task = "task1"
		}
		id := fmt.Sprintf("r%02d", i)
		mustCreate(t, db, Run{ID: id, Kind: kind, TaskID: task, Status: "running"})
		if i%3 == 0 { // several runs share a start time
			clk.Advance(time.Millisecond)
		}
		all = append([]string{id}, all...)
	}
	for i := 0; i < 25; i += 4 {
		if err := db.EndRun(ctx, fmt.Sprintf("r%02d", i), "resolved", "", nil, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}

	var paged []string
	before := ""
	for {
		page, err := db.ListRuns(ctx, RunFilter{Limit: 7, Before: before})
		if err != nil {
			t.Fatalf("ListRuns(before %q) = %v", before, err)
		}
		for _, r := range page {
			paged = append(paged, r.ID)
		}
		if len(page) < 7 {
			break
		}
		before = page[len(page)-1].ID
	}
	if diff := cmp.Diff(all, paged); diff != "" {
		t.Errorf("paged ListRuns mismatch (-want +got):\n%s", diff)
	}

	yes, no := true, false
	for _, tc := range []struct {
		name string
		f    RunFilter
		want func(i int) bool
	}{
		{"kind", RunFilter{Kind: "agent"}, func(i int) bool { return i%2 == 1 }},
		{"task", RunFilter{TaskID: "task1"}, func(i int) bool { return i%5 == 0 }},
		{"status", RunFilter{Status: "resolved"}, func(i int) bool { return i%4 == 0 }},
		{"live", RunFilter{Live: &yes}, func(i int) bool { return i%4 != 0 }},
		{"ended", RunFilter{Live: &no}, func(i int) bool { return i%4 == 0 }},
		{"ended wait", RunFilter{Live: &no, Kind: "wait"}, func(i int) bool { return i%4 == 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := db.ListRuns(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			var ids, want []string
			for _, r := range got {
				ids = append(ids, r.ID)
			}
			for i := 24; i >= 0; i-- {
				if tc.want(i) {
					want = append(want, fmt.Sprintf("r%02d", i))
				}
			}
			if diff := cmp.Diff(want, ids); diff != "" {
				t.Errorf("ListRuns(%+v) mismatch (-want +got):\n%s", tc.f, diff)
			}
		})
	}
	if _, err := db.ListRuns(ctx, RunFilter{Before: "nope"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("ListRuns(before unknown) = %v, want ErrNotFound", err)
	}
	live, err := db.LiveRuns(ctx)
	if err != nil || len(live) != 18 {
		t.Errorf("LiveRuns() = %d runs, %v, want 18", len(live), err)
	}
}

func TestAppendEventConcurrentWriters(t *testing.T) {
	ctx := t.Context()
	db, _ := openTest(t)
	runs := []string{"a", "b", "c"}
	for _, id := range runs {
		mustCreate(t, db, Run{ID: id, Kind: "wait", Status: "running"})
	}
	const writers, each = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				run := runs[(w+i)%len(runs)]
				if _, err := db.AppendEvent(ctx, Event{RunID: run, Stream: "verdict", Data: json.RawMessage(fmt.Sprintf(`{"w":%d,"i":%d}`, w, i))}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("AppendEvent = %v", err)
	}
	evs, err := db.EventsAfter(ctx, 0, EventFilter{Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != writers*each {
		t.Fatalf("stored %d events, want %d", len(evs), writers*each)
	}
	lastSeq := map[string]int64{}
	var lastCursor int64
	for _, ev := range evs {
		if ev.Cursor <= lastCursor {
			t.Fatalf("cursor %d after %d: not strictly increasing", ev.Cursor, lastCursor)
		}
		lastCursor = ev.Cursor
		if ev.Seq != lastSeq[ev.RunID]+1 {
			t.Fatalf("run %s: seq %d after %d, want consecutive", ev.RunID, ev.Seq, lastSeq[ev.RunID])
		}
		lastSeq[ev.RunID] = ev.Seq
	}
	if c, err := db.LastCursor(ctx); err != nil || c != lastCursor {
		t.Errorf("LastCursor() = %d, %v, want %d", c, err, lastCursor)
	}
}

func TestEventsAfterFilters(t *testing.T) {
	ctx := t.Context()
	db, _ := openTest(t)
	if c, err := db.LastCursor(ctx); err != nil || c != 0 {
		t.Errorf("LastCursor(empty) = %d, %v, want 0", c, err)
	}
	mustCreate(t, db, Run{ID: "a", Kind: "wait", Status: "running"})
	mustCreate(t, db, Run{ID: "b", Kind: "wait", Status: "running"})
	streams := []string{"verdict", "log", "turn"}
	for i := range 12 {
		run := []string{"a", "b"}[i%2]
		if _, err := db.AppendEvent(ctx, Event{RunID: run, Stream: streams[i%3]}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.AppendEvent(ctx, Event{RunID: "a", Stream: "x", Data: json.RawMessage(`nope`)}); err == nil {
		t.Error("AppendEvent(invalid JSON) = nil, want error")
	}
	count := func(after int64, f EventFilter) (int, int64) {
		t.Helper()
		evs, err := db.EventsAfter(ctx, after, f)
		if err != nil {
			t.Fatal(err)
		}
		var last int64
		for _, ev := range evs {
			if (f.RunID != "" && ev.RunID != f.RunID) || ev.Cursor <= after {
				t.Fatalf("EventsAfter(%d, %+v) returned %+v", after, f, ev)
			}
			last = ev.Cursor
		}
		return len(evs), last
	}
	for _, tc := range []struct {
		name  string
		after int64
		f     EventFilter
		want  int
	}{
		{"all", 0, EventFilter{}, 12},
		{"after 5", 5, EventFilter{}, 7},
		{"run", 0, EventFilter{RunID: "a"}, 6},
		{"streams", 0, EventFilter{Streams: []string{"verdict", "turn"}}, 8},
		{"run and stream", 0, EventFilter{RunID: "b", Streams: []string{"log"}}, 2},
		{"limit", 0, EventFilter{Limit: 5}, 5},
		{"past the end", 12, EventFilter{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if n, _ := count(tc.after, tc.f); n != tc.want {
				t.Errorf("EventsAfter(%d, %+v) = %d events, want %d", tc.after, tc.f, n, tc.want)
			}
		})
	}
}

func TestReopenKeepsEverything(t *testing.T) {
	ctx := t.Context()
	path := testDB(t, "acu.db")
	clk := newClock()
	db := openAt(t, path, clk)
	mustCreate(t, db, Run{ID: "r", Kind: "wait", Status: "running", Spec: json.RawMessage(`{"a":1}`)})
	var want []Event
	for i := range 5 {
		ev, err := db.AppendEvent(ctx, Event{RunID: "r", Stream: "verdict", Data: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, ev)
	}
	if err := db.AppendTaskProgress(ctx, "t1", "r", "started"); err != nil {
		t.Fatal(err)
	}
	oid, _, err := db.Enqueue(ctx, OutboxItem{Key: "k", Notifier: "exec", RunID: "r", Message: "m"})
	if err != nil {
		t.Fatal(err)
	}
	wantRun, _ := db.GetRun(ctx, "r")
	wantItem, _ := db.GetOutbox(ctx, oid)
	// No Close: a crashed process never closes. A second handle must see all
	// acknowledged writes (the WAL is read on open).
	db2 := openAt(t, path, clk)
	got, err := db2.EventsAfter(ctx, 0, EventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events after reopen (-want +got):\n%s", diff)
	}
	if r, err := db2.GetRun(ctx, "r"); err != nil || !cmp.Equal(r, wantRun) {
		t.Errorf("GetRun after reopen = %+v, %v, want %+v", r, err, wantRun)
	}
	if p, err := db2.TaskProgress(ctx, "t1"); err != nil || len(p) != 1 || p[0].Message != "started" {
		t.Errorf("TaskProgress after reopen = %+v, %v", p, err)
	}
	if it, err := db2.GetOutbox(ctx, oid); err != nil || !cmp.Equal(it, wantItem) {
		t.Errorf("GetOutbox after reopen = %+v, %v, want %+v", it, err, wantItem)
	}
	// Seq continues where the first handle left off.
	ev, err := db2.AppendEvent(ctx, Event{RunID: "r", Stream: "verdict"})
	if err != nil || ev.Seq != 6 {
		t.Errorf("AppendEvent after reopen = seq %d, %v, want 6", ev.Seq, err)
	}
}

func TestTasks(t *testing.T) {
	ctx := t.Context()
	db, clk := openTest(t)
	if p, err := db.TaskProgress(ctx, "none"); err != nil || len(p) != 0 {
		t.Errorf("TaskProgress(unknown) = %v, %v, want empty", p, err)
	}
	t0 := clk.Now()
	if err := db.AppendTaskProgress(ctx, "t1", "r1", "one"); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	if err := db.AppendTaskProgress(ctx, "t1", "", "two"); err != nil {
		t.Fatal(err)
	}
	if err := db.AppendTaskProgress(ctx, "", "", "x"); err == nil {
		t.Error("AppendTaskProgress(no task) = nil, want error")
	}
	got, err := db.TaskProgress(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	want := []TaskEntry{
		{ID: got[0].ID, TaskID: "t1", At: t0, Message: "one", RunID: "r1"},
		{ID: got[1].ID, TaskID: "t1", At: t0.Add(time.Second), Message: "two"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("TaskProgress mismatch (-want +got):\n%s", diff)
	}
	task, err := db.GetTask(ctx, "t1")
	if err != nil || task.Title != "" || !task.CreatedAt.Equal(t0) {
		t.Errorf("GetTask(t1) = %+v, %v", task, err)
	}
	if err := db.CreateTask(ctx, Task{ID: "t1", Title: "Book a flight"}); err != nil {
		t.Fatal(err)
	}
	if task, _ := db.GetTask(ctx, "t1"); task.Title != "Book a flight" || !task.CreatedAt.Equal(t0) {
		t.Errorf("GetTask after CreateTask = %+v", task)
	}
	if _, err := db.GetTask(ctx, "none"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetTask(unknown) = %v, want ErrNotFound", err)
	}
}

func TestOutbox(t *testing.T) {
	ctx := t.Context()
	db, clk := openTest(t)
	t0 := clk.Now()
	if _, ok, err := db.NextDue(ctx); err != nil || ok {
		t.Errorf("NextDue(empty) = ok %v, %v", ok, err)
	}

	id1, ins, err := db.Enqueue(ctx, OutboxItem{Key: "run1:resolved:exec", Notifier: "exec", RunID: "run1", Message: "m1", Payload: json.RawMessage(`{"a":1}`)})
	if err != nil || !ins {
		t.Fatalf("Enqueue() = %d, %v, %v", id1, ins, err)
	}
	dup, ins, err := db.Enqueue(ctx, OutboxItem{Key: "run1:resolved:exec", Notifier: "exec", RunID: "run1", Message: "other"})
	if err != nil || ins || dup != id1 {
		t.Errorf("Enqueue(duplicate key) = %d, %v, %v; want %d, false, nil", dup, ins, err, id1)
	}
	id2, _, _ := db.Enqueue(ctx, OutboxItem{Key: "k2", Notifier: "webhook", RunID: "run1", Message: "m2", NextAt: t0.Add(-time.Second)})
	id3, _, _ := db.Enqueue(ctx, OutboxItem{Key: "k3", Notifier: "exec", RunID: "run2", Message: "m3", NextAt: t0.Add(time.Minute)})
	id4, _, _ := db.Enqueue(ctx, OutboxItem{Key: "k4", Notifier: "exec", Message: "m4"})
	if _, _, err := db.Enqueue(ctx, OutboxItem{Notifier: "exec"}); err == nil {
		t.Error("Enqueue(no key) = nil, want error")
	}

	due := func(now time.Time) []int64 {
		t.Helper()
		items, err := db.DueOutbox(ctx, now, 10)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, it := range items {
			ids = append(ids, it.ID)
		}
		return ids
	}
	// Earliest due first, then oldest: k2 (due a second ago), then m1 and m4 (due now).
	if diff := cmp.Diff([]int64{id2, id1, id4}, due(t0)); diff != "" {
		t.Errorf("DueOutbox(now) (-want +got):\n%s", diff)
	}
	if got := due(t0.Add(time.Hour)); len(got) != 4 {
		t.Errorf("DueOutbox(+1h) = %v, want all four", got)
	}
	if at, ok, err := db.NextDue(ctx); err != nil || !ok || !at.Equal(t0.Add(-time.Second)) {
		t.Errorf("NextDue() = %v, %v, %v", at, ok, err)
	}

	// A failed attempt moves the item back; a delivered one leaves the queue.
	clk.Advance(time.Second)
	if err := db.RecordAttempt(ctx, id2, false, "HTTP 500", t0.Add(30*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := db.RecordAttempt(ctx, id1, true, "", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int64{id4}, due(t0.Add(time.Second))); diff != "" {
		t.Errorf("DueOutbox after attempts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{id4, id2}, due(t0.Add(30*time.Second))); diff != "" {
		t.Errorf("DueOutbox(+30s) (-want +got):\n%s", diff)
	}
	clk.Advance(time.Second)
	if err := db.RecordAttempt(ctx, id2, true, "", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := db.RecordAttempt(ctx, 999, true, "", time.Time{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("RecordAttempt(unknown) = %v, want ErrNotFound", err)
	}

	items, err := db.Outbox(ctx, "run1")
	if err != nil {
		t.Fatal(err)
	}
	want := []OutboxItem{
		{ID: id1, Key: "run1:resolved:exec", Notifier: "exec", RunID: "run1", Message: "m1", Payload: json.RawMessage(`{"a":1}`),
			CreatedAt: t0, NextAt: t0, Attempts: 1, DeliveredAt: t0.Add(time.Second)},
		{ID: id2, Key: "k2", Notifier: "webhook", RunID: "run1", Message: "m2",
			CreatedAt: t0, NextAt: t0.Add(30 * time.Second), Attempts: 2, DeliveredAt: t0.Add(2 * time.Second)},
	}
	if diff := cmp.Diff(want, items); diff != "" {
		t.Errorf("Outbox(run1) (-want +got):\n%s", diff)
	}
	att, err := db.OutboxAttempts(ctx, id2)
	if err != nil {
		t.Fatal(err)
	}
	wantAtt := []OutboxAttempt{
		{OutboxID: id2, At: t0.Add(time.Second), OK: false, Error: "HTTP 500"},
		{OutboxID: id2, At: t0.Add(2 * time.Second), OK: true},
	}
	if diff := cmp.Diff(wantAtt, att); diff != "" {
		t.Errorf("OutboxAttempts (-want +got):\n%s", diff)
	}
	_ = id3
}

// Two handles on one file stand in for two processes: immediate transactions
// and busy_timeout keep seq consecutive across them.
func TestTwoHandlesWriteOneFile(t *testing.T) {
	ctx := t.Context()
	path := testDB(t, "acu.db")
	dbs := []*DB{openAt(t, path, nil), openAt(t, path, nil)}
	mustCreate(t, dbs[0], Run{ID: "r", Kind: "wait", Status: "running"})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Go(func() {
			for range 25 {
				if _, err := dbs[w%2].AppendEvent(ctx, Event{RunID: "r", Stream: "verdict"}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("AppendEvent = %v", err)
	}
	evs, err := dbs[1].EventsAfter(ctx, 0, EventFilter{RunID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d, want %d", i, ev.Seq, i+1)
		}
	}
	if len(evs) != 100 {
		t.Fatalf("stored %d events, want 100", len(evs))
	}
}

func TestAppendEventsBatch(t *testing.T) {
	ctx := t.Context()
	db, _ := openTest(t)
	mustCreate(t, db, Run{ID: "a", Kind: "wait", Status: "running"})
	mustCreate(t, db, Run{ID: "b", Kind: "wait", Status: "running"})
	mustCreate(t, db, Run{ID: "done", Kind: "wait", Status: "running"})
	if err := db.EndRun(ctx, "done", "resolved", "", nil, time.Time{}); err != nil {
		t.Fatal(err)
	}
	evs := []Event{
		{RunID: "a", Stream: "verdict"},
		{RunID: "done", Stream: "verdict"},
		{RunID: "b", Stream: "verdict"},
		{RunID: "nope", Stream: "verdict"},
		{RunID: "a", Stream: "verdict", Data: json.RawMessage(`{`)},
		{RunID: "a", Stream: ""},
		{RunID: "a", Stream: "log", Data: json.RawMessage(`{"x":1}`)},
	}
	errs, err := db.AppendEvents(ctx, evs)
	if err != nil {
		t.Fatalf("AppendEvents() = %v", err)
	}
	for i, want := range []error{nil, ErrEnded, nil, ErrNotFound, errAny, errAny, nil} {
		switch {
		case want == nil && errs[i] != nil, want != nil && errs[i] == nil:
			t.Errorf("event %d: error %v, want %v", i, errs[i], want)
		case want != nil && want != errAny && !errors.Is(errs[i], want):
			t.Errorf("event %d: error %v, want %v", i, errs[i], want)
		}
	}
	if evs[0].Seq != 1 || evs[6].Seq != 2 || evs[2].Seq != 1 || !(evs[0].Cursor < evs[2].Cursor && evs[2].Cursor < evs[6].Cursor) {
		t.Errorf("assigned seq/cursor: %+v, %+v, %+v", evs[0], evs[2], evs[6])
	}
	stored, _ := db.EventsAfter(ctx, 0, EventFilter{})
	if len(stored) != 3 {
		t.Errorf("stored %d events, want 3", len(stored))
	}
}

var errAny = errors.New("any error")

// A notification's message comes back byte for byte on both engines,
// NUL and backslashes included (PostgreSQL's text cannot hold NUL).
func TestOutboxMessageBytes(t *testing.T) {
	db, _ := openTest(t)
	ctx := t.Context()
	for i, msg := range []string{"plain", `back\slash \0 \\`, "nul\x00here", "\x00", `\`, "é\x00\\0"} {
		id, _, err := db.Enqueue(ctx, OutboxItem{Key: fmt.Sprintf("k%d", i), Notifier: "exec", Message: msg})
		if err != nil {
			t.Fatalf("Enqueue(%q) = %v", msg, err)
		}
		it, err := db.GetOutbox(ctx, id)
		if err != nil || it.Message != msg {
			t.Errorf("message %q came back as %q (%v)", msg, it.Message, err)
		}
	}
}

// A PostgreSQL password never shows in what the store says: its path
// (used in every error and log line) and the error of a failed open.
func TestPostgresPasswordNotShown(t *testing.T) {
	dsn := "postgres://acu:s3cret-pw@127.0.0.1:1/acu?sslmode=disable&connect_timeout=2"
	_, err := Open(t.Context(), dsn, Options{})
	if err == nil {
		t.Fatal("Open on a closed port succeeded")
	}
	if strings.Contains(err.Error(), "s3cret-pw") || !strings.Contains(err.Error(), "postgres://acu@127.0.0.1:1/acu") {
		t.Errorf("Open error = %q, want the DSN without its password", err)
	}
	if got := redactDSN(dsn); got != "postgres://acu@127.0.0.1:1/acu" {
		t.Errorf("redactDSN = %q", got)
	}
}
