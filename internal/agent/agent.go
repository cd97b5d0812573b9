package agent

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"io"
	"log/slog"
	"math"
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
	"github.com/acu-dev/acu/internal/store"
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
	// Display is the X display the agent sees and drives.
	Display string
	// Hub captures the display; required. Gate is where every action
	// goes, under the daemon's policy (ACU_ACT_*); nil makes Run one of
	// its own that allows every window.
	Hub  *capture.Hub
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
	// watches the display's hold on the input connection.
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

// FrameStore keeps the frames a run saw, once per content hash
// (*store.DB).
type FrameStore interface {
	PutRunFrame(ctx context.Context, runID string, f store.Frame, at time.Time) error
}

// keepFrame stores a turn's annotated PNG (Options.Frames) and returns its
// hash, "" when none is kept.
func (a *Agent) keepFrame(ctx context.Context, png []byte) string {
	if a.opts.Frames == nil || a.runID == "" || len(png) < 24 {
		return ""
	}
	sum := sha256.Sum256(png)
	h := "png-" + hex.EncodeToString(sum[:12])
	w := int(binary.BigEndian.Uint32(png[16:20])) // the IHDR's width and height
	ht := int(binary.BigEndian.Uint32(png[20:24]))
	if err := a.opts.Frames.PutRunFrame(context.WithoutCancel(ctx), a.runID, store.Frame{Hash: h, JPEG: png, Width: w, Height: ht}, a.opts.Now()); err != nil {
		a.log.Warn("keep a turn's frame", "run_id", a.runID, "err", err)
		return ""
	}
	return h
}

// Holder reports whether a human holds the display (*gate.HoldWatch).
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
	cost     float64
	runID    string
	dir      *runlog.Dir
	dirLog   *slog.Logger
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
	if p, ok := opts.Model.(interface{ CheckPriced(model string) error }); ok && opts.MaxCostUSD > 0 {
		if err := p.CheckPriced(""); err != nil {
			return nil, fmt.Errorf("agent: cost limit of $%g cannot be kept: %w: set the model's price, or no limit", opts.MaxCostUSD, err)
		}
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
	conn, err := g.Conn(ctx, a.opts.Display)
	if err != nil {
		release()
		return nil, fmt.Errorf("agent: open display %s for input: %w", a.opts.Display, err)
	}
	a.area = gate.AreaFromCrop(conn.Screen.Width, conn.Screen.Height, a.opts.Crop)
	h, err := g.HandsFor(ctx, a.opts.Display, gate.DeviceOptions{Area: a.area, ClickHold: a.opts.ClickHold,
		DragSteps: a.opts.DragSteps, DragStepDelay: a.opts.DragStepDelay, DryRun: !a.opts.Physical})
	if err != nil {
		release()
		return nil, fmt.Errorf("agent: input on %s: %w", a.opts.Display, err)
	}
	a.hands = h
	a.hold = a.opts.Hold
	if a.hold == nil {
		a.hold = gate.NewHoldWatch(conn)
	}
	return release, nil
}

// errStop ends a session on request.
var errStop = errors.New("stopped")

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
	a.cost = 0
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
		r, err := a.opts.Runs.Start(ctx, runs.StartOptions{Kind: RunKind, Spec: spec})
		if err != nil {
			a.log.Warn("agent session not recorded as a run", "err", err)
		} else {
			a.runID = r.ID
		}
	}
	a.mu.Lock()
	a.st.RunID = a.runID
	if a.dir != nil {
		a.st.RunDir = a.dir.Path()
	}
	a.mu.Unlock()
	a.logInfo("agent session started", "run_id", a.runID, "run_dir", a.st.RunDir)
	return nil
}

func (a *Agent) endSession(status, msg string) {
	a.flush()
	a.logInfo("agent session ended", "run_id", a.runID, "status", status, "reason", msg)
	if a.opts.Runs != nil && a.runID != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		errMsg := ""
		if status == runs.StatusError {
			errMsg = msg
		}
		a.mu.Lock()
		res := map[string]any{"turns": a.st.Turn, "costUsd": a.cost, "reason": msg}
		if a.st.CostUnknown {
			res["costUnknown"], res["unpricedCalls"] = true, a.st.UnpricedCalls
		}
		a.mu.Unlock()
		if _, err := a.opts.Runs.End(ctx, a.runID, status, errMsg, res); err != nil {
			a.log.Warn("end agent run", "run_id", a.runID, "err", err)
		}
		cancel()
	}
	if a.dir != nil {
		if err := a.dir.Close(); err != nil {
			a.log.Warn("close run directory", "err", err)
		}
		a.dir, a.dirLog = nil, nil
	}
	a.runID = ""
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
	start := time.Now()
	a.mu.Lock()
	turn := a.st.Turn
	a.st.Paused, a.st.Phase = true, PhasePaused
	a.st.MsgID++
	a.mu.Unlock()
	a.emit(ctx, StreamIntervention, InterventionEvent{Turn: turn, Phase: "paused", Detail: detail})
	a.logInfo("agent paused: the display is taken over", "run_id", a.runID, "detail", detail)
	t := time.NewTicker(holdPoll)
	defer t.Stop()
	for held {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case c := <-a.control:
			if a.applyControl(c) {
				return errStop
			}
		case <-t.C:
			if held, _, err = a.hold.Held(ctx); err != nil {
				held = false
			}
		}
	}
	a.mu.Lock()
	a.st.Paused, a.st.Phase = a.paused, PhaseExecuting
	a.st.MsgID++
	a.mu.Unlock()
	a.emit(ctx, StreamIntervention, InterventionEvent{Turn: turn, Phase: "resumed", PausedMs: time.Since(start).Milliseconds()})
	a.logInfo("agent resumed: the display was handed back", "run_id", a.runID)
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
	if a.opts.MaxTurns > 0 && n >= a.opts.MaxTurns {
		return "", fmt.Sprintf("turn limit of %d reached", a.opts.MaxTurns), nil
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
		a.emit(ctx, "error", map[string]any{"turn": n, "error": msg})
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
	a.cost += reply.CostUSD
	a.st.CostUSD = a.cost
	a.st.ModelMs += float64(reply.Latency.Microseconds()) / 1000
	if !reply.CostKnown {
		a.st.CostUnknown = true
		a.st.UnpricedCalls++
	}
	cost := a.cost
	a.mu.Unlock()
	if a.opts.MaxCostUSD > 0 && !reply.CostKnown {
		// The limit cannot be kept on calls of unknown cost: stop rather
		// than run unbounded.
		return "", fmt.Sprintf("cost limit of $%.4f cannot be kept: the call to model %s came back with no cost and the model has no price "+
			"(set its price in ACU_MODEL_PRICES); $%.4f known so far", a.opts.MaxCostUSD, reply.Model, cost), nil
	}
	if a.opts.MaxCostUSD > 0 && cost >= a.opts.MaxCostUSD {
		return "", fmt.Sprintf("cost limit of $%.4f reached ($%.4f spent)", a.opts.MaxCostUSD, cost), nil
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
		if _, err := a.hands.Do(gate.WithCaller(ctx, gate.Caller{Engine: "agent", Run: a.runID}), act.inputAction()); err != nil {
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

// shot is the post-action screenshot: the working area, resized, as BGRX.
type shot struct {
	pix    []byte
	w, h   int
	stride int
}

// capture reads the screen, crops it to the working area (the same pixels
// input maps into) and resizes it as configured.
func (a *Agent) capture(ctx context.Context) (shot, error) {
	f, err := a.opts.Hub.Capture(ctx, a.opts.Display, capture.Target{Kind: capture.Screen})
	if err != nil {
		return shot{}, fmt.Errorf("capture %s: %w", a.opts.Display, err)
	}
	ar := a.area
	v := f.Sub(image.Rect(ar.X, ar.Y, ar.X+ar.W, ar.Y+ar.H), "area")
	w, h := OutputSize(v.W, v.H, a.opts.CaptureWidth, a.opts.CaptureHeight, a.opts.CaptureScalePercent)
	s := shot{w: v.W, h: v.H, stride: v.Stride, pix: v.Pix}
	if w != v.W || h != v.H {
		need := w * h * 4
		if cap(a.rawBuf) < need {
			a.rawBuf = make([]byte, need)
		}
		a.rawBuf = a.rawBuf[:need]
		frame.Resize(a.rawBuf, w, h, v.Pix, v.W, v.H, v.Stride, frame.Fast)
		s.pix, s.w, s.h, s.stride = a.rawBuf, w, h, w*4
	}
	return s, nil
}

// OutputSize is the screenshot size for a w*h working area: width x height
// when both are > 0, else scaled by percent (1..99), else unchanged.
func OutputSize(w, h, width, height, percent int) (int, int) {
	if width > 0 && height > 0 {
		return width, height
	}
	if percent > 0 && percent < 100 {
		return max(int(math.Round(float64(w)*float64(percent)/100)), 1), max(int(math.Round(float64(h)*float64(percent)/100)), 1)
	}
	return w, h
}

// annotateAndEncode copies the screenshot, draws the overlays on the copy
// and encodes it as PNG.
func (a *Agent) annotateAndEncode(s shot, boxes []Box, trail [][]annotate.Mark) []byte {
	need := s.w * s.h * 4
	if cap(a.annBuf) < need {
		a.annBuf = make([]byte, need)
	}
	buf := a.annBuf[:need]
	for y := range s.h {
		copy(buf[y*s.w*4:(y+1)*s.w*4], s.pix[y*s.stride:y*s.stride+s.w*4])
	}
	bx := make([]annotate.Box, len(boxes))
	for i, b := range boxes {
		bx[i] = annotate.Box{X1: b.X1, Y1: b.Y1, X2: b.X2, Y2: b.Y2}
	}
	a.ann.Draw(annotate.Image{Pix: buf, W: s.w, H: s.h, Stride: s.w * 4, Format: annotate.BGRX}, bx, trail)
	return a.annEnc.Encode(buf, s.w, s.h, s.w*4)
}

// flush waits for the previous turn's background work (raw PNG, run
// directory).
func (a *Agent) flush() { a.bg.Wait() }

// marks converts actions to annotation marks with their labels.
func (a *Agent) marks(acts []Action) []annotate.Mark {
	out := make([]annotate.Mark, 0, len(acts))
	for i, act := range acts {
		m := annotate.Mark{Pos: true, X: act.X1, Y: act.Y1}
		switch act.Name {
		case gate.KindDrag:
			m.Drag, m.X2, m.Y2 = true, act.X2, act.Y2
			m.Label = fmt.Sprintf("%d drag %d,%d>%d,%d", i+1, act.X1, act.Y1, act.X2, act.Y2)
		case gate.KindType:
			m.Pos = false
			m.Label = fmt.Sprintf("%d type %q", i+1, truncate(act.Text, 40))
		case gate.KindKey:
			m.Pos = false
			m.Label = fmt.Sprintf("%d key %s", i+1, truncate(act.Keys, 40))
		case gate.KindScroll:
			m.Label = fmt.Sprintf("%d scroll %d,%d dy=%d", i+1, act.X1, act.Y1, act.DY)
		default:
			m.Label = fmt.Sprintf("%d %s %d,%d", i+1, act.Name, act.X1, act.Y1)
		}
		out = append(out, m)
	}
	return out
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}

func (a *Agent) pushTrail(acts []Action) {
	n := max(a.opts.UI.ExecutedHeat.TrailTurns, 1)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.trail = append([][]Action{acts}, a.trail...)
	if len(a.trail) > n {
		a.trail = a.trail[:n]
	}
	a.st.Trail = a.trail
}

// waitAnnotated waits for POST /annotated with seq n (annotator=panel).
func (a *Agent) waitAnnotated(ctx context.Context, n int) ([]byte, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case c := <-a.control:
			if a.applyControl(c) {
				return nil, errStop
			}
		case an := <-a.annotated:
			if an.seq == n {
				a.mu.Lock()
				a.st.AnnotatedSeq, a.st.AnnotatedPNG = n, an.png
				a.st.MsgID++
				a.mu.Unlock()
				return an.png, nil
			}
		}
	}
}

func (a *Agent) saveRaw(n int, out Output, text string, png []byte) {
	if a.dir == nil {
		return
	}
	rec := runlog.RawRecord{Turn: n, Observation: out.Observation, BBoxes: out.BBoxes, Actions: out.Actions, VLMText: text}
	if len(out.Rejected) > 0 {
		rec.Rejected = out.Rejected
	}
	if err := a.dir.WriteRaw(rec, png); err != nil {
		a.logWarn("run log", "turn", n, "err", err)
	}
}

func (a *Agent) saveAnnotated(n int, png []byte) {
	if a.dir == nil {
		return
	}
	if err := a.dir.WriteAnnotated(n, png); err != nil {
		a.logWarn("run log", "turn", n, "err", err)
	}
}

// TurnEvent is the data of a "turn" progress event.
type TurnEvent struct {
	Turn         int        `json:"turn"`
	Observation  string     `json:"observation"`
	Actions      []Action   `json:"actions"`
	BBoxes       []Box      `json:"bboxes"`
	Rejected     []Rejected `json:"rejected,omitempty"`
	ActionErrors []string   `json:"actionErrors,omitempty"`
	Parse        string     `json:"parse"`
	RawPNG       string     `json:"rawPng,omitempty"`
	AnnotatedPNG string     `json:"annotatedPng,omitempty"`
	// FrameHash names the annotated frame the model saw in the frame
	// store (Options.Frames; GET /v1/frames/{hash}), for the run timeline.
	FrameHash string  `json:"frameHash,omitempty"`
	CostUSD   float64 `json:"costUsd"`
	// CostUnknown: some call of the session had no cost (CostUSD is the
	// known part).
	CostUnknown bool `json:"costUnknown,omitempty"`
}

func (a *Agent) emitTurn(ctx context.Context, n int, out Output, execErrs []string, annPNG []byte) {
	ev := TurnEvent{Turn: n, Observation: out.Observation, Actions: out.Actions, BBoxes: out.BBoxes, Rejected: out.Rejected, Parse: out.Mode}
	ev.FrameHash = a.keepFrame(ctx, annPNG)
	for _, e := range execErrs {
		if e != "" {
			ev.ActionErrors = execErrs
			break
		}
	}
	if a.dir != nil {
		ev.RawPNG = a.dir.Path() + "/" + a.dir.RawName(n)
		ev.AnnotatedPNG = a.dir.Path() + "/" + a.dir.AnnotatedName(n)
	}
	a.mu.Lock()
	ev.CostUSD, ev.CostUnknown = a.cost, a.st.CostUnknown
	a.mu.Unlock()
	a.emit(ctx, StreamTurn, ev)
}

func (a *Agent) emit(ctx context.Context, stream string, data any) {
	if a.opts.Runs == nil || a.runID == "" {
		return
	}
	if _, err := a.opts.Runs.Emit(ctx, a.runID, stream, data); err != nil && !errors.Is(err, runs.ErrEnded) {
		a.log.Warn("emit agent event", "run_id", a.runID, "err", err)
	}
}

// callModel sends the system prompt, the observation and the annotated
// screenshot, and returns the reply.
func (a *Agent) callModel(ctx context.Context, n int, out Output, w, h int, png []byte) (llm.Response, error) {
	if a.opts.ModelTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.opts.ModelTimeout)
		defer cancel()
	}
	req := llm.Request{
		Model: a.opts.ModelName, System: a.opts.SystemPrompt, MaxTokens: a.opts.MaxTokens,
		Temperature: a.opts.Temperature, TopP: a.opts.TopP, RunID: a.runID,
		Messages: []llm.Message{{Role: "user", Text: UserText(n, out, w, h), Images: []llm.Image{{MIME: "image/png", Data: png}}}},
	}
	resp, err := a.opts.Model.Chat(ctx, req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			return resp, fmt.Errorf("model call for turn %d: no reply within %s (ACU_AGENT_VLM_HTTP_TIMEOUT_SECONDS): %w", n, a.opts.ModelTimeout, err)
		}
		return resp, fmt.Errorf("model call for turn %d: %w", n, err)
	}
	return resp, nil
}
