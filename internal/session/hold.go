package session

import (
	"context"
	"errors"
	"time"
)

// ErrStopped ends a wait that the loop's own control stopped.
var ErrStopped = errors.New("stopped")

// Hold is a pause for a human: the loop waits while Held says someone has
// the display (a take-over, or input that was not acu's), and for Quiet
// after they were last seen, looking again every Poll.
type Hold[C any] struct {
	// Held reports whether a human has the display now; a read that
	// fails should report false (a hold that cannot be read holds
	// nothing).
	Held func(ctx context.Context) bool
	// Poll is how often Held is asked again (default 200 ms).
	Poll time.Duration
	// Quiet is how long Held must have been false before the loop
	// resumes (0: as soon as it is false).
	Quiet time.Duration
	// Control, when set, delivers the loop's own controls while it
	// waits; Apply applies one and reports a stop, which ends the wait
	// with ErrStopped.
	Control <-chan C
	Apply   func(C) (stop bool)
}

// Wait blocks until the human has let go (and been still for Quiet), a
// control stops the loop (ErrStopped) or ctx ends. It returns how long it
// waited. The caller asks Held first, to know that it pauses and record
// it.
func (h Hold[C]) Wait(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	poll := h.Poll
	if poll <= 0 {
		poll = 200 * time.Millisecond
	}
	if h.Quiet > 0 {
		poll = min(poll, h.Quiet/2)
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	last := start // when a human was last seen
	for {
		select {
		case <-ctx.Done():
			return time.Since(start), ctx.Err()
		case c := <-h.Control:
			if h.Apply != nil && h.Apply(c) {
				return time.Since(start), ErrStopped
			}
			continue
		case <-tick.C:
		}
		if h.Held(ctx) {
			last = time.Now()
			continue
		}
		if time.Since(last) >= h.Quiet {
			return time.Since(start), nil
		}
	}
}
