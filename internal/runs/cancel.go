package runs

import (
	"context"
	"errors"
)

// CancelReason is a client's cancel without a reason of its own.
const CancelReason = "cancelled by a client"

// Cancel ends the live run id as cancelled, for reason (CancelReason when
// empty), and returns it as it ended. engine is the canceller of the run's
// kind in this process (the wait engine's, the task engine's), which stops
// its work and ends the run; without one, or when it does not run id (a
// run of another process, a task on another host of a fleet: ErrNotFound),
// the run is ended in the store, and its owner sees the end and stops.
func (r *Registry) Cancel(ctx context.Context, id, reason string, engine func(ctx context.Context, id, reason string) error) (Run, error) {
	if reason == "" {
		reason = CancelReason
	}
	var err error
	if engine != nil {
		err = engine(ctx, id, reason)
	}
	if engine == nil || errors.Is(err, ErrNotFound) {
		_, err = r.End(ctx, id, StatusCancelled, "", map[string]string{"reason": reason})
	}
	if err != nil {
		return Run{}, err
	}
	return r.Get(ctx, id)
}
