package main

// A daemon `acu mcp` started (acu serve --detached) exits by itself once it
// has had no live run and no client for ACU_IDLE_EXIT, so a short-lived MCP
// host leaves no daemon holding ports and displays. Clients are requests
// and streams in flight on the API, and each running `acu mcp`, which holds
// a shared lock on the data directory's clients.lock for as long as it runs
// (a lock the kernel drops when the process dies, however it dies).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/acu-dev/acu/internal/config"
)

// errIdle ends a detached daemon that has been idle for ACU_IDLE_EXIT.
var errIdle = errors.New("idle")

func daemonClientsPath(c *config.Config) string { return filepath.Join(c.DataDir, "clients.lock") }

// holdClientLock takes a shared lock on path for as long as the process
// runs (release ends it earlier): the daemon sees a client while any is
// held. The descriptor is close-on-exec, so a daemon started meanwhile
// does not inherit it.
func holdClientLock(ctx context.Context, path string) (release func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the client lock %s: %w", path, err)
	}
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		// The daemon holds it exclusively only for the instant of a look.
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// clientsHold reports whether some process holds path's lock (a running
// `acu mcp`).
func clientsHold(path string) bool {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false
	}
	return errors.Is(err, syscall.EWOULDBLOCK)
}

// idleWatch counts the API's requests in flight and when the last ended.
type idleWatch struct {
	mu       sync.Mutex
	inflight int
	last     time.Time // the last moment something was going on
}

func newIdleWatch() *idleWatch { return &idleWatch{last: time.Now()} }

// track is server.Options.Track.
func (w *idleWatch) track() (done func()) {
	w.mu.Lock()
	w.inflight++
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		w.inflight--
		w.last = time.Now()
		w.mu.Unlock()
	}
}

// run looks every while whether anything is going on: a request in
// flight, or busy (live runs, a connected client) saying why. It returns
// errIdle once nothing has been for after, and nil when ctx ends.
func (w *idleWatch) run(ctx context.Context, after time.Duration, busy func() bool, log *slog.Logger) error {
	every := min(max(after/10, 50*time.Millisecond), 30*time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		now := time.Now()
		w.mu.Lock()
		if w.inflight > 0 {
			w.last = now
		}
		w.mu.Unlock()
		if busy() {
			w.mu.Lock()
			w.last = now
			w.mu.Unlock()
			continue
		}
		w.mu.Lock()
		idle := now.Sub(w.last)
		w.mu.Unlock()
		if idle >= after {
			log.Info("acu serve: no live run and no client for ACU_IDLE_EXIT: exiting (acu mcp starts a daemon again when it needs one)",
				"idle", idle.Round(time.Second).String(), "idle_exit", after.String())
			return errIdle
		}
	}
}
