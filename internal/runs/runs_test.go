package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/pgtest"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/acu-dev/acu/internal/leakcheck"
	"github.com/acu-dev/acu/internal/store"
)

// TestMain fails the package when goroutines started by the registry (or by
// these tests) outlive the tests.
func TestMain(m *testing.M) { leakcheck.MainThen(m, pgtest.Stop, "acu/internal/runs.") }

type env struct {
	path string
	db   *store.DB
	reg  *Registry
	prom *prometheus.Registry
}

func newEnv(t testing.TB, opts Options) *env {
	t.Helper()
	e := &env{path: pgtest.Path(t, "acu.db")}
	e.open(t, opts)
	return e
}

// open opens a fresh store handle and registry on e's file, as a restarted
// daemon would.
func (e *env) open(t testing.TB, opts Options) {
	t.Helper()
	db, err := store.Open(context.Background(), e.path, store.Options{})
	if err != nil {
		t.Fatalf("store.Open() = %v", err)
	}
	t.Cleanup(func() { db.Close() })
	e.db = db
	e.prom = prometheus.NewRegistry()
	opts.Registerer = e.prom
	e.reg = New(db, opts)
}

func (e *env) start(t testing.TB, kind string) Run {
	t.Helper()
	run, err := e.reg.Start(t.Context(), StartOptions{Kind: kind, Spec: map[string]any{"criteria": "x"}})
	if err != nil {
		t.Fatalf("Start(%s) = %v", kind, err)
	}
	return run
}

func (e *env) events(t testing.TB, f Filter) []Event {
	t.Helper()
	evs, err := e.reg.Events(t.Context(), 0, f, 10000)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func lifecycleOf(t testing.TB, ev Event) Lifecycle {
	t.Helper()
	if ev.Stream != StreamLifecycle {
		t.Fatalf("event %+v is not a lifecycle event", ev)
	}
	var lc Lifecycle
	if err := json.Unmarshal(ev.Data, &lc); err != nil {
		t.Fatalf("lifecycle data %s: %v", ev.Data, err)
	}
	return lc
}

// metric returns the value of a counter or gauge in e's registry.
func (e *env) metric(t testing.TB, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := e.prom.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, lp := range m.GetLabel() {
					if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
						found = true
					}
				}
				if !found {
					continue next
				}
			}
			if m.Counter != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}

// waitUntil polls cond until it holds or the test's context ends.
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-t.Context().Done():
			t.Fatalf("gave up waiting until %s", what)
		case <-time.After(time.Millisecond):
		}
	}
}

func (r *Registry) hasWaiter(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.waiters[id] != nil
}

func TestStartAndEnd(t *testing.T) {
	ctx := t.Context()
	e := newEnv(t, Options{})
	run := e.start(t, "wait")
	if !regexp.MustCompile(`^wait_[a-z2-7]{12}$`).MatchString(run.ID) {
		t.Errorf("run id %q, want wait_ and 12 base32 characters", run.ID)
	}
	if run.Status != StatusRunning || !run.Live() || string(run.Spec) != `{"criteria":"x"}` {
		t.Errorf("Start() = %+v", run)
	}
	if got, err := e.reg.Get(ctx, run.ID); err != nil || !cmp.Equal(got, run) {
		t.Errorf("Get() = %+v, %v, want %+v", got, err, run)
	}
	if live := e.reg.Live(); len(live) != 1 || live[0].ID != run.ID {
		t.Errorf("Live() = %+v", live)
	}
	evs := e.events(t, Filter{RunID: run.ID})
	if len(evs) != 1 || evs[0].Seq != 1 {
		t.Fatalf("events after Start = %+v, want one with seq 1", evs)
	}
	if lc := lifecycleOf(t, evs[0]); lc.Phase != PhaseStart || !lc.StartedAt.Equal(run.StartedAt) {
		t.Errorf("start lifecycle = %+v", lc)
	}

	ended, err := e.reg.End(ctx, run.ID, StatusResolved, "", map[string]string{"evidence": "seen"})
	if err != nil {
		t.Fatalf("End() = %v", err)
	}
	if ended.Status != StatusResolved || ended.Live() || string(ended.Result) != `{"evidence":"seen"}` {
		t.Errorf("End() = %+v", ended)
	}
	if live := e.reg.Live(); len(live) != 0 {
		t.Errorf("Live() after End = %+v, want none", live)
	}
	if _, err := e.reg.End(ctx, run.ID, StatusTimeout, "", nil); !errors.Is(err, ErrEnded) {
		t.Errorf("second End() = %v, want ErrEnded", err)
	}
	evs = e.events(t, Filter{RunID: run.ID})
	if len(evs) != 2 {
		t.Fatalf("events after End = %d, want 2 (ending twice emits nothing)", len(evs))
	}
	lc := lifecycleOf(t, evs[1])
	want := Lifecycle{Phase: PhaseEnd, StartedAt: run.StartedAt, EndedAt: ended.EndedAt, Status: StatusResolved}
	if diff := cmp.Diff(want, lc); diff != "" {
		t.Errorf("end lifecycle (-want +got):\n%s", diff)
	}

	// Status "error" ends with phase "error".
	run2 := e.start(t, "agent")
	if _, err := e.reg.End(ctx, run2.ID, StatusError, "model unreachable", nil); err != nil {
		t.Fatal(err)
	}
	evs = e.events(t, Filter{RunID: run2.ID, Streams: []string{StreamLifecycle}})
	if lc := lifecycleOf(t, evs[len(evs)-1]); lc.Phase != PhaseError || lc.Error != "model unreachable" || lc.Status != StatusError {
		t.Errorf("error lifecycle = %+v", lc)
	}

	if got := e.metric(t, "acu_runs_started_total", "kind", "wait"); got != 1 {
		t.Errorf("acu_runs_started_total{kind=wait} = %v, want 1", got)
	}
	if got := e.metric(t, "acu_runs_ended_total", "kind", "agent", "status", "error"); got != 1 {
		t.Errorf("acu_runs_ended_total{agent,error} = %v, want 1", got)
	}
	if got := e.metric(t, "acu_runs_live"); got != 0 {
		t.Errorf("acu_runs_live = %v, want 0", got)
	}
}

func TestStartValidation(t *testing.T) {
	ctx := t.Context()
	e := newEnv(t, Options{})
	for _, tc := range []struct {
		name string
		o    StartOptions
		want error
	}{
		{"no kind", StartOptions{}, nil},
		{"bad id", StartOptions{Kind: "wait", ID: "a b"}, nil},
		{"bad spec", StartOptions{Kind: "wait", Spec: json.RawMessage(`{`)}, nil},
		{"unmarshalable spec", StartOptions{Kind: "wait", Spec: func() {}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := e.reg.Start(ctx, tc.o); err == nil {
				t.Errorf("Start(%+v) = nil error, want one", tc.o)
			}
		})
	}
	if _, err := e.reg.Start(ctx, StartOptions{Kind: "wait", ID: "job-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.reg.Start(ctx, StartOptions{Kind: "wait", ID: "job-1"}); !errors.Is(err, ErrExists) {
		t.Errorf("Start(duplicate id) = %v, want ErrExists", err)
	}
	if id := NewID("Weird Kind"); !strings.HasPrefix(id, "run_") {
		t.Errorf("NewID(Weird Kind) = %q, want run_ prefix", id)
	}
	if _, err := e.reg.End(ctx, "job-1", StatusRunning, "", nil); err == nil {
		t.Error("End(status running) = nil error, want one")
	}
	if _, err := e.reg.End(ctx, "nope", StatusResolved, "", nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("End(unknown) = %v, want ErrNotFound", err)
	}
	if _, err := e.reg.Emit(ctx, "nope", "verdict", nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("Emit(unknown) = %v, want ErrNotFound", err)
	}
	if _, err := e.reg.Emit(ctx, "job-1", StreamLifecycle, nil); err == nil {
		t.Error("Emit(lifecycle) = nil error, want one")
	}
}

// Wait resolves on the lifecycle end and not before, while progress events
// keep arriving; events after the end are dropped and counted.
func TestWaitResolvesOnlyOnEnd(t *testing.T) {
	ctx := t.Context()
	e := newEnv(t, Options{})
	run := e.start(t, "wait")

	type outcome struct {
		res Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := e.reg.Wait(ctx, run.ID, 0)
		done <- outcome{res, err}
	}()
	waitUntil(t, "the waiter is registered", func() bool { return e.reg.hasWaiter(run.ID) })

	// A writer keeps emitting until the run has ended.
	var wg sync.WaitGroup
	var emitted, late int
	wg.Go(func() {
		for i := 0; ; i++ {
			_, err := e.reg.Emit(ctx, run.ID, "verdict", map[string]int{"i": i})
			if errors.Is(err, ErrEnded) {
				late++
				if late == 5 {
					return
				}
				continue
			}
			if err != nil {
				t.Errorf("Emit() = %v", err)
				return
			}
			emitted++
		}
	})
	waitUntil(t, "progress events flow", func() bool {
		evs, _ := e.reg.Events(ctx, 0, Filter{RunID: run.ID}, 100)
		return len(evs) > 50
	})
	select {
	case o := <-done:
		t.Fatalf("Wait returned before the run ended: %+v", o)
	default:
	}
	ended, err := e.reg.End(ctx, run.ID, StatusResolved, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	o := <-done
	want := Result{RunID: run.ID, Status: StatusResolved, StartedAt: run.StartedAt, EndedAt: ended.EndedAt}
	if o.err != nil || !cmp.Equal(o.res, want) {
		t.Errorf("Wait() = %+v, %v, want %+v", o.res, o.err, want)
	}
	wg.Wait()

	if got := e.reg.Dropped(); got != 5 {
		t.Errorf("Dropped() = %d, want 5", got)
	}
	if got := e.metric(t, "acu_run_events_dropped_total"); got != 5 {
		t.Errorf("acu_run_events_dropped_total = %v, want 5", got)
	}
	// Nothing after the final event: start, every acknowledged event, end.
	evs := e.events(t, Filter{RunID: run.ID})
	if len(evs) != emitted+2 {
		t.Fatalf("stored %d events, want %d (start + %d progress + end)", len(evs), emitted+2, emitted)
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d seq = %d, want %d", i, ev.Seq, i+1)
		}
	}
	if lc := lifecycleOf(t, evs[len(evs)-1]); lc.Phase != PhaseEnd {
		t.Errorf("last event phase = %q, want end", lc.Phase)
	}
}

func TestWaitEdges(t *testing.T) {
	ctx := t.Context()
	e := newEnv(t, Options{})

	t.Run("own timeout", func(t *testing.T) {
		run := e.start(t, "wait")
		_, err := e.reg.Wait(ctx, run.ID, 20*time.Millisecond)
		if !errors.Is(err, ErrWaitTimeout) {
			t.Fatalf("Wait(20ms) = %v, want ErrWaitTimeout", err)
		}
		if got, _ := e.reg.Get(ctx, run.ID); !got.Live() {
			t.Errorf("run after the wait's timeout = %+v, want still live", got)
		}
	})
	t.Run("context", func(t *testing.T) {
		run := e.start(t, "wait")
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := e.reg.Wait(cctx, run.ID, 0); !errors.Is(err, context.Canceled) || errors.Is(err, ErrWaitTimeout) {
			t.Errorf("Wait(cancelled ctx) = %v, want context.Canceled", err)
		}
	})
	t.Run("unknown run", func(t *testing.T) {
		if _, err := e.reg.Wait(ctx, "wait_nope", time.Minute); !errors.Is(err, ErrNotFound) {
			t.Errorf("Wait(unknown) = %v, want ErrNotFound", err)
		}
	})
	t.Run("ended run returns at once", func(t *testing.T) {
		run := e.start(t, "wait")
		ended, err := e.reg.End(ctx, run.ID, StatusTimeout, "Timeout after 300s", nil)
		if err != nil {
			t.Fatal(err)
		}
		want := Result{RunID: run.ID, Status: StatusTimeout, StartedAt: run.StartedAt, EndedAt: ended.EndedAt, Error: "Timeout after 300s"}
		// No timeout and an uncancelled context: only an immediate answer passes.
		if got, err := e.reg.Wait(ctx, run.ID, 0); err != nil || !cmp.Equal(got, want) {
			t.Errorf("Wait(ended) = %+v, %v, want %+v", got, err, want)
		}
		// A restarted daemon answers from the store.
		e2 := &env{path: e.path}
		e2.open(t, Options{})
		if got, err := e2.reg.Wait(ctx, run.ID, 0); err != nil || !cmp.Equal(got, want) {
			t.Errorf("Wait(ended) after reopen = %+v, %v, want %+v", got, err, want)
		}
	})
	t.Run("many waiters", func(t *testing.T) {
		run := e.start(t, "wait")
		var wg sync.WaitGroup
		errs := make(chan error, 10)
		for range 10 {
			wg.Go(func() {
				res, err := e.reg.Wait(ctx, run.ID, 0)
				if err == nil && res.Status != StatusCancelled {
					err = fmt.Errorf("status %q", res.Status)
				}
				errs <- err
			})
		}
		waitUntil(t, "a waiter is registered", func() bool { return e.reg.hasWaiter(run.ID) })
		if _, err := e.reg.End(ctx, run.ID, StatusCancelled, "", nil); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("Wait() = %v", err)
			}
		}
	})
}

// Recover, as a restarted daemon runs it: claimed runs stay live and keep
// their seq; unclaimed ones end with phase error and the restart message.
func TestRecover(t *testing.T) {
	ctx := t.Context()
	e := newEnv(t, Options{})
	waitRun := e.start(t, "wait")
	agentRun := e.start(t, "agent")
	taskRun := e.start(t, "task")
	done := e.start(t, "wait")
	if _, err := e.reg.Emit(ctx, waitRun.ID, "verdict", map[string]string{"answer": "NO"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.reg.End(ctx, done.ID, StatusResolved, "", nil); err != nil {
		t.Fatal(err)
	}

	// The old process dies without ending anything; a new one opens the file.
	e2 := &env{path: e.path}
	e2.open(t, Options{})
	// A client waiting on an unclaimed run before Recover gets its end.
	waited := make(chan Result, 1)
	go func() {
		res, err := e2.reg.Wait(ctx, agentRun.ID, 0)
		if err != nil {
			t.Errorf("Wait(agent run) = %v", err)
		}
		waited <- res
	}()
	waitUntil(t, "the waiter is registered", func() bool { return e2.reg.hasWaiter(agentRun.ID) })

	var offered []string
	err := e2.reg.Recover(ctx, func(r Run) bool {
		offered = append(offered, r.ID)
		return r.Kind == "wait"
	})
	if err != nil {
		t.Fatalf("Recover() = %v", err)
	}
	slices.Sort(offered)
	wantOffered := []string{waitRun.ID, agentRun.ID, taskRun.ID}
	slices.Sort(wantOffered)
	if diff := cmp.Diff(wantOffered, offered); diff != "" {
		t.Errorf("runs offered to claim (-want +got):\n%s", diff)
	}
	if live := e2.reg.Live(); len(live) != 1 || live[0].ID != waitRun.ID || string(live[0].Spec) != `{"criteria":"x"}` {
		t.Errorf("Live() after Recover = %+v, want the wait run with its spec", live)
	}
	for _, id := range []string{agentRun.ID, taskRun.ID} {
		run, err := e2.reg.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if run.Status != StatusError || run.Error != RestartMessage || run.Live() {
			t.Errorf("unclaimed run after Recover = %+v, want ended with status error and %q", run, RestartMessage)
		}
		evs := e2.events(t, Filter{RunID: id})
		lc := lifecycleOf(t, evs[len(evs)-1])
		if lc.Phase != PhaseError || lc.Error != RestartMessage || !lc.StartedAt.Equal(run.StartedAt) {
			t.Errorf("unclaimed run's last lifecycle = %+v", lc)
		}
	}
	if res := <-waited; res.Status != StatusError || res.Error != RestartMessage {
		t.Errorf("Wait(agent run) across restart = %+v", res)
	}

	// The claimed run continues: seq goes on, and it ends normally.
	ev, err := e2.reg.Emit(ctx, waitRun.ID, "verdict", map[string]string{"answer": "YES"})
	if err != nil || ev.Seq != 3 {
		t.Errorf("Emit(claimed run) = seq %d, %v, want 3", ev.Seq, err)
	}
	if _, err := e2.reg.End(ctx, waitRun.ID, StatusResolved, "", nil); err != nil {
		t.Fatal(err)
	}
	if res, err := e2.reg.Wait(ctx, waitRun.ID, 0); err != nil || res.Status != StatusResolved {
		t.Errorf("Wait(claimed run) = %+v, %v", res, err)
	}
	// A second Recover finds nothing left.
	if err := e2.reg.Recover(ctx, func(Run) bool { t.Error("claim called with no live runs"); return false }); err != nil {
		t.Fatal(err)
	}
}

func TestUpdateSpecAndList(t *testing.T) {
	ctx := t.Context()
	e := newEnv(t, Options{})
	run := e.start(t, "wait")
	e.start(t, "agent")
	if err := e.reg.UpdateSpec(ctx, run.ID, map[string]string{"criteria": "y"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.reg.Get(ctx, run.ID); string(got.Spec) != `{"criteria":"y"}` {
		t.Errorf("spec after UpdateSpec = %s", got.Spec)
	}
	// Both runs may start in the same millisecond: find the wait by id.
	for _, l := range e.reg.Live() {
		if l.ID == run.ID && string(l.Spec) != `{"criteria":"y"}` {
			t.Errorf("live spec after UpdateSpec = %s", l.Spec)
		}
	}
	list, err := e.reg.List(ctx, ListFilter{Kind: "wait"})
	if err != nil || len(list) != 1 || list[0].ID != run.ID {
		t.Errorf("List(kind wait) = %+v, %v", list, err)
	}
	if _, err := e.reg.End(ctx, run.ID, StatusCancelled, "", nil); err != nil {
		t.Fatal(err)
	}
	if err := e.reg.UpdateSpec(ctx, run.ID, nil); !errors.Is(err, ErrEnded) {
		t.Errorf("UpdateSpec(ended) = %v, want ErrEnded", err)
	}
	if e.reg.Epoch() == "" {
		t.Error("Epoch() is empty")
	}
}

func TestJSONShapes(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b, _ := json.Marshal(Lifecycle{Phase: PhaseStart, StartedAt: at, Status: StatusRunning})
	if want := `{"phase":"start","startedAt":"2026-01-02T03:04:05Z","status":"running"}`; string(b) != want {
		t.Errorf("start lifecycle JSON = %s, want %s", b, want)
	}
	b, _ = json.Marshal(Result{RunID: "wait_1", Status: StatusTimeout, StartedAt: at, EndedAt: at.Add(time.Second), Error: "x"})
	if want := `{"runId":"wait_1","status":"timeout","startedAt":"2026-01-02T03:04:05Z","endedAt":"2026-01-02T03:04:06Z","error":"x"}`; string(b) != want {
		t.Errorf("Result JSON = %s, want %s", b, want)
	}
}

func BenchmarkEmit(b *testing.B) {
	for _, subs := range []int{0, 8} {
		b.Run(fmt.Sprintf("subscribers=%d", subs), func(b *testing.B) {
			e := newEnv(b, Options{})
			run := e.start(b, "wait")
			for range subs {
				sub, err := e.reg.Subscribe(b.Context(), Filter{}, -1)
				if err != nil {
					b.Fatal(err)
				}
				go func() {
					for range sub.Events() {
					}
				}()
				b.Cleanup(sub.Close)
			}
			data := json.RawMessage(`{"answer":"NO","evidence":"progress bar at 40%"}`)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := e.reg.Emit(b.Context(), run.ID, "verdict", data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkStartEnd(b *testing.B) {
	e := newEnv(b, Options{})
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		run, err := e.reg.Start(ctx, StartOptions{Kind: "wait"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.reg.End(ctx, run.ID, StatusResolved, "", nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmitParallel measures group commit: many writers at once share
// transactions.
func BenchmarkEmitParallel(b *testing.B) {
	e := newEnv(b, Options{})
	run := e.start(b, "wait")
	data := json.RawMessage(`{"answer":"NO","evidence":"progress bar at 40%"}`)
	b.ReportAllocs()
	b.SetParallelism(32)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := e.reg.Emit(context.Background(), run.ID, "verdict", data); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/e.metric(b, "acu_run_event_commits_total"), "events/commit")
}

// Hundreds of simultaneous writers overflow one group-commit batch; every
// event is stored once, with consecutive seq, and acknowledged.
func TestGroupCommitManyWriters(t *testing.T) {
	ctx := t.Context()
	e := newEnv(t, Options{})
	run := e.start(t, "wait")
	defer func(n int) { maxBatch = n }(maxBatch)
	maxBatch = 8
	const writers, each = 600, 3
	var wg sync.WaitGroup
	seen := make([][]int64, writers)
	for w := range writers {
		wg.Go(func() {
			for range each {
				ev, err := e.reg.Emit(ctx, run.ID, "verdict", nil)
				if err != nil {
					t.Errorf("Emit() = %v", err)
					return
				}
				seen[w] = append(seen[w], ev.Seq)
			}
		})
	}
	wg.Wait()
	acked := map[int64]bool{}
	for _, seqs := range seen {
		for i, s := range seqs {
			if i > 0 && s <= seqs[i-1] {
				t.Errorf("one writer's seqs %v are not increasing", seqs)
			}
			if acked[s] {
				t.Errorf("seq %d acknowledged twice", s)
			}
			acked[s] = true
		}
	}
	evs := e.events(t, Filter{RunID: run.ID})
	if len(evs) != writers*each+1 || len(acked) != writers*each {
		t.Fatalf("stored %d events, acknowledged %d, want %d progress events + start", len(evs), len(acked), writers*each)
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, ev.Seq)
		}
	}
	if c := e.metric(t, "acu_run_event_commits_total"); c < writers*each/8 || c > writers*each {
		t.Errorf("acu_run_event_commits_total = %v", c)
	}
}
