package session

import (
	"context"
	"errors"
	"fmt"
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

// Refusal is an effect refused because a human has the display (the
// gate's user-first rule: an action API's 409 user_active): Wait is how
// long until their quiet period ends if they stay still, Detail what was
// seen.
type Refusal struct {
	Wait   time.Duration
	Detail string
}

// HeldError ends a pause for the user that outlasted its limit: acu does
// not fight the human for the display.
type HeldError struct{ After time.Duration }

func (e *HeldError) Error() string {
	return fmt.Sprintf("the user has been using the display for over %s: acu does not fight them for the pointer", e.After)
}

// minRefusalWait is the shortest pause a refusal causes, so a refusal
// that names no wait does not spin.
const minRefusalWait = 200 * time.Millisecond

// UserFirst runs act, an effect the gate refuses while a human has the
// display, for a loop that learns of the human only from the refusal (a
// client of the action API). refused reads a refusal off act's result.
// While act is refused, the loop pauses (Hold): paused is told at the
// first refusal, and act runs again once the refusal's quiet period has
// passed, for at most limit in all (then a *HeldError). It returns act's
// first result that was not refused and how long the loop paused (0: it
// ran at once). The effect is never made while refused, so the model
// driving the loop never notices the pause.
func UserFirst[T any](ctx context.Context, limit time.Duration, act func(context.Context) (T, error),
	refused func(T) (Refusal, bool), paused func(Refusal)) (T, time.Duration, error) {
	start := time.Now()
	var waited time.Duration
	for {
		v, err := act(ctx)
		if err != nil {
			return v, waited, err
		}
		r, ok := refused(v)
		if !ok {
			return v, waited, nil
		}
		if waited == 0 && paused != nil {
			paused(r)
		}
		until := time.Now().Add(max(r.Wait, minRefusalWait))
		if until.Sub(start) > limit {
			return v, waited, &HeldError{After: limit}
		}
		// The refusal is the only sign of the human: the display is
		// theirs until its quiet period has passed.
		d, err := Hold[struct{}]{Poll: minRefusalWait / 4,
			Held: func(context.Context) bool { return time.Now().Before(until) }}.Wait(ctx)
		waited += d
		if err != nil {
			return v, waited, err
		}
	}
}
