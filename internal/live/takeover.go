package live

import (
	"context"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/runs"
)

// Runs is what take-overs need from the run registry (*runs.Registry).
type Runs interface {
	Start(ctx context.Context, o runs.StartOptions) (runs.Run, error)
	Emit(ctx context.Context, runID, stream string, data any) (runs.Event, error)
	End(ctx context.Context, runID, status, errMsg string, result any) (runs.Run, error)
}

// RunKind is the kind of a take-over's run.
const RunKind = "takeover"

// StreamIntervention is the stream of a take-over's events, the same name
// the orchestrator's and the agent's pauses use.
const StreamIntervention = "intervention"

// InterventionEvent is an event of a take-over's run: "taken" when the
// human took the display, "handed_back" when acu got it back.
type InterventionEvent struct {
	Phase   string `json:"phase"`
	Display string `json:"display"`
	By      string `json:"by,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Inputs  int    `json:"inputs,omitempty"`
	HeldMs  int64  `json:"held_ms,omitempty"`
}

// Errors callers branch on.
var (
	// ErrNotHeld: input for a display nobody has taken over.
	ErrNotHeld = errors.New("the display is not taken over: take it over first (POST /v1/live/takeover)")
	// ErrHeld: a take-over of a display someone else holds.
	ErrHeld = errors.New("the display is already taken over")
)

// DefaultHoldTTL is how long a take-over lasts without a sign of its
// viewer (input or a renewal) before it is handed back by itself.
const DefaultHoldTTL = 15 * time.Second

// TakeoverOptions configure Takeovers.
type TakeoverOptions struct {
	Runs Runs // records each take-over; nil records none
	// TTL: a take-over whose viewer has been silent this long is handed
	// back; the hold (gate.Hold) is written to last this long and renewed
	// at a third of it. Default DefaultHoldTTL.
	TTL time.Duration
	// Gate carries the human's input, under the deny-list (the human is
	// exempt from the user-first pause only), and keeps the hold (on X11
	// the root property, on Wayland the file beside the compositor's
	// socket); nil makes one that allows every window.
	Gate   *gate.Gate
	Logger *slog.Logger
}

// Takeovers holds the displays humans have taken over. Safe for
// concurrent use.
type Takeovers struct {
	opts    TakeoverOptions
	log     *slog.Logger
	gate    *gate.Gate
	ownGate bool // made here: closed when Run ends

	mu    sync.Mutex
	held  map[string]*hold
	runMu sync.Mutex // one Run
}

// hold is one display taken over.
type hold struct {
	mu     sync.Mutex // input in order
	by     string
	runID  string
	since  time.Time
	seen   time.Time // the viewer's last sign
	inputs int
}

// NewTakeovers returns an empty table; Run keeps holds alive.
func NewTakeovers(o TakeoverOptions) *Takeovers {
	if o.TTL <= 0 {
		o.TTL = DefaultHoldTTL
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	t := &Takeovers{opts: o, log: o.Logger, held: make(map[string]*hold), gate: o.Gate}
	if t.gate == nil {
		t.gate, t.ownGate = gate.New(gate.Options{Input: gate.InputOptions{ClickDelay: -1}, Logger: o.Logger.With("component", "gate")}), true
	}
	return t
}

func (t *Takeovers) state(dpy string, h *hold) api.Takeover {
	st := api.Takeover{Display: dpy}
	if h == nil {
		return st
	}
	since := h.since
	st.Active, st.By, st.RunID, st.Since = true, h.by, h.runID, &since
	h.mu.Lock()
	st.Inputs = h.inputs
	h.mu.Unlock()
	return st
}

// State is dpy's take-over state.
func (t *Takeovers) State(dpy string) api.Takeover {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.state(dpy, t.held[dpy])
}

// Take gives dpy to the human by: it writes the hold every acu process
// on the display pauses for (through the gate, on X11 or Wayland) and
// records a run of kind "takeover". Taking a display one already holds
// renews it.
func (t *Takeovers) Take(ctx context.Context, dpy, by string) (api.Takeover, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h := t.held[dpy]; h != nil {
		if h.by != by {
			return t.state(dpy, h), fmt.Errorf("%w by %s", ErrHeld, h.by)
		}
		h.mu.Lock()
		h.seen = time.Now()
		h.mu.Unlock()
		return t.state(dpy, h), nil
	}
	// The display must be reachable before a run says it was taken.
	if _, err := t.gate.HoldWatch(ctx, dpy); err != nil {
		return api.Takeover{}, fmt.Errorf("take over %s: %w", dpy, err)
	}
	now := time.Now()
	h := &hold{by: by, since: now, seen: now}
	if t.opts.Runs != nil {
		r, err := t.opts.Runs.Start(ctx, runs.StartOptions{Kind: RunKind, Spec: map[string]string{"display": dpy, "by": by}})
		if err != nil {
			return api.Takeover{}, fmt.Errorf("take over %s: %w", dpy, err)
		}
		h.runID = r.ID
	}
	if err := t.gate.SetHold(ctx, dpy, gate.Hold{By: by, RunID: h.runID, Since: now.UTC(), Until: now.Add(t.opts.TTL).UTC()}); err != nil {
		t.close(context.WithoutCancel(ctx), dpy, h, "the hold could not be set: "+err.Error())
		return api.Takeover{}, fmt.Errorf("take over %s: %w", dpy, err)
	}
	t.emit(ctx, h, InterventionEvent{Phase: "taken", Display: dpy, By: by})
	t.held[dpy] = h
	t.log.Info("display taken over", "display", dpy, "by", by, "run_id", h.runID)
	return t.state(dpy, h), nil
}

// Release hands dpy back: the hold goes, paused agents and tasks resume.
func (t *Takeovers) Release(ctx context.Context, dpy, reason string) (api.Takeover, error) {
	t.mu.Lock()
	h := t.held[dpy]
	delete(t.held, dpy)
	t.mu.Unlock()
	if h == nil {
		return api.Takeover{Display: dpy}, ErrNotHeld
	}
	t.close(ctx, dpy, h, reason)
	return api.Takeover{Display: dpy}, nil
}

func (t *Takeovers) close(ctx context.Context, dpy string, h *hold, reason string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := t.gate.ClearHold(ctx, dpy); err != nil {
		t.log.Warn("clear the take-over hold", "display", dpy, "err", err)
	}
	held := time.Since(h.since)
	t.emit(ctx, h, InterventionEvent{Phase: "handed_back", Display: dpy, By: h.by, Reason: reason, Inputs: h.inputs, HeldMs: held.Milliseconds()})
	if t.opts.Runs != nil && h.runID != "" {
		if _, err := t.opts.Runs.End(context.WithoutCancel(ctx), h.runID, runs.StatusCompleted, "",
			map[string]any{"inputs": h.inputs, "held_ms": held.Milliseconds(), "reason": reason}); err != nil {
			t.log.Warn("end take-over run", "run_id", h.runID, "err", err)
		}
	}
	t.log.Info("display handed back", "display", dpy, "reason", reason, "run_id", h.runID)
}

func (t *Takeovers) emit(ctx context.Context, h *hold, ev InterventionEvent) {
	if t.opts.Runs == nil || h.runID == "" {
		return
	}
	if _, err := t.opts.Runs.Emit(context.WithoutCancel(ctx), h.runID, StreamIntervention, ev); err != nil {
		t.log.Warn("emit take-over event", "run_id", h.runID, "err", err)
	}
}

// Renew notes a sign of dpy's viewer, keeping its take-over.
func (t *Takeovers) Renew(dpy string) error {
	t.mu.Lock()
	h := t.held[dpy]
	t.mu.Unlock()
	if h == nil {
		return ErrNotHeld
	}
	h.mu.Lock()
	h.seen = time.Now()
	h.mu.Unlock()
	return nil
}

// InputError is an input event the device refused, naming it.
type InputError struct {
	Index int
	Err   error
}

func (e *InputError) Error() string { return fmt.Sprintf("events[%d]: %v", e.Index, e.Err) }
func (e *InputError) Unwrap() error { return e.Err }

// Input sends the human's events to dpy, in order; it needs a take-over.
func (t *Takeovers) Input(ctx context.Context, dpy string, evs []api.LiveInput) error {
	t.mu.Lock()
	h := t.held[dpy]
	t.mu.Unlock()
	if h == nil {
		return ErrNotHeld
	}
	for i, ev := range evs {
		if err := checkInput(ev); err != nil {
			return &InputError{Index: i, Err: err}
		}
	}
	hands, err := t.gate.Hands(ctx, dpy)
	if err != nil {
		return &InputError{Index: 0, Err: err}
	}
	// The human's input: audited as the take-over's, exempt from the
	// user-first pause (it is the user), not from the deny-list.
	who := gate.CallerOf(ctx)
	who.Engine, who.User, who.Run = "takeover", true, h.runID
	ctx = gate.WithCaller(ctx, who)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen = time.Now()
	for i, ev := range evs {
		if err := do(ctx, hands, ev); err != nil {
			return &InputError{Index: i, Err: err}
		}
		h.inputs++
	}
	return nil
}

func checkInput(ev api.LiveInput) error {
	switch ev.Type {
	case "move", "wheel":
	case "down", "up":
		if ev.Button < gate.ButtonLeft || ev.Button > gate.ButtonRight {
			return fmt.Errorf("button %d: use 1 (left), 2 (middle) or 3 (right)", ev.Button)
		}
	case "key":
		return gate.CheckKeys(ev.Keys)
	case "text":
		if ev.Text == "" {
			return errors.New("text: empty")
		}
	default:
		return fmt.Errorf("type %q: use move, down, up, wheel, key or text", ev.Type)
	}
	if ev.DX < -100 || ev.DX > 100 || ev.DY < -100 || ev.DY > 100 {
		return errors.New("dx, dy: use -100..100 wheel clicks")
	}
	return nil
}

func do(ctx context.Context, h *gate.Hands, ev api.LiveInput) (err error) {
	p := image.Pt(ev.X, ev.Y)
	switch ev.Type {
	case "move":
		_, err = h.MoveTo(ctx, p)
	case "down":
		_, err = h.ButtonDown(ctx, &p, ev.Button)
	case "up":
		_, err = h.ButtonUp(ctx, &p, ev.Button)
	case "wheel":
		_, err = h.ScrollAt(ctx, &p, ev.DX, ev.DY)
	case "key":
		_, err = h.KeyHold(ctx, ev.Keys, 0, 1)
	case "text":
		_, err = h.Type(ctx, ev.Text)
	}
	return err
}

// Run renews the holds of take-overs whose viewer is still there and
// hands back the others, until ctx ends; then it hands back every one.
func (t *Takeovers) Run(ctx context.Context) error {
	t.runMu.Lock()
	defer t.runMu.Unlock()
	tick := time.NewTicker(t.opts.TTL / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			t.releaseAll(context.WithoutCancel(ctx), "the daemon stopped")
			if t.ownGate {
				t.gate.Close()
			}
			return nil
		case <-tick.C:
			t.renew(ctx)
		}
	}
}

func (t *Takeovers) renew(ctx context.Context) {
	now := time.Now()
	t.mu.Lock()
	var stale []string
	for dpy, h := range t.held {
		h.mu.Lock()
		seen := h.seen
		h.mu.Unlock()
		if now.Sub(seen) > t.opts.TTL {
			stale = append(stale, dpy)
			continue
		}
		if err := t.gate.SetHold(ctx, dpy, gate.Hold{By: h.by, RunID: h.runID, Since: h.since.UTC(), Until: now.Add(t.opts.TTL).UTC()}); err != nil {
			t.log.Warn("renew the take-over hold", "display", dpy, "err", err)
		}
	}
	t.mu.Unlock()
	for _, dpy := range stale {
		_, _ = t.Release(ctx, dpy, "the viewer went away")
	}
}

func (t *Takeovers) releaseAll(ctx context.Context, reason string) {
	t.mu.Lock()
	dpys := make([]string, 0, len(t.held))
	for d := range t.held {
		dpys = append(dpys, d)
	}
	t.mu.Unlock()
	for _, d := range dpys {
		_, _ = t.Release(ctx, d, reason)
	}
}
