package computer

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/runs"
)

// RunControl is the run store as a hand-off to the user needs it
// (*runs.Registry).
type RunControl interface {
	Emit(ctx context.Context, runID, stream string, data any) (runs.Event, error)
	Events(ctx context.Context, after int64, f runs.Filter, limit int) ([]runs.Event, error)
	Get(ctx context.Context, runID string) (runs.Run, error)
}

// askPoll is how often a run waiting for the user looks for the answer.
// The answer may come from any process on the database (`acu runs resume`
// or the daemon's POST /v1/runs/{id}/resume), so the store is read rather
// than this process's subscribers; a person's answer does not need a
// faster reply.
const askPoll = 250 * time.Millisecond

// AskThroughRun returns an AskUser that hands the loop to the user through
// the run: it writes a needs_user event on the run's control stream
// (api.StreamControl), calls asked, and waits for a resume event on that
// stream. It gives up with ErrNoAnswer after timeout, and with an error
// naming the status when the run is ended meanwhile (a cancel).
func AskThroughRun(rc RunControl, runID string, timeout time.Duration, asked func(Ask)) func(context.Context, Ask) (Answer, error) {
	return func(ctx context.Context, q Ask) (Answer, error) {
		ev, err := rc.Emit(ctx, runID, api.StreamControl, api.ControlEvent{Action: api.ControlNeedsUser, Reason: q.Reason, Message: q.Message, Pending: q.Pending})
		if err != nil {
			return Answer{}, fmt.Errorf("hand the run to the user: %w", err)
		}
		if asked != nil {
			asked(q)
		}
		deadline := time.NewTimer(timeout)
		defer deadline.Stop()
		tick := time.NewTicker(askPoll)
		defer tick.Stop()
		after := ev.Cursor
		for {
			select {
			case <-ctx.Done():
				return Answer{}, ctx.Err()
			case <-deadline.C:
				return Answer{}, fmt.Errorf("%w within %s", ErrNoAnswer, timeout)
			case <-tick.C:
			}
			evs, err := rc.Events(ctx, after, runs.Filter{RunID: runID, Streams: []string{api.StreamControl}}, 100)
			if err != nil {
				return Answer{}, fmt.Errorf("read the user's answer: %w", err)
			}
			for _, e := range evs {
				after = e.Cursor
				var c api.ControlEvent
				if json.Unmarshal(e.Data, &c) == nil && c.Action == api.ControlResume {
					return Answer{Acknowledge: c.Acknowledge, Message: c.Message, By: c.By}, nil
				}
			}
			run, err := rc.Get(ctx, runID)
			if err != nil {
				return Answer{}, fmt.Errorf("read the run: %w", err)
			}
			if !run.Live() {
				return Answer{}, fmt.Errorf("the run was %s while it waited for the user", run.Status)
			}
		}
	}
}
