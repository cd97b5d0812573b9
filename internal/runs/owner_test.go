package runs

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/pgtest"

	"github.com/acu-dev/acu/internal/store"
)

// proc is one "process" on a shared database file: its own store handle
// and registry, as `acu serve` and a standalone `acu agent` have.
type proc struct {
	db  *store.DB
	reg *Registry
}

func openProc(t *testing.T, path, program string, lease time.Duration) *proc {
	t.Helper()
	db, err := store.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatalf("store.Open() = %v", err)
	}
	t.Cleanup(func() { db.Close() })
	p := &proc{db: db, reg: New(db, Options{})}
	if program != "" {
		release, err := p.reg.Own(t.Context(), Self(program, ""), lease)
		if err != nil {
			t.Fatalf("Own() = %v", err)
		}
		t.Cleanup(release)
	}
	return p
}

func (p *proc) start(t *testing.T, kind string) Run {
	t.Helper()
	run, err := p.reg.Start(t.Context(), StartOptions{Kind: kind})
	if err != nil {
		t.Fatalf("Start(%s) = %v", kind, err)
	}
	return run
}

func (p *proc) get(t *testing.T, id string) Run {
	t.Helper()
	run, err := p.reg.Get(t.Context(), id)
	if err != nil {
		t.Fatalf("Get(%s) = %v", id, err)
	}
	return run
}

// A daemon starting beside a running agent leaves the agent's run alone:
// its owner holds its lease.
func TestRecoverLeavesLeasedRuns(t *testing.T) {
	path := pgtest.Path(t, "acu.db")
	agent := openProc(t, path, "agent", time.Minute)
	run := agent.start(t, "agent")
	if run.Owner == "" || run.Owner != agent.reg.self().ID {
		t.Fatalf("run owner = %q, want the agent's %q", run.Owner, agent.reg.self().ID)
	}
	daemon := openProc(t, path, "serve", time.Minute)
	claimed := 0
	if err := daemon.reg.Recover(t.Context(), func(Run) bool { claimed++; return true }); err != nil {
		t.Fatalf("Recover() = %v", err)
	}
	if got := daemon.get(t, run.ID); !got.Live() || got.Owner != run.Owner || claimed != 0 {
		t.Fatalf("agent's run after the daemon's Recover = %+v (claimed %d), want live, still the agent's, not offered", got, claimed)
	}
	// The agent goes on writing and ending its run.
	if _, err := agent.reg.Emit(t.Context(), run.ID, "step", map[string]int{"n": 1}); err != nil {
		t.Fatalf("agent Emit after the daemon started = %v", err)
	}
	if _, err := agent.reg.End(t.Context(), run.ID, StatusCompleted, "", nil); err != nil {
		t.Fatalf("agent End = %v", err)
	}
}

// A run whose owner stopped cleanly, or whose lease ran out, is taken over
// and ended with a message naming the owner; before the lease runs out it
// is not.
func TestRecoverTakesStoppedAndExpiredOwners(t *testing.T) {
	path := pgtest.Path(t, "acu.db")
	daemon := openProc(t, path, "serve", time.Minute)

	// Stopped cleanly (release) with a run left live.
	agent := openProc(t, path, "", 0)
	release, err := agent.reg.Own(t.Context(), Self("agent", ""), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	stopped := agent.start(t, "agent")
	release()

	// An owner on another host that stops renewing: its lease runs out.
	ctx := t.Context()
	far := store.Owner{ID: "far:1:x", Host: "far", PID: 1, Program: "task", LeaseUntil: time.Now().Add(400 * time.Millisecond)}
	if err := daemon.db.RegisterOwner(ctx, far); err != nil {
		t.Fatal(err)
	}
	expiring := Run{ID: "task_expiring", Kind: "task", Status: StatusRunning, Owner: far.ID}
	if _, err := daemon.db.CreateRunEvent(ctx, store.Run(expiring), store.Event{Stream: StreamLifecycle, Data: []byte(`{"phase":"start"}`)}); err != nil {
		t.Fatal(err)
	}

	if err := daemon.reg.Recover(ctx, nil); err != nil {
		t.Fatalf("Recover() = %v", err)
	}
	got := daemon.get(t, stopped.ID)
	want := OwnerLostMessage("agent", agent.reg.self().PID, agent.reg.self().Host)
	if got.Live() || got.Status != StatusError || got.Error != want {
		t.Errorf("run of a stopped agent = %+v, want ended with %q", got, want)
	}
	if got := daemon.get(t, expiring.ID); !got.Live() {
		t.Fatalf("run of an owner within its lease = %+v, want live", got)
	}
	time.Sleep(time.Until(far.LeaseUntil) + 50*time.Millisecond)
	if err := daemon.reg.Recover(ctx, nil); err != nil {
		t.Fatalf("Recover() = %v", err)
	}
	if got := daemon.get(t, expiring.ID); got.Live() || got.Error != OwnerLostMessage("task", 1, "far") {
		t.Errorf("run of an owner past its lease = %+v, want ended naming it", got)
	}
}

// On the same host, an owner whose process is gone (kill -9) loses its
// runs at once, without waiting out its lease; a reused pid is not taken
// for the owner.
func TestRecoverGoneProcess(t *testing.T) {
	path := pgtest.Path(t, "acu.db")
	daemon := openProc(t, path, "serve", time.Minute)
	ctx := t.Context()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	host := daemon.reg.self().Host
	dead := store.Owner{ID: "dead", Host: host, PID: cmd.Process.Pid, PIDStart: 1, Program: "agent", LeaseUntil: time.Now().Add(time.Hour)}
	// This test process's own pid, but another start time: a reused pid.
	reused := store.Owner{ID: "reused", Host: host, PID: daemon.reg.self().PID, PIDStart: daemon.reg.self().PIDStart + 1,
		Program: "task", LeaseUntil: time.Now().Add(time.Hour)}
	for _, o := range []store.Owner{dead, reused} {
		if err := daemon.db.RegisterOwner(ctx, o); err != nil {
			t.Fatal(err)
		}
		r := store.Run{ID: "run_" + o.ID, Kind: o.Program, Status: StatusRunning, Owner: o.ID}
		if _, err := daemon.db.CreateRunEvent(ctx, r, store.Event{Stream: StreamLifecycle, Data: []byte(`{"phase":"start"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := daemon.reg.Recover(ctx, nil); err != nil {
		t.Fatalf("Recover() = %v", err)
	}
	for _, id := range []string{"run_dead", "run_reused"} {
		if got := daemon.get(t, id); got.Live() || got.Status != StatusError {
			t.Errorf("%s after Recover = %+v, want ended: its process is gone", id, got)
		}
	}
}

// Two daemons recovering the same orphaned runs at once: each run is
// claimed (resumed) by exactly one of them.
func TestConcurrentRecoverClaimsOnce(t *testing.T) {
	path := pgtest.Path(t, "acu.db")
	a := openProc(t, path, "serve", time.Minute)
	b := openProc(t, path, "serve", time.Minute)
	old := openProc(t, path, "", 0)
	const n = 40
	for range n {
		old.start(t, "wait") // owner "": left by a process before ownership
	}
	var claims sync.Map
	var total atomic.Int32
	claim := func(run Run) bool {
		if _, dup := claims.LoadOrStore(run.ID, true); dup {
			t.Errorf("run %s claimed twice", run.ID)
		}
		total.Add(1)
		return true
	}
	var wg sync.WaitGroup
	for _, p := range []*proc{a, b} {
		wg.Go(func() {
			if err := p.reg.Recover(t.Context(), claim); err != nil {
				t.Errorf("Recover() = %v", err)
			}
		})
	}
	wg.Wait()
	if total.Load() != n {
		t.Errorf("claimed %d runs, want %d", total.Load(), n)
	}
	live := len(a.reg.Live()) + len(b.reg.Live())
	if live != n {
		t.Errorf("live in the two daemons: %d, want %d", live, n)
	}
}

// Events written by one process reach another process's subscribers in
// cursor order with no gap, interleaved with its own; a Wait in one
// process resolves when another process ends the run.
func TestEventsOfOtherProcesses(t *testing.T) {
	path := pgtest.Path(t, "acu.db")
	daemon := openProc(t, path, "serve", time.Minute)
	agent := openProc(t, path, "agent", time.Minute)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	tailDone := make(chan struct{})
	go func() { defer close(tailDone); daemon.reg.Tail(ctx, 20*time.Millisecond) }()
	defer func() { cancel(); <-tailDone }()

	sub, err := daemon.reg.Subscribe(ctx, Filter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()

	theirs := agent.start(t, "agent")
	mine := daemon.start(t, "wait")
	waited := make(chan Result, 1)
	go func() {
		res, err := daemon.reg.Wait(ctx, theirs.ID, 0)
		if err != nil {
			t.Errorf("daemon Wait on the agent's run = %v", err)
		}
		waited <- res
	}()
	var wg sync.WaitGroup
	const each = 50
	wg.Go(func() {
		for i := range each {
			if _, err := agent.reg.Emit(ctx, theirs.ID, "step", i); err != nil {
				t.Errorf("agent Emit = %v", err)
			}
		}
	})
	wg.Go(func() {
		for i := range each {
			if _, err := daemon.reg.Emit(ctx, mine.ID, "verdict", i); err != nil {
				t.Errorf("daemon Emit = %v", err)
			}
		}
	})
	wg.Wait()
	if _, err := agent.reg.End(ctx, theirs.ID, StatusCompleted, "", nil); err != nil {
		t.Fatal(err)
	}
	want := 2 + 2*each + 1 // two starts, the steps, the agent's end
	var last int64
	seen := map[string]int{}
	timeout := time.After(30 * time.Second)
	for got := 0; got < want; got++ {
		select {
		case ev := <-sub.Events():
			if ev.Cursor != last+1 {
				t.Fatalf("event cursor %d after %d: want every cursor in order, no gap", ev.Cursor, last)
			}
			last = ev.Cursor
			seen[ev.RunID]++
		case <-timeout:
			t.Fatalf("received %d of %d events (%v)", got, want, seen)
		}
	}
	if seen[theirs.ID] != each+2 || seen[mine.ID] != each+1 {
		t.Errorf("events per run = %v, want %d of the agent's and %d of the daemon's", seen, each+2, each+1)
	}
	select {
	case res := <-waited:
		if res.Status != StatusCompleted {
			t.Errorf("Wait result = %+v, want completed", res)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon's Wait on the agent's run did not resolve on the agent's End")
	}
	// The daemon cancels the agent's run: the agent's registry learns of
	// the end from the store, and its late events are refused.
	other := agent.start(t, "agent")
	agentCtx, agentCancel := context.WithCancel(t.Context())
	agentTail := make(chan struct{})
	go func() { defer close(agentTail); agent.reg.Tail(agentCtx, 20*time.Millisecond) }()
	defer func() { agentCancel(); <-agentTail }()
	if _, err := daemon.reg.End(ctx, other.ID, StatusCancelled, "stopped from the daemon", nil); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the agent registry dropping the run ended elsewhere", func() bool { return len(agent.reg.Live()) == 0 })
	if _, err := agent.reg.Emit(ctx, other.ID, "step", 1); !errors.Is(err, ErrEnded) {
		t.Errorf("agent Emit after the daemon ended its run = %v, want ErrEnded", err)
	}
}

// openHost is openProc for a daemon of a named host in a fleet.
func openHost(t *testing.T, path, host string, lease time.Duration, opts Options) (*proc, func()) {
	t.Helper()
	db, err := store.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatalf("store.Open() = %v", err)
	}
	t.Cleanup(func() { db.Close() })
	p := &proc{db: db, reg: New(db, opts)}
	release, err := p.reg.Own(t.Context(), Self("serve", host), lease)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return p, release
}

// A fleet on one database: a run started on host a for host b is claimed
// by b's daemon only; when b's daemon dies the run is orphaned once, by
// one of the others, and b's next daemon takes it back.
func TestFleetClaimOrphanResume(t *testing.T) {
	path := pgtest.Path(t, "acu.db")
	ctx := t.Context()
	var orphaned atomic.Int32
	onOrphan := func(run Run, lost Owner) {
		if run.Status != StatusOrphaned || lost.Host != "b" {
			t.Errorf("OnOrphaned(%+v, %+v)", run, lost)
		}
		orphaned.Add(1)
	}
	a, _ := openHost(t, path, "a", time.Minute, Options{OnOrphaned: onOrphan})
	c, _ := openHost(t, path, "c", time.Minute, Options{OnOrphaned: onOrphan})
	b, stopB := openHost(t, path, "b", time.Minute, Options{})

	run, err := a.reg.Start(ctx, StartOptions{Kind: "wait", Host: "b", Spec: map[string]string{"criteria": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if run.Host != "b" || run.Owner != "" || len(a.reg.Live()) != 0 {
		t.Fatalf("run started for host b = %+v (live on a: %d), want unowned, host b, not live on a", run, len(a.reg.Live()))
	}
	claims := map[string]int{}
	claim := func(host string) func(Run) bool {
		return func(r Run) bool { claims[host]++; return true }
	}
	for _, p := range []struct {
		name string
		p    *proc
	}{{"a", a}, {"c", c}} {
		if err := p.p.reg.Recover(ctx, claim(p.name)); err != nil {
			t.Fatal(err)
		}
	}
	if got := a.get(t, run.ID); !got.Live() || got.Owner != "" {
		t.Fatalf("b's run after a's and c's Recover = %+v, want untouched", got)
	}
	if err := b.reg.Recover(ctx, claim("b")); err != nil {
		t.Fatal(err)
	}
	if got := a.get(t, run.ID); got.Owner != b.reg.OwnerID() || claims["b"] != 1 || claims["a"]+claims["c"] != 0 {
		t.Fatalf("after b's Recover: %+v, claims %v; want claimed by b only", got, claims)
	}

	// b's daemon dies (its lease ends): a and c look at once; one orphans.
	stopB()
	var wg sync.WaitGroup
	for _, p := range []*proc{a, c} {
		wg.Go(func() {
			if err := p.reg.Recover(ctx, nil); err != nil {
				t.Errorf("Recover() = %v", err)
			}
		})
	}
	wg.Wait()
	got := a.get(t, run.ID)
	if !got.Live() || got.Status != StatusOrphaned || got.Owner != "" || orphaned.Load() != 1 {
		t.Fatalf("run of a dead host = %+v, OnOrphaned %d times; want live, orphaned, unowned, notified once", got, orphaned.Load())
	}
	evs, err := a.reg.Events(ctx, 0, Filter{RunID: run.ID, Streams: []string{StreamOwnership}}, 10)
	if err != nil || len(evs) != 2 || !strings.Contains(string(evs[0].Data), `"claimed"`) || !strings.Contains(string(evs[1].Data), `"orphaned"`) {
		t.Fatalf("ownership events = %+v, %v; want claimed, orphaned", evs, err)
	}

	// b comes back: its daemon takes the run back and resumes it.
	b2, _ := openHost(t, path, "b", time.Minute, Options{})
	if err := b2.reg.Recover(ctx, claim("b")); err != nil {
		t.Fatal(err)
	}
	got = a.get(t, run.ID)
	if got.Status != StatusRunning || got.Owner != b2.reg.OwnerID() || claims["b"] != 2 {
		t.Fatalf("after b's return: %+v, claims %v; want running, b's new daemon", got, claims)
	}
	evs, _ = a.reg.Events(ctx, 0, Filter{RunID: run.ID, Streams: []string{StreamOwnership}}, 10)
	if len(evs) != 3 || !strings.Contains(string(evs[2].Data), `"resumed"`) {
		t.Errorf("ownership events = %+v; want claimed, orphaned, resumed", evs)
	}
}

// diesAfterTake is a store whose process dies right after a take: every
// later event write fails.
type diesAfterTake struct{ *store.DB }

func (diesAfterTake) AppendEvents(context.Context, []store.Event) ([]error, error) {
	return nil, errors.New("the process died")
}

// TestTakeRecordsTheChangeOfHands: the claimed and resumed events are
// written in the transaction that takes the run, so a daemon that dies
// right after taking a run created for its host (or taking back an
// orphan) leaves the event with its ownership; written afterwards, as
// before, the fleet end-to-end test's kill -9 lost it now and then.
func TestTakeRecordsTheChangeOfHands(t *testing.T) {
	path := pgtest.Path(t, "acu.db")
	ctx := t.Context()
	a, _ := openHost(t, path, "a", time.Minute, Options{})
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	b := New(diesAfterTake{db}, Options{})
	release, err := b.Own(ctx, Self("serve", "b"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	run, err := a.reg.Start(ctx, StartOptions{Kind: "wait", Host: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Recover(ctx, func(Run) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if got := a.get(t, run.ID); got.Owner != b.OwnerID() {
		t.Fatalf("after b's Recover: %+v, want b's", got)
	}
	evs, err := a.reg.Events(ctx, 0, Filter{RunID: run.ID, Streams: []string{StreamOwnership}}, 10)
	if err != nil || len(evs) != 1 || !strings.Contains(string(evs[0].Data), `"claimed"`) || !strings.Contains(string(evs[0].Data), `"host":"b"`) {
		t.Fatalf("ownership events = %+v, %v; want b's claim", evs, err)
	}
}
