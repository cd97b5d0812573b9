package handoff

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/store"
)

// host opens a registry of host on the database at path, owned as a
// daemon of that host.
func host(t *testing.T, path, name string) *runs.Registry {
	t.Helper()
	db, err := store.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reg := runs.New(db, runs.Options{})
	release, err := reg.Own(t.Context(), runs.Self("serve", name), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return reg
}

// goRun runs fn until the test ends, and waits for it.
func goRun(t *testing.T, fn func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); fn(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

type call struct {
	client, remote string
	req            api.ActRequest
}

// TestSendToAnotherHost: a request host a hands to host b is run by b's
// daemon for the sender's client, and a gets b's answer: its response, or
// its error with the status b's API would have answered.
func TestSendToAnotherHost(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acu.db")
	a, b := host(t, path, "a"), host(t, path, "b")
	var mu sync.Mutex
	var calls []call
	hb := New(Options{Runs: b,
		Act: func(ctx context.Context, client, remote string, req api.ActRequest) (api.ActResponse, error) {
			mu.Lock()
			calls = append(calls, call{client, remote, req})
			mu.Unlock()
			if req.Actions[0].Kind == "levitate" {
				return api.ActResponse{}, errors.New("no such kind levitate")
			}
			return api.ActResponse{Display: ":7", Ms: 7}, nil
		},
		Answer: func(err error) (int, api.ErrorDetail, bool) {
			return 409, api.ErrorDetail{Code: api.CodeConflict, Message: "b says: " + err.Error()}, true
		}})
	goRun(t, func(ctx context.Context) { _ = hb.Run(ctx) })
	goRun(t, func(ctx context.Context) { b.Sweep(ctx, 20*time.Millisecond, hb.Claim) })
	goRun(t, func(ctx context.Context) { a.Tail(ctx, 20*time.Millisecond) })
	ha := New(Options{Runs: a, Timeout: time.Minute})

	move := api.ActRequest{Host: "b", Actions: []api.Action{{Kind: api.ActMove, At: api.Pt(1, 2)}}}
	resp, err := ha.Send(t.Context(), "b", move, "tester")
	if err != nil || resp.Display != ":7" || resp.Ms != 7 {
		t.Fatalf("Send(move) = %+v, %v; want b's answer", resp, err)
	}
	mu.Lock()
	if len(calls) != 1 || calls[0].client != "fleet:a:tester" || calls[0].remote != "host a" || calls[0].req.Host != "" {
		t.Errorf("b acted with %+v; want once, for fleet:a:tester from host a, the host field cleared", calls)
	}
	mu.Unlock()

	_, err = ha.Send(t.Context(), "b", api.ActRequest{Actions: []api.Action{{Kind: "levitate"}}}, "")
	se, ok := errors.AsType[*api.StatusError](err)
	if !ok || se.Status != 409 || se.Message != "b says: no such kind levitate" {
		t.Fatalf("Send(levitate) = %v; want b's 409", err)
	}
	l, err := a.List(t.Context(), runs.ListFilter{Kind: Kind})
	if err != nil || len(l) != 2 {
		t.Fatalf("action runs = %+v, %v; want 2", l, err)
	}
	for _, r := range l {
		if r.Live() || r.Host != "b" {
			t.Errorf("action run %+v: want ended, for b", r)
		}
	}
}

// TestSendTimesOut: a request no daemon answers ends its run and returns
// a *TimeoutError naming the host and the run.
func TestSendTimesOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acu.db")
	a, _ := host(t, path, "a"), host(t, path, "b")
	ha := New(Options{Runs: a, Timeout: 200 * time.Millisecond})
	_, err := ha.Send(t.Context(), "b", api.ActRequest{Actions: []api.Action{{Kind: api.ActMove, At: api.Pt(1, 2)}}}, "")
	te, ok := errors.AsType[*TimeoutError](err)
	if !ok || te.Host != "b" || !strings.Contains(err.Error(), "GET /v1/runs/"+te.RunID) {
		t.Fatalf("Send to a host that never answers = %v; want a *TimeoutError", err)
	}
	r, err := a.Get(t.Context(), te.RunID)
	if err != nil || r.Live() || !strings.Contains(r.Error, "no answer from host b") {
		t.Errorf("the run = %+v, %v; want ended for want of an answer", r, err)
	}
}

// TestRunEndsWithItsContext: Run returns once its context ends, after the
// request under way saw the end and its run was ended with the error (a
// daemon stopping leaves no goroutine acting, and no run live).
func TestRunEndsWithItsContext(t *testing.T) {
	reg := host(t, filepath.Join(t.TempDir(), "acu.db"), "b")
	started := make(chan struct{})
	h := New(Options{Runs: reg, Act: func(ctx context.Context, _, _ string, _ api.ActRequest) (api.ActResponse, error) {
		close(started)
		<-ctx.Done()
		return api.ActResponse{}, ctx.Err()
	}})
	run, err := reg.Start(t.Context(), runs.StartOptions{Kind: Kind, Spec: spec{Request: api.ActRequest{Actions: []api.Action{{Kind: api.ActMove}}}, Origin: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if h.Claim(runs.Run{ID: "x", Kind: "wait"}) {
		t.Error("Claim took a run of kind wait")
	}
	if !h.Claim(run) {
		t.Fatal("Claim refused an action run")
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- h.Run(ctx) }()
	<-started
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run() = %v, want nil", err)
	}
	got, err := reg.Get(t.Context(), run.ID)
	if err != nil || got.Live() || got.Status != runs.StatusError || !strings.Contains(got.Error, "context canceled") {
		t.Errorf("the run after Run returned = %+v, %v; want ended with the cancellation", got, err)
	}
}
