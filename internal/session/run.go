package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/runs"
)

// Registry records sessions as runs (*runs.Registry).
type Registry interface {
	Start(ctx context.Context, o runs.StartOptions) (runs.Run, error)
	Emit(ctx context.Context, runID, stream string, data any) (runs.Event, error)
	End(ctx context.Context, runID, status, errMsg string, result any) (runs.Run, error)
}

// Streams every loop's run carries (besides its own).
const (
	StreamIntervention = "intervention" // a pause for a human and the resume
	StreamError        = "error"        // a turn's failure the loop lived through
)

// endTimeout bounds recording a run's end, which happens after the loop's
// context may have ended.
const endTimeout = 10 * time.Second

// Run is one session's run: its events and its end, recorded on the
// registry, and the attribution of its effects. A nil *Run, or one with
// no registry, records nothing (a session without a run).
type Run struct {
	reg     Registry
	id      string
	started runs.Run // the run as Start recorded it (zero after Attach)
	engine  string
	log     *slog.Logger
	// OnEvent, when set, is shown every event recorded (a CLI's progress
	// lines, a caller's callback).
	OnEvent func(stream string, data any)
}

// Start records a new session of engine (the gate caller's engine name,
// "agent", "task", "computer") as a run.
func Start(ctx context.Context, reg Registry, engine string, o runs.StartOptions, log *slog.Logger) (*Run, error) {
	r, err := reg.Start(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("start the %s run: %w", engine, err)
	}
	s := Attach(reg, r.ID, engine, log)
	s.started = r
	return s, nil
}

// Started is the run as Start recorded it (its id, kind, spec, start
// time), for a surface that answers with it at once; zero after Attach.
func (r *Run) Started() runs.Run {
	if r == nil {
		return runs.Run{}
	}
	return r.started
}

// Attach is the session of a run already started (by a surface that
// returns its id at once, or by another daemon of a fleet).
func Attach(reg Registry, runID, engine string, log *slog.Logger) *Run {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Run{reg: reg, id: runID, engine: engine, log: log}
}

// ID is the run's id ("" without a run).
func (r *Run) ID() string {
	if r == nil {
		return ""
	}
	return r.id
}

// Acting returns ctx carrying the session as the caller of every effect
// made under it: the gate's audit names the engine and the run.
func (r *Run) Acting(ctx context.Context) context.Context {
	if r == nil {
		return ctx
	}
	who := gate.CallerOf(ctx)
	who.Engine, who.Run = r.engine, r.id
	return gate.WithCaller(ctx, who)
}

// Emit records an event on stream. Recording outlives ctx's cancel (the
// last turn of a cancelled session is still recorded); a run that has
// ended drops it silently, and other failures are logged, never returned:
// a session does not stop because its record failed.
func (r *Run) Emit(ctx context.Context, stream string, data any) {
	if r == nil {
		return
	}
	if r.reg != nil && r.id != "" {
		if _, err := r.reg.Emit(context.WithoutCancel(ctx), r.id, stream, data); err != nil && !errors.Is(err, runs.ErrEnded) {
			r.log.Warn("record a session event", "run_id", r.id, "engine", r.engine, "stream", stream, "err", err)
		}
	}
	if r.OnEvent != nil {
		r.OnEvent(stream, data)
	}
}

// End records the run's end with status, the error message (for a failed
// run) and the result. It runs after ctx may have ended, bounded by its
// own timeout; a run already ended (cancelled from outside) is left as it
// is.
func (r *Run) End(ctx context.Context, status, errMsg string, result any) {
	if r == nil || r.reg == nil || r.id == "" {
		return
	}
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), endTimeout)
	defer cancel()
	if _, err := r.reg.End(ectx, r.id, status, errMsg, result); err != nil && !errors.Is(err, runs.ErrEnded) {
		r.log.Warn("end the session's run", "run_id", r.id, "engine", r.engine, "err", err)
	}
}
