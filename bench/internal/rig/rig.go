// Package rig holds what acu's end-to-end benchmarks share: an in-process
// daemon's core parts (store, run registry, capture hub), services run in
// the background until the benchmark's cleanup, a loopback server, and the
// figures they report (quantiles, process CPU). Each benchmark composes
// the services it measures on top.
package rig

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/store"
)

// Token is the API token of the benchmarks' servers.
const Token = "bench-token-0123456789"

// Core is a daemon's core: a SQLite store in a temporary directory, its run
// registry and a capture hub, all closed at the benchmark's cleanup.
type Core struct {
	DB   *store.DB
	Runs *runs.Registry
	Hub  *capture.Hub
}

// NewCore opens a Core; hub nil makes a new hub.
func NewCore(tb testing.TB, hub *capture.Hub) *Core {
	tb.Helper()
	if hub == nil {
		var err error
		if hub, err = capture.NewHub(capture.Options{}); err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { hub.Close() })
	}
	db, err := store.Open(context.Background(), filepath.Join(tb.TempDir(), "acu.db"), store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return &Core{DB: db, Runs: runs.New(db, runs.Options{}), Hub: hub}
}

// Go runs each service loop in the background until the cleanup, which
// cancels them and waits for their return.
func Go(tb testing.TB, loops ...func(ctx context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, run := range loops {
		wg.Go(func() { _ = run(ctx) })
	}
	tb.Cleanup(func() { cancel(); wg.Wait() })
}

// Serve serves h on loopback until the cleanup and returns its URL.
func Serve(tb testing.TB, h http.Handler) string {
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return srv.URL
}

// Quantile returns the q quantile of ds in milliseconds (ds unchanged).
func Quantile(ds []time.Duration, q float64) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[int(q*float64(len(s)-1))].Microseconds()) / 1000
}

// Report reports the p50 and p95 of ds in milliseconds as NAME_p50_ms and
// NAME_p95_ms, and returns the p50; nothing for no samples.
func Report(b *testing.B, name string, ds []time.Duration) float64 {
	if len(ds) == 0 {
		return 0
	}
	p50 := Quantile(ds, 0.5)
	b.ReportMetric(p50, name+"_p50_ms")
	b.ReportMetric(Quantile(ds, 0.95), name+"_p95_ms")
	return p50
}

// CPU is this process's CPU time so far, user and system.
func CPU() time.Duration { return usage(syscall.RUSAGE_SELF) }

// ChildCPU is the CPU time of this process's waited-for children.
func ChildCPU() time.Duration { return usage(syscall.RUSAGE_CHILDREN) }

func usage(who int) time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(who, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
