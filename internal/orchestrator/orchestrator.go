package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/session"
	"github.com/acu-dev/acu/internal/store"
)

// Kind is the run kind of a task.
const Kind = "task"

// Event streams of a task's run.
const (
	StreamIteration    = "iteration"    // one fast-agent turn: prompt, reply, steps and their outcome
	StreamPlan         = "plan"         // a planning call (initial, recovery, last resort)
	StreamCheck        = "check"        // a progress check
	StreamVerify       = "verify"       // a completion verification
	StreamRecovery     = "recovery"     // a stagnation recovery action
	StreamIntervention = "intervention" // user input paused the run, and the resume
	StreamSplit        = "split"        // two windows arranged side by side on the planner's advice
)

// Defaults for zero Options fields.
const (
	DefaultMaxIterations = 50
	DefaultCallTimeout   = 90 * time.Second
	DefaultPauseQuiet    = 5 * time.Second
	DefaultReuseMapAge   = time.Second
	DefaultRecoverAfter  = 10 * time.Second
	LastResortWindow     = 5 // the final iterations where the blocking last-resort plan may run
	ProgressEvery        = 3 // iterations between progress checks, and without completion before one
	FailuresToReplan     = 3 // step failures since the last plan that ask for recovery planning
	WrongTaskPenalty     = 3 // added to the failure counter by a wrong-task rejection
	MaxModelErrors       = 3 // consecutive failed fast-agent calls (after the client's retries) that fail the task
)

// StatusFailed ends a task that did not get done (max iterations, the
// display gone); its run's error says why.
const StatusFailed = "failed"

// ErrBusy is returned by Start and Run while another task runs on the
// display.
var ErrBusy = errors.New("another task is running on this display: wait for it or cancel it")

// Elements is the element map of the display (*elements.Extractor).
type Elements interface {
	Extract(ctx context.Context) (*elements.Map, error)
	Execute(ctx context.Context, m *elements.Map, s elements.Step) (elements.Result, error)
	// Do carries out a step once without verifying it (typeBatch
	// verifies a run of independent steps with one map read).
	Do(ctx context.Context, m *elements.Map, s elements.Step) (string, error)
}

// Model is one role's model client (*llm.Client).
type Model interface {
	Chat(ctx context.Context, req llm.Request) (llm.Response, error)
}

// Runs records each task as a run (*runs.Registry).
type Runs interface {
	Start(ctx context.Context, o runs.StartOptions) (runs.Run, error)
	Emit(ctx context.Context, runID, stream string, data any) (runs.Event, error)
	End(ctx context.Context, runID, status, errMsg string, result any) (runs.Run, error)
}

// ProgressLog is the task progress log (*store.DB).
type ProgressLog interface {
	AppendTaskProgress(ctx context.Context, taskID, runID, message string) error
}

// Watcher detects user input: input that acu did not make. Mark is called
// after acu's own actions; Foreign reports input since then.
type Watcher interface {
	Mark(ctx context.Context) error
	Foreign(ctx context.Context) (bool, string, error)
}

// Device presses keys and scrolls for stagnation recovery (the gate's
// hands).
type Device interface {
	Do(ctx context.Context, a gate.Action) error
}

// Arranger puts two windows side by side when the planner recommends
// splitting the work across them.
type Arranger interface {
	Arrange(ctx context.Context, windows [2]string) error
}

// Waiter waits until a condition holds on the screen (acu's smart wait),
// for the fast agent's wait_for steps: one cheap judgement per screen
// change instead of a fast-agent iteration a second.
type Waiter interface {
	WaitFor(ctx context.Context, condition string, timeout time.Duration) (met bool, evidence string, err error)
}

// Launcher starts an application by the name of its desktop entry, for the
// fast agent's launch steps (DesktopLauncher).
type Launcher interface {
	Launch(ctx context.Context, name string) (string, error)
}

// Options configures an Orchestrator.
type Options struct {
	// Elements reads and acts on the display; required.
	Elements Elements
	// Frames keeps the frame each iteration's map was read from, for the
	// run timeline; nil keeps none.
	Frames FrameStore
	// Fast acts every iteration and checks progress; Planner plans;
	// Verifier checks completion claims. Separate clients (and models) per
	// role; Planner and Verifier default to Fast.
	Fast, Planner, Verifier Model
	// Runs records each task as a run of kind "task"; required.
	Runs Runs
	// Progress receives a line per iteration, plan, check and verification;
	// nil: none.
	Progress ProgressLog
	// Apps are the installed applications given to the planner (see
	// DesktopApps).
	Apps []App
	// Watch detects user input, which pauses the run; nil: none.
	Watch Watcher
	// Input presses keys and scrolls for stagnation recovery; nil uses key
	// steps through Elements.
	Input Device
	// Arrange tiles two windows when a plan recommends a split; nil ignores
	// the recommendation (it is still recorded).
	Arrange Arranger
	// Wait carries out wait_for steps; nil: they fail saying so.
	Wait Waiter
	// Launch carries out launch steps; nil: they fail saying so.
	Launch Launcher
	// Screenshots sends the settled frame (JPEG) to the planner and the
	// verifier besides the element map.
	Screenshots bool
	// FastScreenshots sends the fast agent and the progress checker each
	// iteration's frame with every element's id drawn on it (set-of-marks),
	// besides the element map (ACU_TASK_FAST_SCREENSHOT).
	FastScreenshots bool
	// MaxIterations per task; default 50.
	MaxIterations int
	// MaxCost ends a task once its model calls (fast agent, planner,
	// verifier, window agents) cost this many US dollars, or when a call
	// comes back with no cost; 0: no limit. New refuses a model whose
	// cost cannot be known (ACU_TASK_MAX_COST_USD).
	MaxCost float64
	// CallTimeout bounds each model call; default 90 s.
	CallTimeout time.Duration
	// MaxTokens of the fast agent's replies; the planner gets twice as many.
	// Default 1024.
	MaxTokens int
	// PauseQuiet is how long the user's input must stop before a paused run
	// resumes; default 5 s.
	PauseQuiet time.Duration
	// ReuseMapAge lets an iteration start on the map the previous
	// iteration's last step was verified with, when it is settled and at
	// most this old, instead of extracting again (half the extractions of
	// an iteration with steps). Default 1 s; negative always extracts.
	ReuseMapAge time.Duration
	// RecoverAfter is how long the element map must have stayed unchanged,
	// besides elements.UnchangedRecover maps in a row, before stagnation
	// recovery acts: a model waiting for a slow application gets that long.
	// Default DefaultRecoverAfter (10 s); negative means the count alone.
	RecoverAfter time.Duration
	// Now is the clock of stagnation recovery; nil: time.Now.
	Now func() time.Time
	// OnEvent sees every event as it is emitted (the CLI's live progress),
	// one at a time: from the task's goroutine, or from a window agent's
	// while the task's goroutine waits for them; nil: none.
	OnEvent func(runID, stream string, data any)
	Logger  *slog.Logger
}

// Spec is one task.
type Spec struct {
	Task          string `json:"task"`
	TaskID        string `json:"taskId,omitempty"`        // progress log to append to; default the run id
	MaxIterations int    `json:"maxIterations,omitempty"` // default Options.MaxIterations
}

// Result is how a task ended; it is also the run's result.
type Result struct {
	RunID      string  `json:"runId"`
	Status     string  `json:"status"` // runs.StatusCompleted, StatusFailed or runs.StatusCancelled
	Summary    string  `json:"summary,omitempty"`
	Error      string  `json:"error,omitempty"`
	Iterations int     `json:"iterations"`
	Plans      int     `json:"plans"`
	Checks     int     `json:"checks"`
	Verifies   int     `json:"verifications"`
	Failures   int     `json:"failures"`
	CostUSD    float64 `json:"costUsd"`
	// CostUnknown is set when some call's cost is unknown (no provider
	// figure, no price: see ACU_MODEL_PRICES); CostUSD is then only the
	// known part and UnpricedCalls counts the others.
	CostUnknown   bool `json:"costUnknown,omitempty"`
	UnpricedCalls int  `json:"unpricedCalls,omitempty"`
}

// Orchestrator runs tasks on one display, one at a time.
type Orchestrator struct {
	opts Options
	log  *slog.Logger
	// device is the device context of the fast agent's prompts.
	device *DeviceContext

	mu     sync.Mutex
	cancel map[string]context.CancelCauseFunc
	wg     sync.WaitGroup
}

// New checks o and returns an Orchestrator.
func New(o Options) (*Orchestrator, error) {
	if o.Elements == nil {
		return nil, errors.New("orchestrator: Options.Elements is required (the display's element map)")
	}
	if o.Fast == nil {
		return nil, errors.New("orchestrator: Options.Fast is required (the fast agent's model)")
	}
	if o.Runs == nil {
		return nil, errors.New("orchestrator: Options.Runs is required")
	}
	if o.Planner == nil {
		o.Planner = o.Fast
	}
	if o.Verifier == nil {
		o.Verifier = o.Fast
	}
	if o.MaxCost < 0 {
		return nil, fmt.Errorf("orchestrator: Options.MaxCost %g: want 0 (no limit) or a positive number of US dollars", o.MaxCost)
	}
	for _, m := range []Model{o.Fast, o.Planner, o.Verifier} {
		if err := (session.Budget{MaxCost: o.MaxCost}).CheckPriced(m, ""); err != nil {
			return nil, fmt.Errorf("orchestrator: cost limit of $%g cannot be kept: %w", o.MaxCost, err)
		}
	}
	if o.MaxIterations <= 0 {
		o.MaxIterations = DefaultMaxIterations
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = 1024
	}
	if o.PauseQuiet <= 0 {
		o.PauseQuiet = DefaultPauseQuiet
	}
	if o.ReuseMapAge == 0 {
		o.ReuseMapAge = DefaultReuseMapAge
	}
	if o.RecoverAfter == 0 {
		o.RecoverAfter = DefaultRecoverAfter
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Orchestrator{opts: o, log: o.Logger, cancel: map[string]context.CancelCauseFunc{}, device: NewDeviceContext(os.Getenv, o.Apps)}, nil
}

// errCancelled is the cause of a Cancel.
type errCancelled struct{ reason string }

func (e errCancelled) Error() string { return "cancelled: " + e.reason }

// Start starts a task in the background and returns its run at once. The
// task outlives ctx (it ends by itself, by Cancel or by Close).
func (o *Orchestrator) Start(ctx context.Context, s Spec) (runs.Run, error) {
	sess, lctx, err := o.begin(ctx, s)
	if err != nil {
		return runs.Run{}, err
	}
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		o.execute(lctx, sess, s)
	}()
	return sess.Started(), nil
}

// Run runs a task to its end. Cancelling ctx cancels the task.
func (o *Orchestrator) Run(ctx context.Context, s Spec) (Result, error) {
	sess, lctx, err := o.begin(ctx, s)
	if err != nil {
		return Result{}, err
	}
	stop := context.AfterFunc(ctx, func() { o.Cancel(context.WithoutCancel(ctx), sess.ID(), "the caller stopped waiting") })
	defer stop()
	return o.execute(lctx, sess, s), nil
}

// begin starts the task's session (its run, through the harness) when no
// other task runs.
func (o *Orchestrator) begin(ctx context.Context, s Spec) (*session.Run, context.Context, error) {
	s.Task = strings.TrimSpace(s.Task)
	if s.Task == "" {
		return nil, nil, errors.New("task: describe what to do, e.g. acu run \"fill the entry with Ada and press OK\"")
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.cancel) > 0 {
		return nil, nil, ErrBusy
	}
	sess, err := session.Start(ctx, o.opts.Runs, Kind, runs.StartOptions{Kind: Kind, TaskID: s.TaskID, Spec: s}, o.log)
	if err != nil {
		return nil, nil, err
	}
	lctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	o.cancel[sess.ID()] = cancel
	return sess, lctx, nil
}

// Adopt runs a task whose run another daemon of a fleet created for this
// host (the run is live and already owned by this process: a claim of
// Recover). It reports whether it took the run: false for other kinds or a
// spec it cannot read. When a task is already running here, the run ends
// at once with ErrBusy's message (one task per desktop at a time).
func (o *Orchestrator) Adopt(run runs.Run) bool {
	if run.Kind != Kind {
		return false
	}
	var s Spec
	if err := json.Unmarshal(run.Spec, &s); err != nil || strings.TrimSpace(s.Task) == "" {
		return false
	}
	o.mu.Lock()
	if len(o.cancel) > 0 {
		o.mu.Unlock()
		go func() {
			if _, err := o.opts.Runs.End(context.Background(), run.ID, runs.StatusError, ErrBusy.Error(), nil); err != nil && !errors.Is(err, runs.ErrEnded) {
				o.log.Warn("end a task another daemon sent while one runs", "run_id", run.ID, "err", err)
			}
		}()
		return true
	}
	lctx, cancel := context.WithCancelCause(context.Background())
	o.cancel[run.ID] = cancel
	o.mu.Unlock()
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		o.execute(lctx, session.Attach(o.opts.Runs, run.ID, Kind, o.log), s)
	}()
	return true
}

// Cancel stops a running task; its run ends cancelled with reason.
func (o *Orchestrator) Cancel(ctx context.Context, runID, reason string) error {
	o.mu.Lock()
	cancel, ok := o.cancel[runID]
	o.mu.Unlock()
	if !ok {
		return fmt.Errorf("cancel task %q: %w", runID, runs.ErrNotFound)
	}
	if reason == "" {
		reason = "cancelled"
	}
	cancel(errCancelled{reason})
	return nil
}

// Running returns the id of the running task, or "".
func (o *Orchestrator) Running() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	for id := range o.cancel {
		return id
	}
	return ""
}

// Close cancels running tasks and waits for them to end.
func (o *Orchestrator) Close() {
	o.mu.Lock()
	for _, c := range o.cancel {
		c(errCancelled{"acu is shutting down"})
	}
	o.mu.Unlock()
	o.wg.Wait()
}

// execute runs the loop and ends the run.
func (o *Orchestrator) execute(ctx context.Context, sess *session.Run, s Spec) Result {
	l := newLoop(o, sess, s)
	// Every effect of the task is the task's, in the gate's audit.
	res := l.run(l.sess.Acting(ctx))
	o.mu.Lock()
	cancel := o.cancel[sess.ID()]
	delete(o.cancel, sess.ID())
	o.mu.Unlock()
	msg := ""
	if res.Status == StatusFailed {
		msg = res.Error
	}
	ectx, done := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer done()
	l.progress(ectx, fmt.Sprintf("task %s: %s", res.Status, firstNonEmpty(res.Summary, res.Error)))
	l.sess.End(ectx, res.Status, msg, res)
	if cancel != nil {
		cancel(nil)
	}
	return res
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// FrameStore keeps frames a run saw (*store.DB).
type FrameStore interface {
	PutRunFrame(ctx context.Context, runID string, f store.Frame, at time.Time) error
}
