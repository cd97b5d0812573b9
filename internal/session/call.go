package session

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// TimeoutError is a model call that the session's per-call timeout ended
// (not the session's own end).
type TimeoutError struct {
	After time.Duration
	Err   error
}

func (e *TimeoutError) Error() string { return fmt.Sprintf("no reply within %s: %v", e.After, e.Err) }
func (e *TimeoutError) Unwrap() error { return e.Err }

// Call runs one model call f under its own timeout d (0: none beyond
// ctx's). When the timeout, not ctx, ends it, the error is a
// *TimeoutError naming the limit, so the loop can tell the user which
// setting to raise.
func Call[T any](ctx context.Context, d time.Duration, f func(context.Context) (T, error)) (T, error) {
	if d <= 0 {
		return f(ctx)
	}
	cctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	v, err := f(cctx)
	if err != nil && ctx.Err() == nil && cctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
		return v, &TimeoutError{After: d, Err: err}
	}
	return v, err
}
