package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/actions"
	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/config"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/judge"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/ocr"
	"github.com/acu-dev/acu/internal/orchestrator"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/session"
	"github.com/acu-dev/acu/internal/smartwait"
	"github.com/acu-dev/acu/internal/store"
	wlframes "github.com/acu-dev/acu/internal/wayland/frames"
)

func init() {
	featureCommands = append(featureCommands,
		command{"run", `run a task on the desktop with the dual-agent orchestrator: acu run "<task>"`, runTask})
}

// taskService is the orchestrator with the parts it drives: the display's
// desktop stack, the element map and the model clients. `acu run` builds
// one on a stack of its own; `acu serve` builds one on the action
// service's stack of the display and hands Orch to the server
// (Options.Tasks) and the run registry's cancellers.
type taskService struct {
	Orch    *orchestrator.Orchestrator
	closers []func()
}

// Close cancels a running task and releases the connections.
func (s *taskService) Close() {
	if s.Orch != nil {
		s.Orch.Close()
	}
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// taskParts are the daemon's (or `acu run`'s) parts a task service builds
// on: hub captures; stack opens the task display's desktop stack; the
// gate launches and arranges windows; reg records each task as a run; db
// keeps the progress log (nil: none); ledger accounts model cost (nil:
// its own); home is $HOME, for desktop entries.
type taskParts struct {
	hub     elements.Frames // the X11 and Wayland capture hubs (screens)
	stack   func(ctx context.Context, dpy string) (actions.Stack, error)
	gate    *gate.Gate
	reg     *runs.Registry
	db      *store.DB
	ledger  *llm.Ledger
	wait    orchestrator.Waiter
	home    string
	onEvent func(runID, stream string, data any)
}

// ownStack opens a desktop stack of `acu run`'s own on g: the gate's
// connection and hands, and an accessibility client found from the
// display (else sessionBus, DBUS_SESSION_BUS_ADDRESS), which s closes.
func (s *taskService) ownStack(g *gate.Gate, sessionBus string, log *slog.Logger) func(context.Context, string) (actions.Stack, error) {
	return func(ctx context.Context, dpy string) (actions.Stack, error) {
		var conn *display.Conn // none on a Wayland display: the gate's hands and reads serve it
		if !gate.IsWayland(dpy) {
			c, err := g.Conn(ctx, dpy)
			if err != nil {
				return actions.Stack{}, err
			}
			conn = c
		}
		hands, err := g.Hands(ctx, dpy)
		if err != nil {
			return actions.Stack{}, err
		}
		st := actions.Stack{Conn: conn, Hands: hands}
		ao := atspi.Options{SessionBus: sessionBus, Logger: log.With("component", "atspi")}
		if conn != nil {
			if addr, err := atspi.DisplayBusAddress(ctx, conn); err == nil && addr != "" {
				ao.Address = addr
			}
		}
		if st.Tree, st.TreeErr = atspi.Connect(ctx, ao); st.TreeErr == nil {
			s.closers = append(s.closers, func() { st.Tree.Close() })
		}
		return st, nil
	}
}

// newTaskService builds the orchestrator from config on p.
func newTaskService(ctx context.Context, c *config.Config, p taskParts, log *slog.Logger) (_ *taskService, err error) {
	s := &taskService{}
	return s, s.build(ctx, c, p, log.With("component", "task"))
}

// build wires the task service: s is closed when it fails.
func (s *taskService) build(ctx context.Context, c *config.Config, p taskParts, log *slog.Logger) (err error) {
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	tc := c.Task()
	dpy := c.TaskDisplay()
	if dpy == "" {
		return &config.Error{Env: "ACU_TASK_DISPLAY", Source: "configuration", Accepted: "an X display name such as :0, or a Wayland socket",
			Err: errors.New("no display: set DISPLAY or ACU_TASK_DISPLAY")}
	}
	fast, planner, verifier, err := taskModels(c, p.ledger, log)
	if err != nil {
		return err
	}
	st, err := p.stack(ctx, dpy) // tasks act only where the policy lets them
	if err != nil {
		return fmt.Errorf("tasks on %s: %w", dpy, err)
	}
	x, err := taskElements(c, dpy, p.hub, st, log)
	if err != nil {
		return err
	}
	dirs := append([]string(nil), tc.AppDirs...)
	if p.home != "" {
		dirs = append(dirs, filepath.Join(p.home, ".local/share/applications"))
	}
	oo := orchestrator.Options{
		Elements: x, Fast: fast, Planner: planner, Verifier: verifier, Runs: p.reg, Apps: orchestrator.DesktopApps(dirs),
		Input: st.Hands.Device(), Screenshots: tc.Screenshots, FastScreenshots: tc.FastScreenshot, MaxIterations: tc.MaxIterations, MaxCost: tc.MaxCostUSD, CallTimeout: tc.CallTimeout,
		MaxTokens: tc.MaxTokens, PauseQuiet: tc.PauseQuiet, RecoverAfter: tc.RecoverAfter, OnEvent: p.onEvent, Logger: log,
		Launch: orchestrator.DesktopLauncher{Gate: p.gate, Dirs: dirs, Display: dpy},
		Wait:   p.wait,
	}
	if tc.RecoverAfter == 0 {
		oo.RecoverAfter = -1 // the count alone; the orchestrator's 0 means its default
	}
	if p.db != nil {
		oo.Progress = p.db
		if c.KeepJudgedFrames {
			oo.Frames = p.db // each iteration's frame, for the run timeline
		}
	}
	if tc.PauseOnUser {
		if st.Conn != nil {
			oo.Watch = orchestrator.NewInputWatch(st.Conn, orchestrator.InputWatchOptions{Logger: log})
		} else if w, err := orchestrator.NewUserWatch(ctx, st.Hands); err != nil {
			// A Wayland display: the gate's user-first record, else nothing.
			log.Warn("tasks on this display do not pause for the user's input (ACU_TASK_PAUSE_ON_INPUT)", "display", dpy, "err", err)
		} else {
			oo.Watch = w
		}
	}
	if tc.Split {
		if oo.Arrange, err = orchestrator.NewWindowArranger(ctx, p.gate, dpy); err != nil {
			return err
		}
	}
	s.Orch, err = orchestrator.New(oo)
	return err
}

// taskModels are the task's fast agent, planner and verifier clients
// (ACU_TASK_*).
func taskModels(c *config.Config, ledger *llm.Ledger, log *slog.Logger) (fast, planner, verifier *llm.Client, err error) {
	tc := c.Task()
	key, keyEnv := c.TaskAPIKey()
	if !key.Set() && !localURL(tc.BaseURL) {
		return nil, nil, nil, &config.Error{Env: keyEnv, Source: "configuration", Accepted: "an API key for " + tc.BaseURL,
			Err: fmt.Errorf("the task models need a key: set %s or ACU_TASK_API_KEY, or point ACU_TASK_BASE_URL at a local server", keyEnv)}
	}
	client := func(role, model string) (*llm.Client, error) {
		cl, err := llm.New(llm.Options{Provider: llm.Provider(tc.Provider), BaseURL: tc.BaseURL, Model: model, APIKey: key,
			Timeout: tc.CallTimeout, Ledger: ledger, Logger: log.With("component", "llm", "role", role), Prices: modelPrices(c),
			Name: "task_" + role, KeyEnv: keyEnv})
		if err != nil {
			return nil, fmt.Errorf("task %s model client: %w", role, err)
		}
		return cl, nil
	}
	if fast, err = client("fast", tc.FastModel); err != nil {
		return nil, nil, nil, err
	}
	if planner, err = client("planner", tc.PlannerModel); err != nil {
		return nil, nil, nil, err
	}
	if verifier, err = client("verifier", tc.VerifierModel); err != nil {
		return nil, nil, nil, err
	}
	for _, m := range []struct {
		cl    *llm.Client
		model string
	}{{fast, tc.FastModel}, {planner, tc.PlannerModel}, {verifier, tc.VerifierModel}} {
		if err := (session.Budget{MaxCost: tc.MaxCostUSD}).CheckPriced(m.cl, ""); err != nil {
			return nil, nil, nil, unpricedLimit("ACU_TASK_MAX_COST_USD", tc.MaxCostUSD, m.model, err)
		}
	}
	return fast, planner, verifier, nil
}

// taskElements is the task's element extractor on st: its accessibility
// tree and, with ACU_TASK_OCR, Tesseract's text; the task's accessibility
// effects pass the gate too.
func taskElements(c *config.Config, dpy string, hub elements.Frames, st actions.Stack, log *slog.Logger) (*elements.Extractor, error) {
	tc := c.Task()
	if st.Tree == nil {
		if !tc.OCR {
			return nil, fmt.Errorf("accessibility bus of %s: %w (start applications with accessibility on, or set ACU_TASK_OCR=true for OCR-only maps)", dpy, st.TreeErr)
		}
		log.Warn("no accessibility bus: element maps hold OCR text only", "display", dpy, "err", st.TreeErr)
	}
	hands := st.Hands
	eo := elements.Options{Display: dpy, Capture: hub, Input: hands.Device(), Exclude: c.ExcludeWindows, Logger: log.With("component", "elements"),
		Effect: func(ctx context.Context, el *elements.Element, kind string, fn func(context.Context) error) error {
			return hands.Element(ctx, el.ID, el.App, el.Window, kind, fn)
		}}
	if st.Tree != nil {
		eo.Tree = st.Tree
	}
	if tc.OCR {
		eng, err := ocr.New(ocr.Options{Binary: c.TesseractBinary, Scale: elements.OCRScale, Logger: log.With("component", "ocr")})
		if err != nil {
			return nil, fmt.Errorf("OCR for element maps: %w (install tesseract-ocr or set ACU_TASK_OCR=false)", err)
		}
		eo.OCR = eng
	}
	return elements.New(eo)
}

// localURL reports whether u points at this machine (a server without keys).
func localURL(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	return loopbackHost(p.Hostname())
}

func runTask(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "run", `[flags] "<task>"

Runs the task on the desktop (ACU_TASK_DISPLAY, else DISPLAY) with the fast agent, planner and verifier
models of ACU_TASK_* (see `+"`acu config --list`"+`), printing progress as it goes. The task is a run of
kind "task" in acu's store. Exit status: 0 completed, 1 failed, 130 cancelled (Ctrl-C).`)
	maxIter := fs.Int("max-iterations", 0, "iterations before the task fails (default ACU_TASK_MAX_ITERATIONS)")
	taskID := fs.String("task-id", "", "progress log to append to (default the run id)")
	asJSON := fs.Bool("json", false, "print every event as a JSON line instead of a readable one")
	c, rest, warnings, err := config.Load(e.getenv, e.environ, fs, args)
	if err != nil {
		return err
	}
	task := strings.TrimSpace(strings.Join(rest, " "))
	if task == "" {
		fs.Usage()
		return &exitError{code: 2, msg: `acu run: say what to do, e.g. acu run "open the Files dialog and pick report.txt"`}
	}
	log := newLogger(c, e.stderr)
	for _, w := range warnings {
		log.Warn(w)
	}
	applyMemoryLimit(c, e.getenv, log)
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return fmt.Errorf("create ACU_DATA_DIR %s: %w", c.DataDir, err)
	}
	parts, err := openWorkParts(ctx, c, log, nil, "task")
	if err != nil {
		return err
	}
	defer parts.Close()
	show := taskPrinter(e, *asJSON)
	wait, closeWait := taskWaiter(ctx, e, c, parts, log)
	defer closeWait()
	g := gate.New(gateOptions(c, e, log))
	defer g.Close()
	s := &taskService{}
	wl := wlframes.New(wlframes.Options{Exclude: c.ExcludeWindows, Logger: log.With("component", "wayland")})
	defer wl.Close()
	p := taskParts{hub: screens{x: parts.hub, wl: wl}, stack: s.ownStack(g, e.getenv("DBUS_SESSION_BUS_ADDRESS"), log), gate: g, reg: parts.runs, db: parts.db,
		wait: wait, home: e.getenv("HOME"), onEvent: show}
	if err := s.build(ctx, c, p, log.With("component", "task")); err != nil {
		return err
	}
	defer s.Close()
	if !*asJSON {
		fmt.Fprintf(e.stdout, "task on %s: %s\n", c.TaskDisplay(), task)
	}
	res, err := s.Orch.Run(ctx, orchestrator.Spec{Task: task, TaskID: *taskID, MaxIterations: *maxIter})
	if err != nil {
		return err
	}
	return taskOutcome(e, res, *asJSON)
}

// taskWaiter is what a task's wait_for steps wait through: the daemon's
// smart wait when one answers, else a wait engine of this process, which
// the function returned closes.
func taskWaiter(ctx context.Context, e *env, c *config.Config, parts *workParts, log *slog.Logger) (orchestrator.Waiter, func()) {
	if cl, ok := daemonAnswers(ctx, e); ok {
		return clientWaiter{cl: cl, display: c.TaskDisplay()}, func() {}
	}
	lw := &localWaits{c: c, parts: parts, log: log}
	return lw, lw.Close
}

// taskPrinter prints each event of a task: a readable line, or a JSON line.
func taskPrinter(e *env, asJSON bool) func(runID, stream string, data any) {
	if !asJSON {
		return func(runID, stream string, data any) { printTaskEvent(e.stdout, stream, data) }
	}
	enc := json.NewEncoder(e.stdout)
	return func(runID, stream string, data any) {
		_ = enc.Encode(map[string]any{"runId": runID, "stream": stream, "data": data})
	}
}

// taskOutcome prints a task's result; the exit status says how it ended.
func taskOutcome(e *env, res orchestrator.Result, asJSON bool) error {
	if asJSON {
		_ = json.NewEncoder(e.stdout).Encode(map[string]any{"runId": res.RunID, "stream": "result", "data": res})
	} else {
		fmt.Fprintf(e.stdout, "%s after %d iterations (%d plans, %d checks, %d verifications, %d failures, %s): %s\nrun: %s\n",
			res.Status, res.Iterations, res.Plans, res.Checks, res.Verifies, res.Failures, costText(res.CostUSD, res.UnpricedCalls), firstOf(res.Summary, res.Error), res.RunID)
	}
	switch res.Status {
	case runs.StatusCompleted:
		return nil
	case runs.StatusCancelled:
		return &exitError{code: 130}
	}
	return &exitError{code: 1}
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// printTaskEvent prints one event as a progress line.
func printTaskEvent(w io.Writer, stream string, data any) {
	switch ev := data.(type) {
	case orchestrator.IterationEvent:
		var steps []string
		for _, a := range ev.Steps {
			s := a.String()
			if i := strings.Index(s, ": "); i >= 0 {
				s = s[i+2:]
			}
			steps = append(steps, s)
		}
		line := strings.Join(steps, "; ")
		if line == "" {
			line = "no steps"
		}
		if ev.Complete {
			line += "; claims the task is complete"
		}
		if ev.Error != "" {
			line += " (" + ev.Error + ")"
		}
		fmt.Fprintf(w, "[%2d] %s\n", ev.Iteration, line)
		if ev.Thought != "" {
			fmt.Fprintf(w, "     %s\n", oneLine(ev.Thought, 160))
		}
	case orchestrator.PlanEvent:
		what := "failed: " + ev.Error
		switch {
		case ev.Plan != nil && ev.Adopted == 0:
			what = "arrived after the task ended"
		case ev.Plan != nil:
			what = fmt.Sprintf("adopted at iteration %d: %s", ev.Adopted, oneLine(strings.TrimPrefix(ev.Guidance, "STRATEGIC GUIDANCE (from planning agent):\n"), 160))
		case ev.Error == "":
			what = "failed"
		}
		fmt.Fprintf(w, "     plan (%s, asked at %d) %s\n", ev.Kind, ev.Iteration, what)
	case orchestrator.CheckEvent:
		fmt.Fprintf(w, "     progress check: progressing=%v %s\n", ev.Progressing, oneLine(ev.Reason, 160))
	case orchestrator.VerifyEvent:
		fmt.Fprintf(w, "     verification: done=%v %s\n", ev.Done, oneLine(ev.Reason, 160))
	case orchestrator.RecoveryEvent:
		fmt.Fprintf(w, "     stagnation recovery: %s %s (%s)\n", ev.Action, ev.Keys, ev.Reason)
	case orchestrator.InterventionEvent:
		fmt.Fprintf(w, "     %s: %s\n", ev.Phase, ev.Detail)
	default:
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "     %s: %s\n", stream, b)
	}
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// serveTasks builds the task service for `acu serve` on the daemon's parts,
// or returns nil (logged) when tasks are off (ACU_TASK_ENABLED=false) or
// cannot run here (no key, no display, no accessibility bus and no OCR):
// the daemon still starts and POST /v1/tasks answers 503 saying why.
func (d *daemon) serveTasks(ctx context.Context, home string, log *slog.Logger) *taskService {
	c := d.cfg
	if !c.Task().Enabled {
		return nil
	}
	// The task display's desktop stack is the action service's: one per
	// display, whatever uses it.
	s, err := newTaskService(ctx, c, taskParts{hub: d.screens(), stack: d.acts.Stack, gate: d.desktop, reg: d.runs, db: d.db, ledger: d.ledger,
		wait: engineWaiter{eng: d.engine, display: c.TaskDisplay()}, home: home}, log)
	if err != nil {
		log.Warn("tasks are off: POST /v1/tasks and run_task answer 503 until this is fixed", "problem", err)
		return nil
	}
	log.Info("tasks on", "display", c.TaskDisplay(), "fast_model", c.Task().FastModel, "planner_model", c.Task().PlannerModel,
		"verifier_model", c.Task().VerifierModel)
	return s
}

// costText shows a cost of which unpriced calls are unknown: "$0.0123", or
// "cost unknown (3 unpriced calls, $0.0123 known)" rather than a silent $0.
func costText(usd float64, unpriced int) string {
	if unpriced == 0 {
		return fmt.Sprintf("$%.4f", usd)
	}
	calls := "calls"
	if unpriced == 1 {
		calls = "call"
	}
	return fmt.Sprintf("cost unknown (%d unpriced %s, $%.4f known; set ACU_MODEL_PRICES)", unpriced, calls, usd)
}

// engineWaiter carries out wait_for steps on the daemon's own smart wait.
type engineWaiter struct {
	eng     *smartwait.Engine
	display string
}

func (w engineWaiter) WaitFor(ctx context.Context, condition string, timeout time.Duration) (bool, string, error) {
	return w.eng.WaitFor(ctx, smartwait.Spec{Criteria: condition, Display: w.display, Timeout: timeout})
}

// localWaits is `acu run`'s smart wait when no daemon runs: the wait
// engine of localWaiter, made at the first wait_for step (a task that
// never waits starts no judge).
type localWaits struct {
	c     *config.Config
	parts *workParts
	log   *slog.Logger

	once sync.Once
	w    orchestrator.Waiter
	stop func()
	err  error
}

func (l *localWaits) WaitFor(ctx context.Context, condition string, timeout time.Duration) (bool, string, error) {
	l.once.Do(func() { l.w, l.stop, l.err = localWaiter(ctx, l.c, l.parts, l.log) })
	if l.err != nil {
		return false, "", fmt.Errorf("no daemon runs and no judge is available here (install tesseract-ocr, or set a vision model's key): %w", l.err)
	}
	return l.w.WaitFor(ctx, condition, timeout)
}

// Close stops the wait engine, if one was made.
func (l *localWaits) Close() {
	if l.stop != nil {
		l.stop()
	}
}

// localWaiter is `acu run`'s smart wait when no daemon runs: a wait engine
// of this process on its store, run registry and capture hub, with the
// judge acu serve would pick (a vision model with a key, else Tesseract).
// stop ends it.
func localWaiter(ctx context.Context, c *config.Config, parts *workParts, log *slog.Logger) (orchestrator.Waiter, func(), error) {
	backend, choice, err := judge.Select(ctx, selectOptions(c, log))
	if err != nil {
		return nil, nil, err
	}
	log.Info("wait_for steps judged in this process", "backend", choice.Backend, "model", choice.Model)
	eng := smartwait.New(smartwait.Options{Runs: parts.runs, Capture: parts.hub, Judge: backend, Store: parts.db,
		PollInterval: c.PollInterval, MaxTimeout: c.MaxTimeout, DefaultDisplay: c.TaskDisplay(), Logger: log.With("component", "smartwait"),
		JudgeConcurrency: c.JudgeConcurrency, Host: parts.runs.Host()})
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = eng.Run(rctx)
	}()
	return engineWaiter{eng: eng, display: c.TaskDisplay()}, func() { cancel(); <-done }, nil
}

// clientWaiter carries out `acu run`'s wait_for steps through the
// daemon's smart wait.
type clientWaiter struct {
	cl      *api.Client
	display string
}

func (w clientWaiter) WaitFor(ctx context.Context, condition string, timeout time.Duration) (bool, string, error) {
	wt, err := w.cl.CreateWait(ctx, api.CreateWait{Criteria: condition, Timeout: timeout.Seconds(), Display: w.display})
	if err != nil {
		return false, "", fmt.Errorf("smart wait through the daemon (acu serve): %w", err)
	}
	if _, err := w.cl.WaitRun(ctx, wt.ID, timeout+30*time.Second); err != nil {
		if ctx.Err() != nil {
			_, _ = w.cl.CancelWait(context.WithoutCancel(ctx), wt.ID, "the task stopped waiting")
		}
		return false, "", err
	}
	if wt, err = w.cl.GetWait(ctx, wt.ID); err != nil {
		return false, "", err
	}
	return wt.State == smartwait.StatusResolved, firstOf(wt.Evidence, wt.State), nil
}
