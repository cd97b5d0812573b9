package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/annotate"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/guard"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/runlog"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/secret"
	"github.com/acu-dev/acu/internal/session"
)

// Phases reported in /state.
const (
	PhaseWaitingInject    = "waiting_inject"    // no model output to run: BOOT off, after an error, or after a stop
	PhaseExecuting        = "executing"         // running the turn's actions
	PhaseCapturing        = "capturing"         // waiting CAPTURE_DELAY and capturing
	PhaseAnnotating       = "annotating"        // drawing the overlays in Go
	PhaseWaitingAnnotated = "waiting_annotated" // annotator=panel: waiting for POST /annotated with pending_seq
	PhaseCallingVLM       = "calling_vlm"       // waiting for the model
	PhasePaused           = "paused"            // paused before the next turn (POST /control)
	PhaseStopped          = "stopped"           // the session ended; POST /inject starts a new one
)

// Annotators.
const (
	AnnotatorGo    = "go"    // overlays drawn in Go, no browser in the loop
	AnnotatorPanel = "panel" // the seed's protocol: the panel draws and POSTs /annotated
)

// RunKind is the runs registry kind of an agent session.
const RunKind = "agent"

// StreamTurn is the event stream a session's turns are emitted on.
const StreamTurn = "turn"

// Options configures an Agent. cmd/acu builds them from the ACU_AGENT_*
// settings.
type Options struct {
	// Display is the display the agent sees and drives: an X display, or
	// a Wayland socket (gate.IsWayland).
	Display string
	// Hub captures the display (a *capture.Hub for X11 displays; cmd/acu
	// passes one that reads Wayland displays too); required. Gate is
	// where every action goes, under the daemon's policy (ACU_ACT_*); nil
	// makes Run one of its own that allows every window.
	Hub  Screens
	Gate *gate.Gate
	// Model answers each turn (an *llm.Client for the OpenAI-compatible
	// API_URL); required. ModelName overrides the client's model when set.
	Model       llm.Chatter
	ModelName   string
	Temperature float64
	TopP        float64
	MaxTokens   int
	// ModelTimeout bounds one whole model call (all its attempts) on top of
	// the client's per-attempt timeout; 0 means none beyond the client's.
	ModelTimeout time.Duration
	// SystemPrompt replaces the built-in prompt when set.
	SystemPrompt string

	// Crop is CAPTURE_CROP: the working area, x1,y1,x2,y2 in 0..1000 of the
	// screen; all zero means the whole screen.
	Crop [4]int
	// CaptureWidth and CaptureHeight, when both > 0, are the screenshot's
	// size; else CaptureScalePercent (1..99) scales it; else full size.
	CaptureWidth, CaptureHeight int
	CaptureScalePercent         int
	CaptureDelay                time.Duration
	// Physical is PHYSICAL_EXECUTION: false maps and logs actions without
	// sending input.
	Physical    bool
	ActionDelay time.Duration
	// ClickHold is how long a click holds its button (0: internal/input's
	// default, 10 ms; negative: no hold), ACU_AGENT_CLICK_HOLD.
	ClickHold     time.Duration
	DragSteps     int
	DragStepDelay time.Duration

	// UI is UI_CONFIG; Annotator is AnnotatorGo (default) or AnnotatorPanel.
	UI        annotate.Config
	Annotator string

	// RunsDir is where run_0001/... directories go; empty writes none.
	RunsDir   string
	LogLayout runlog.Layout
	LogToFile bool

	// Boot starts the first session with BootText as the model's output.
	Boot     bool
	BootText string

	// MaxTurns and MaxCostUSD end a session when reached; 0 means no limit.
	// A cost limit needs every call's cost: New refuses a Model whose
	// CheckPriced fails (*llm.Client: no price, no provider figure, not
	// local), and a call that comes back with no cost ends the session.
	MaxTurns   int
	MaxCostUSD float64

	// Runs records each session as a run of kind "agent"; nil records none.
	Runs *runs.Registry
	// Frames keeps each turn's annotated frame (PNG, once per content) for
	// the run timeline; nil keeps none.
	Frames FrameStore
	// Hold reports a human's take-over of the display (the live view's
	// hand-over, gate.HoldWatch); while held the loop pauses before its
	// next turn and records the pause as an intervention event. nil
	// watches the display's hold through the gate (Gate.HoldWatch).
	Hold Holder
	// Token protects the HTTP endpoints (bearer header, or the X-Acu-Session
	// header of a page logged in with a one-time link); empty leaves them
	// open to loopback clients that pass Guard (tests only).
	Token secret.String
	// PanelFile is a panel page of the user's own to serve at / instead of
	// acu's (ACU_AGENT_PANEL_FILE: the origin engine's panel.html works
	// unchanged). acu adds its login and a fetch shim, and allows the
	// page's inline scripts and styles.
	PanelFile string
	Guard     guard.Guard
	// MaxBody caps request bodies (POST /annotated carries a PNG); default
	// 32 MiB.
	MaxBody int64

	Logger *slog.Logger
	Now    func() time.Time
}

// Screens captures a display's frames.
type Screens interface {
	Capture(ctx context.Context, dpy string, t capture.Target) (*frame.Frame, error)
}

// Holder reports whether a human holds the display.
type Holder interface {
	Held(ctx context.Context) (bool, string, error)
}

// StreamIntervention is the stream a session's pauses for a human's
// take-over are emitted on (as the orchestrator's tasks do).
const StreamIntervention = "intervention"

// InterventionEvent is an event on StreamIntervention: the session paused
// for a human ("paused", with who holds the display) or resumed after the
// hand-back ("resumed").
type InterventionEvent struct {
	Turn     int    `json:"turn"`
	Phase    string `json:"phase"`
	Detail   string `json:"detail,omitempty"`
	PausedMs int64  `json:"paused_ms,omitempty"`
}

// Agent is the desktop agent loop and its HTTP surface.
type Agent struct {
	opts Options
	log  *slog.Logger
	ann  *annotate.Annotator

	inbox     chan string     // model outputs to run: boot, /inject
	annotated chan annotation // panel annotator posts
	control   chan string     // pause, resume, step, stop
	sessions  *guard.Sessions

	mu    sync.Mutex
	st    State
	trail [][]Action // newest first

	hands    *gate.Hands
	hold     Holder
	area     gate.Area
	rawBuf   []byte
	annBuf   []byte
	rawEnc   frame.PNGEncoder
	annEnc   frame.PNGEncoder
	bg       sync.WaitGroup // background work of the last turn
	paused   bool
	stepOnce bool
	// meter counts the session's cost against its budget; run records
	// it (never nil while a session runs).
	meter  session.Meter
	run    *session.Run
	dir    *runlog.Dir
	dirLog *slog.Logger
}

type annotation struct {
	seq int
	png []byte
}

// New checks opts and returns an Agent. Nothing starts until Run.
func New(opts Options) (*Agent, error) {
	if opts.Hub == nil {
		return nil, errors.New("agent: no capture hub")
	}
	if opts.Model == nil {
		return nil, errors.New("agent: no model client: set ACU_AGENT_API_URL")
	}
	if opts.Display == "" {
		return nil, errors.New("agent: no display: set DISPLAY")
	}
	if err := (session.Budget{MaxCost: opts.MaxCostUSD}).CheckPriced(opts.Model, ""); err != nil {
		return nil, fmt.Errorf("agent: cost limit of $%g cannot be kept: %w: set the model's price, or no limit", opts.MaxCostUSD, err)
	}
	switch opts.Annotator {
	case "":
		opts.Annotator = AnnotatorGo
	case AnnotatorGo, AnnotatorPanel:
	default:
		return nil, fmt.Errorf("agent: annotator %q: want go or panel", opts.Annotator)
	}
	if opts.UI.ExecutedHeat.TrailTurns == 0 {
		opts.UI = annotate.Default()
	}
	if err := opts.UI.Validate(); err != nil {
		return nil, err
	}
	if opts.LogLayout == "" {
		opts.LogLayout = runlog.Flat
	}
	if opts.MaxTokens <= 0 {
		opts.MaxTokens = 1000
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = 32 << 20
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.SystemPrompt == "" {
		opts.SystemPrompt = DefaultSystemPrompt
	}
	a := &Agent{
		opts: opts, log: opts.Logger, ann: annotate.New(opts.UI),
		inbox: make(chan string, 1), annotated: make(chan annotation), control: make(chan string, 4),
		sessions: guard.NewSessions(opts.Now),
	}
	a.st = State{Phase: PhaseWaitingInject, Annotator: opts.Annotator, BBoxes: []Box{}, Actions: []Action{}, Trail: [][]Action{}}
	if opts.Boot {
		a.inbox <- opts.BootText
	}
	return a, nil
}

// BaseURL turns the seed's API_URL (the full .../v1/chat/completions URL) or
// a base URL up to /v1 into the base URL internal/llm takes.
func BaseURL(apiURL string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(apiURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("API_URL %q: want an http(s) URL such as http://127.0.0.1:1235/v1/chat/completions", apiURL)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/chat/completions")
	return strings.TrimSuffix(u.String(), "/"), nil
}

// Run runs the loop until ctx ends: it waits for model output (BOOT or
// POST /inject), runs sessions of turns, and records each session as a run.
//
// A display that is not there yet (the daemon starting before X) is retried
// with backoff up to 30 s apart while the HTTP surface already answers; the
// error shows in /state.
func (a *Agent) Run(ctx context.Context) error {
	var release func()
	for wait := time.Second; ; wait = min(wait*2, 30*time.Second) {
		var err error
		if release, err = a.prepare(ctx); err == nil {
			break
		}
		a.log.Warn("agent cannot use its display yet; retrying", "display", a.opts.Display, "in", wait, "err", err)
		a.mu.Lock()
		a.st.Error = err.Error()
		a.mu.Unlock()
		if sleep(ctx, wait) != nil {
			return nil
		}
	}
	defer release()
	a.mu.Lock()
	a.st.Error = ""
	a.mu.Unlock()
	a.log.Info("agent ready", "display", a.opts.Display, "area", a.area.String(), "annotator", a.opts.Annotator,
		"physical", a.opts.Physical, "boot", a.opts.Boot)
	for {
		a.mu.Lock()
		if a.st.Phase != PhaseStopped {
			a.st.Phase = PhaseWaitingInject
		}
		a.mu.Unlock()
		var text string
		select {
		case <-ctx.Done():
			return nil
		case text = <-a.inbox:
		case c := <-a.control:
			a.applyControl(c)
			continue
		}
		if err := a.session(ctx, text); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// prepare takes the agent's hands on the working area from the gate (its
// own, when Options.Gate is nil).
func (a *Agent) prepare(ctx context.Context) (release func(), err error) {
	g, release := a.opts.Gate, func() {}
	if g == nil {
		g = gate.New(gate.Options{DefaultDisplay: a.opts.Display, Logger: a.log.With("component", "gate")})
		release = g.Close
	}
	sw, sh, err := g.ScreenSize(ctx, a.opts.Display) // X11's root window or the Wayland output
	if err != nil {
		release()
		return nil, fmt.Errorf("agent: open display %s for input: %w", a.opts.Display, err)
	}
	a.area = gate.AreaFromCrop(sw, sh, a.opts.Crop)
	h, err := g.HandsFor(ctx, a.opts.Display, gate.DeviceOptions{Area: a.area, ClickHold: a.opts.ClickHold,
		DragSteps: a.opts.DragSteps, DragStepDelay: a.opts.DragStepDelay, DryRun: !a.opts.Physical})
	if err != nil {
		release()
		return nil, fmt.Errorf("agent: input on %s: %w", a.opts.Display, err)
	}
	a.hands = h
	a.hold = a.opts.Hold
	if a.hold == nil {
		hw, err := g.HoldWatch(ctx, a.opts.Display) // X11's root property or Wayland's hold file
		if err != nil {
			release()
			return nil, fmt.Errorf("agent: watch the take-over hold on %s: %w", a.opts.Display, err)
		}
		a.hold = hw
	}
	return release, nil
}

// errStop ends a session on request.
var errStop = session.ErrStopped

// session runs turns from the first model output until a stop, a limit, a
// failure of the screen or input, or ctx's end. Failures end the session
// (and its run, status error), never the process: the loop then waits for
// the next /inject.
func (a *Agent) session(ctx context.Context, text string) (err error) {
	if err := a.startSession(ctx); err != nil {
		// Not fatal to the process: report it and wait for the next /inject.
		a.log.Warn("agent session not started", "err", err)
		a.mu.Lock()
		a.st.Phase, a.st.Error = PhaseStopped, err.Error()
		a.st.MsgID++
		a.mu.Unlock()
		return nil
	}
	status, msg := runs.StatusCompleted, ""
	defer func() { a.endSession(status, msg) }()
	for {
		if err := a.gate(ctx); err != nil {
			status = runs.StatusCancelled
			if errors.Is(err, errStop) {
				msg = "stopped by POST /control"
			}
			return nil
		}
		if err := a.waitHold(ctx); err != nil {
			status = runs.StatusCancelled
			if errors.Is(err, errStop) {
				msg = "stopped by POST /control"
			}
			return nil
		}
		next, done, err := a.turn(ctx, text)
		if err != nil {
			status = runs.StatusCancelled
			if !errors.Is(err, errStop) && ctx.Err() == nil {
				status, msg = runs.StatusError, err.Error()
			}
			return nil
		}
		if done != "" {
			msg = done
			return nil
		}
		text = next
	}
}

func (a *Agent) startSession(ctx context.Context) error {
	a.ann.Reset()
	a.mu.Lock()
	a.trail = nil
	a.meter = session.Meter{Budget: session.Budget{MaxSteps: a.opts.MaxTurns, MaxCost: a.opts.MaxCostUSD}}
	a.run = session.Attach(nil, "", RunKind, a.log)
	a.st = State{Phase: PhaseExecuting, Annotator: a.opts.Annotator, BBoxes: []Box{}, Actions: []Action{}, Trail: [][]Action{}, MsgID: a.st.MsgID}
	a.mu.Unlock()
	if a.opts.RunsDir != "" {
		d, err := runlog.Create(runlog.Options{Base: a.opts.RunsDir, Layout: a.opts.LogLayout, LogToFile: a.opts.LogToFile, Now: a.opts.Now})
		if err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		a.dir = d
		a.dirLog = nil
		if w := d.Log(); w != nil {
			a.dirLog = slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}
	}
	if a.opts.Runs != nil {
		spec := map[string]any{"display": a.opts.Display, "crop": a.opts.Crop, "annotator": a.opts.Annotator,
			"physical": a.opts.Physical, "maxTurns": a.opts.MaxTurns, "maxCostUsd": a.opts.MaxCostUSD}
		if a.dir != nil {
			spec["runDir"] = a.dir.Path()
		}
		r, err := session.Start(ctx, a.opts.Runs, RunKind, runs.StartOptions{Kind: RunKind, Spec: spec}, a.log)
		if err != nil {
			a.log.Warn("agent session not recorded as a run", "err", err)
		} else {
			a.run = r
		}
	}
	a.mu.Lock()
	a.st.RunID = a.run.ID()
	if a.dir != nil {
		a.st.RunDir = a.dir.Path()
	}
	a.mu.Unlock()
	a.logInfo("agent session started", "run_id", a.run.ID(), "run_dir", a.st.RunDir)
	return nil
}

func (a *Agent) endSession(status, msg string) {
	a.flush()
	a.logInfo("agent session ended", "run_id", a.run.ID(), "status", status, "reason", msg)
	errMsg := ""
	if status == runs.StatusError {
		errMsg = msg
	}
	a.mu.Lock()
	res := map[string]any{"turns": a.st.Turn, "costUsd": a.meter.CostUSD, "reason": msg}
	if a.meter.Unpriced > 0 {
		res["costUnknown"], res["unpricedCalls"] = true, a.meter.Unpriced
	}
	a.mu.Unlock()
	a.run.End(context.Background(), status, errMsg, res)
	if a.dir != nil {
		if err := a.dir.Close(); err != nil {
			a.log.Warn("close run directory", "err", err)
		}
		a.dir, a.dirLog = nil, nil
	}
	a.run = session.Attach(nil, "", RunKind, a.log)
	a.mu.Lock()
	a.st.Phase = PhaseStopped
	if status == runs.StatusError {
		a.st.Error = msg
	}
	a.st.MsgID++
	a.mu.Unlock()
}

// logInfo logs to the process log and main.log.
func (a *Agent) logInfo(msg string, args ...any) {
	a.log.Info(msg, args...)
	if a.dirLog != nil {
		a.dirLog.Info(msg, args...)
	}
}

func (a *Agent) logWarn(msg string, args ...any) {
	a.log.Warn(msg, args...)
	if a.dirLog != nil {
		a.dirLog.Warn(msg, args...)
	}
}

// gate blocks while paused; a step lets one turn through.
func (a *Agent) gate(ctx context.Context) error {
	for {
		// Drain pending controls without blocking.
		select {
		case c := <-a.control:
			if a.applyControl(c) {
				return errStop
			}
			continue
		default:
		}
		a.mu.Lock()
		paused, step := a.paused, a.stepOnce
		if paused && step {
			a.stepOnce = false
		}
		a.mu.Unlock()
		if !paused || step {
			return nil
		}
		a.setPhase(PhasePaused)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case c := <-a.control:
			if a.applyControl(c) {
				return errStop
			}
		}
	}
}

// holdPoll is how often a paused session looks at the hold again.
const holdPoll = 200 * time.Millisecond

// waitHold pauses while a human holds the display (Options.Hold), recording
// the pause and the resume on the session's run. A stop ends the wait.
func (a *Agent) waitHold(ctx context.Context) error {
	held, detail, err := a.hold.Held(ctx)
	if err != nil || !held {
		return nil // a hold that cannot be read holds nothing; the turn says why the display failed
	}
	a.mu.Lock()
	turn := a.st.Turn
	a.st.Paused, a.st.Phase = true, PhasePaused
	a.st.MsgID++
	a.mu.Unlock()
	a.run.Emit(ctx, StreamIntervention, InterventionEvent{Turn: turn, Phase: "paused", Detail: detail})
	a.logInfo("agent paused: the display is taken over", "run_id", a.run.ID(), "detail", detail)
	paused, err := session.Hold[string]{Poll: holdPoll, Control: a.control, Apply: a.applyControl, Held: func(ctx context.Context) bool {
		held, _, err := a.hold.Held(ctx)
		return err == nil && held
	}}.Wait(ctx)
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.st.Paused, a.st.Phase = a.paused, PhaseExecuting
	a.st.MsgID++
	a.mu.Unlock()
	a.run.Emit(ctx, StreamIntervention, InterventionEvent{Turn: turn, Phase: "resumed", PausedMs: paused.Milliseconds()})
	a.logInfo("agent resumed: the display was handed back", "run_id", a.run.ID())
	return nil
}

// applyControl applies pause/resume/step and reports a stop.
func (a *Agent) applyControl(c string) (stop bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch c {
	case "pause":
		a.paused = true
	case "resume":
		a.paused, a.stepOnce = false, false
	case "step":
		a.paused, a.stepOnce = true, true
	case "stop":
		return true
	}
	a.st.Paused = a.paused
	a.st.MsgID++
	return false
}

func (a *Agent) setPhase(p string) {
	a.mu.Lock()
	a.st.Phase = p
	a.mu.Unlock()
}

// turn runs one turn from the model output text and returns the model's next
// output, or done with the reason the session ends (a limit).
func (a *Agent) turn(ctx context.Context, text string) (next, done string, err error) {
	n, out, shot, annPNG, err := a.act(ctx, text)
	if err != nil {
		return "", "", err
	}
	if a.meter.Budget.StepsSpent(n) {
		return "", (&session.LimitError{Kind: session.LimitSteps, Steps: a.opts.MaxTurns}).Error(), nil
	}
	a.setPhase(PhaseCallingVLM)
	reply, err := a.callModel(ctx, n, out, shot.w, shot.h, annPNG)
	if err != nil {
		if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
		// The loop stays usable: report the error and wait for /inject.
		msg := err.Error()
		a.logWarn("model call failed; POST /inject to continue", "turn", n, "err", err)
		a.mu.Lock()
		a.st.Error = msg
		a.st.Phase = PhaseWaitingInject
		a.st.MsgID++
		a.mu.Unlock()
		a.run.Emit(ctx, session.StreamError, map[string]any{"turn": n, "error": msg})
		select {
		case <-ctx.Done():
			return "", "", ctx.Err()
		case t := <-a.inbox:
			return t, "", nil
		case c := <-a.control:
			for {
				if a.applyControl(c) {
					return "", "", errStop
				}
				select {
				case <-ctx.Done():
					return "", "", ctx.Err()
				case t := <-a.inbox:
					return t, "", nil
				case c = <-a.control:
				}
			}
		}
	}
	a.mu.Lock()
	// A limit ends the session: the cost is spent, or cannot be kept on a
	// call of unknown cost (stop rather than run unbounded).
	limit := a.meter.Add(reply)
	a.st.CostUSD, a.st.ModelMs = a.meter.CostUSD, a.meter.ModelMs
	a.st.CostUnknown, a.st.UnpricedCalls = a.meter.Unpriced > 0, a.meter.Unpriced
	a.mu.Unlock()
	if limit != nil {
		return "", limit.Error(), nil
	}
	return reply.Text, "", nil
}

// act is a turn up to the model call: parse, execute, capture, annotate
// (or wait for the panel's annotation), save and emit. It returns the turn
// number, the parsed output, the screenshot and the annotated PNG.
func (a *Agent) act(ctx context.Context, text string) (n int, out Output, s shot, annPNG []byte, err error) {
	a.flush()
	out = Parse(text)
	a.mu.Lock()
	a.st.Turn++
	n = a.st.Turn
	a.st.Phase = PhaseExecuting
	a.st.Error = ""
	a.st.Observation, a.st.BBoxes, a.st.Actions, a.st.Rejected, a.st.VLMJSON = out.Observation, out.BBoxes, out.Actions, out.Rejected, text
	a.mu.Unlock()
	for _, r := range out.Rejected {
		a.logWarn("action rejected", "turn", n, "kind", r.Kind, "name", r.Name, "reason", r.Reason)
	}
	execErrs := a.execute(ctx, n, out.Actions)
	if ctx.Err() != nil {
		return 0, out, shot{}, nil, ctx.Err()
	}
	a.setPhase(PhaseCapturing)
	if err := sleep(ctx, a.opts.CaptureDelay); err != nil {
		return 0, out, shot{}, nil, err
	}
	s, err = a.capture(ctx)
	if err != nil {
		return 0, out, shot{}, nil, err
	}
	marks := a.marks(out.Actions)
	trail := a.ann.Push(marks)
	a.pushTrail(out.Actions)

	if a.opts.Annotator == AnnotatorGo {
		a.setPhase(PhaseAnnotating)
		annPNG = a.annotateAndEncode(s, out.BBoxes, trail)
		a.mu.Lock()
		a.st.RawPNG, a.st.AnnotatedPNG, a.st.PendingSeq, a.st.AnnotatedSeq = nil, annPNG, n, n
		a.st.Width, a.st.Height = s.w, s.h
		a.st.MsgID++
		a.mu.Unlock()
		// The raw PNG (for the run directory and the panel's raw view) is
		// encoded and saved off the turn's critical path, while the model
		// call runs; flush waits for it before the next turn.
		// s.pix is an immutable frame from the hub or the resize buffer,
		// which the next turn overwrites only after flush.
		a.bg.Add(1)
		go func() {
			defer a.bg.Done()
			rawPNG := a.rawEnc.Encode(s.pix, s.w, s.h, s.stride)
			a.mu.Lock()
			if a.st.Turn == n {
				a.st.RawPNG = rawPNG
				a.st.MsgID++
			}
			a.mu.Unlock()
			a.saveRaw(n, out, text, rawPNG)
			a.saveAnnotated(n, annPNG)
		}()
		a.emitTurn(ctx, n, out, execErrs, annPNG)
		return n, out, s, annPNG, nil
	}
	var rawPNG []byte
	{
		rawPNG = a.rawEnc.Encode(s.pix, s.w, s.h, s.stride)
		a.mu.Lock()
		a.st.RawPNG, a.st.AnnotatedPNG, a.st.PendingSeq = rawPNG, nil, n
		a.st.Width, a.st.Height = s.w, s.h
		a.st.Phase = PhaseWaitingAnnotated
		a.st.MsgID++
		a.mu.Unlock()
	}
	a.saveRaw(n, out, text, rawPNG)
	if a.opts.Annotator == AnnotatorPanel {
		annPNG, err = a.waitAnnotated(ctx, n)
		if err != nil {
			return 0, out, shot{}, nil, err
		}
	}
	a.saveAnnotated(n, annPNG)
	a.emitTurn(ctx, n, out, execErrs, annPNG)

	return n, out, s, annPNG, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// execute runs the actions through XTest (or dry), ACTION_DELAY apart, and
// returns per-action errors (nil entries for successes).
func (a *Agent) execute(ctx context.Context, n int, acts []Action) []string {
	errs := make([]string, len(acts))
	for i, act := range acts {
		if i > 0 {
			if sleep(ctx, a.opts.ActionDelay) != nil {
				return errs
			}
		}
		if _, err := a.hands.Do(a.run.Acting(ctx), act.inputAction()); err != nil {
			errs[i] = err.Error()
			a.logWarn("action failed", "turn", n, "index", i, "name", act.Name, "err", err)
			continue
		}
		if a.dirLog != nil {
			a.dirLog.Debug("action", "turn", n, "index", i, "name", act.Name, "x1", act.X1, "y1", act.Y1)
		}
	}
	return errs
}

// callModel sends the system prompt, the observation and the annotated
// screenshot, and returns the reply.
func (a *Agent) callModel(ctx context.Context, n int, out Output, w, h int, png []byte) (llm.Response, error) {
	req := llm.Request{
		Model: a.opts.ModelName, System: a.opts.SystemPrompt, MaxTokens: a.opts.MaxTokens,
		Temperature: a.opts.Temperature, TopP: a.opts.TopP, RunID: a.run.ID(),
		Messages: []llm.Message{{Role: "user", Text: UserText(n, out, w, h), Images: []llm.Image{{MIME: "image/png", Data: png}}}},
	}
	resp, err := session.Call(ctx, a.opts.ModelTimeout, func(ctx context.Context) (llm.Response, error) { return a.opts.Model.Chat(ctx, req) })
	var te *session.TimeoutError
	if errors.As(err, &te) {
		return resp, fmt.Errorf("model call for turn %d: no reply within %s (ACU_AGENT_VLM_HTTP_TIMEOUT_SECONDS): %w", n, te.After, te.Err)
	}
	if err != nil {
		return resp, fmt.Errorf("model call for turn %d: %w", n, err)
	}
	return resp, nil
}
