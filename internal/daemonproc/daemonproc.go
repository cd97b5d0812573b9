// Package daemonproc owns what acu keeps about the servers it starts and
// may leave running (Xvfb, a headless sway): their JSON records in a state
// directory, whether a recorded pid still runs the recorded program,
// stopping a server by its pid (SIGTERM, then SIGKILL after a grace), and
// the bounded tail of a server's output kept for its start-up errors.
//
// It sits below internal/xvfb and internal/wayland/sway, which use it for
// `acu display start/list/stop` and for tests. It knows no program: its
// callers name the record files, the program a pid must run and what else
// to remove with a record. It starts nothing.
package daemonproc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Tail is an io.Writer that keeps the last bytes written to it: a
// server's error output, for the error of a start that failed.
type Tail struct {
	mu  sync.Mutex
	buf []byte
	max int
}

// NewTail returns a Tail that keeps the last max bytes.
func NewTail(max int) *Tail { return &Tail{max: max} }

// Write keeps p, dropping the oldest bytes beyond the bound.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

// String returns the bytes kept.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// Running reports whether pid is a process that has not exited (a zombie
// has) and whose program, the base name of its argv[0], is accepts.
// Checking the program guards against a recorded pid the kernel
// has given to another process since.
func Running(pid int, is func(program string) bool) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		// The state is the field after "(comm)"; Z is a zombie.
		if i := bytes.LastIndexByte(st, ')'); i >= 0 && i+2 < len(st) && st[i+2] == 'Z' {
			return false
		}
	}
	arg0, _, _ := bytes.Cut(b, []byte{0})
	return is(filepath.Base(string(arg0)))
}

// WriteRecord writes v as indented JSON to path, making its directory
// (0700) first; the file (0600) is written beside it and renamed into
// place, so that a reader never sees half a record.
func WriteRecord(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path+".tmp", b, 0o600); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

// List reads the records whose files match pattern (a filepath.Glob
// pattern), in the glob's order, and returns those whose process runs
// (running(pid(r))). A file that cannot be read is passed over; one that
// does not decode, or names no pid, is removed; a record whose process is
// gone is handed to gone, which removes it and what belongs to it.
func List[T any](pattern string, pid func(T) int, running func(pid int) bool, gone func(T)) ([]T, error) {
	paths, err := filepath.Glob(pattern)
	if err != nil {
		return nil, err
	}
	var out []T
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var r T
		if err := json.Unmarshal(b, &r); err != nil || pid(r) <= 0 {
			_ = os.Remove(p)
			continue
		}
		if !running(pid(r)) {
			gone(r)
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// pollEvery is how often Stop looks whether the process has exited.
const pollEvery = 20 * time.Millisecond

// Stop ends the process pid, which this process need not have started
// (a server of an earlier `acu display start`): when running(pid) it sends
// SIGTERM and waits until running(pid) is false; when the process still
// runs after grace, or ctx ends first, it sends SIGKILL and returns without
// waiting further.
func Stop(ctx context.Context, pid int, grace time.Duration, running func(pid int) bool) {
	if !running(pid) {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for running(pid) {
		select {
		case <-tick.C:
		case <-deadline.C:
			_ = syscall.Kill(pid, syscall.SIGKILL)
			return
		case <-ctx.Done():
			_ = syscall.Kill(pid, syscall.SIGKILL)
			return
		}
	}
}

// Terminate ends a process this process started and waits for it: it
// sends p SIGTERM and waits until done (closed by the goroutine that waits
// for p) is closed; when that takes longer than grace it sends SIGKILL and
// waits again.
func Terminate(p *os.Process, done <-chan struct{}, grace time.Duration) {
	_ = p.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
		_ = p.Signal(syscall.SIGKILL)
		<-done
	}
}
