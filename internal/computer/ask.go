package computer

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

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

// Answerer is who answers a run that waits for the user.
type Answerer struct {
	// By names them on the resume event (a token's name).
	By string
	// Admin: they may accept the model's safety checks. The vendor means
	// a person to accept them, not the agent the checks are about. Scope
	// is their scope, named when it is not enough.
	Admin bool
	Scope string
	// May, when set, is the surface's check that they may change a run
	// that creator started (the token that created it, or a wider scope).
	May func(creator string) error
}

// ResumeError is a resume the run's state or the answerer does not allow.
type ResumeError struct {
	Kind    ResumeKind
	Field   string // the request's field at fault ("" for the run's state)
	Message string
}

func (e *ResumeError) Error() string { return e.Message }

// ResumeKind says why a resume was refused.
type ResumeKind uint8

// Resume refusals.
const (
	ResumeConflict  ResumeKind = iota + 1 // the run has ended, or does not wait for the user
	ResumeInvalid                         // the answer is wrong (a message that is no plain text, safety checks not acknowledged)
	ResumeForbidden                       // the answerer may not accept safety checks
)

// maxAnswer bounds the message handed to the model.
const maxAnswer = 4000

// Resume answers run runID, which waits for the user (its last control
// event is needs_user, written by AskThroughRun), with a resume event on
// its control stream carrying ans; the loop waiting for it goes on.
// Safety checks are passed only with ans.Acknowledge, and only by an
// admin. It returns the run as it is after the answer, and the event. A
// run that has ended or does not wait is a *ResumeError (conflict); an
// unknown run is runs.ErrNotFound.
func Resume(ctx context.Context, rc RunControl, runID string, ans Answer, who Answerer) (runs.Run, runs.Event, error) {
	if err := plainAnswer(ans.Message); err != nil {
		return runs.Run{}, runs.Event{}, err
	}
	run, err := rc.Get(ctx, runID)
	if err != nil {
		return runs.Run{}, runs.Event{}, err
	}
	if who.May != nil {
		if err := who.May(run.Creator); err != nil {
			return runs.Run{}, runs.Event{}, err
		}
	}
	if !run.Live() {
		return runs.Run{}, runs.Event{}, &ResumeError{Kind: ResumeConflict,
			Message: fmt.Sprintf("run %q has already ended (%s): there is nothing to resume", runID, run.Status)}
	}
	last, err := lastControl(ctx, rc, runID)
	if err != nil {
		return runs.Run{}, runs.Event{}, err
	}
	if last.Action != api.ControlNeedsUser {
		return runs.Run{}, runs.Event{}, &ResumeError{Kind: ResumeConflict,
			Message: fmt.Sprintf("run %q is not waiting for the user: only a run stopped by call_user or safety checks can be resumed", runID)}
	}
	if last.Reason == api.NeedsSafetyCheck {
		if !ans.Acknowledge {
			return runs.Run{}, runs.Event{}, &ResumeError{Kind: ResumeInvalid, Field: "acknowledge",
				Message: fmt.Sprintf("run %q waits on safety checks (%s): resume with acknowledge to accept them, or cancel the run", runID, last.Message)}
		}
		if !who.Admin {
			msg := "acknowledging safety checks needs an admin token (a person's decision)"
			if who.Scope != "" {
				msg += "; this token has the " + who.Scope + " scope"
			}
			return runs.Run{}, runs.Event{}, &ResumeError{Kind: ResumeForbidden, Field: "acknowledge", Message: msg}
		}
	}
	ev, err := rc.Emit(ctx, runID, api.StreamControl, api.ControlEvent{Action: api.ControlResume, Reason: last.Reason,
		Message: ans.Message, Acknowledge: ans.Acknowledge, By: who.By})
	if err != nil {
		return runs.Run{}, runs.Event{}, err
	}
	if run, err = rc.Get(ctx, runID); err != nil {
		return runs.Run{}, runs.Event{}, err
	}
	return run, ev, nil
}

// lastControl is the run's last control event (zero: none).
func lastControl(ctx context.Context, rc RunControl, runID string) (api.ControlEvent, error) {
	evs, err := rc.Events(ctx, 0, runs.Filter{RunID: runID, Streams: []string{api.StreamControl}}, 10000)
	var last api.ControlEvent
	if err != nil || len(evs) == 0 {
		return last, err
	}
	_ = json.Unmarshal(evs[len(evs)-1].Data, &last)
	return last, nil
}

// plainAnswer refuses a message no notifier or model prompt should carry:
// invalid UTF-8, control characters but tab and newline, more than
// maxAnswer bytes.
func plainAnswer(s string) error {
	bad := func(format string, args ...any) error {
		return &ResumeError{Kind: ResumeInvalid, Field: "message", Message: "message: " + fmt.Sprintf(format, args...)}
	}
	if len(s) > maxAnswer {
		return bad("must be at most %d bytes, got %d", maxAnswer, len(s))
	}
	if !utf8.ValidString(s) {
		return bad("must be valid UTF-8")
	}
	for i, r := range s {
		if (r < 0x20 && r != '\t' && r != '\n') || r == 0x7f {
			return bad("must not contain control characters (found %U at byte %d); only tab and newline are allowed", r, i)
		}
	}
	return nil
}
