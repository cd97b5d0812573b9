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

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/config"
	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/judge"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/ocr"
	"github.com/acu-dev/acu/internal/orchestrator"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/smartwait"
	"github.com/acu-dev/acu/internal/store"
)

func init() {
	featureCommands = append(featureCommands,
		command{"run", `run a task on the desktop with the dual-agent orchestrator: acu run "<task>"`, runTask})
}

// taskService is the orchestrator with the parts it drives: the display
// connection, the accessibility bus, the element map and the model clients.
// `acu run` builds one; `acu serve` can build one and hand Orch to the
// server (Options.Tasks) and the run registry's cancellers.
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
}

// newTaskService builds the orchestrator from config on the daemon's parts:
// hub captures, reg records each task as a run, db keeps the progress log,
// ledger accounts model cost (nil: its own). sessionBus is
// DBUS_SESSION_BUS_ADDRESS, the fallback when the display does not publish
// its accessibility bus.
func newTaskService(ctx context.Context, c *config.Config, hub *capture.Hub, g *gate.Gate, reg *runs.Registry, db *store.DB, ledger *llm.Ledger,
	wait orchestrator.Waiter, sessionBus, home string, onEvent func(runID, stream string, data any), log *slog.Logger) (_ *taskService, err error) {
	tc := c.Task()
	log = log.With("component", "task")
	s := &taskService{}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	dpy := c.TaskDisplay()
	if dpy == "" {
		return nil, &config.Error{Env: "ACU_TASK_DISPLAY", Source: "configuration", Accepted: "an X display name such as :0",
			Err: errors.New("no display: set DISPLAY or ACU_TASK_DISPLAY")}
	}
	key, keyEnv := c.TaskAPIKey()
	if !key.Set() && !localURL(tc.BaseURL) {
		return nil, &config.Error{Env: keyEnv, Source: "configuration", Accepted: "an API key for " + tc.BaseURL,
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
	fast, err := client("fast", tc.FastModel)
	if err != nil {
		return nil, err
	}
	planner, err := client("planner", tc.PlannerModel)
	if err != nil {
		return nil, err
	}
	verifier, err := client("verifier", tc.VerifierModel)
	if err != nil {
		return nil, err
	}

	conn, err := g.Conn(ctx, dpy)
	if err != nil {
		return nil, fmt.Errorf("open display %s for tasks: %w", dpy, err)
	}
	hands, err := g.Hands(ctx, dpy) // tasks act only where the policy lets them
	if err != nil {
		return nil, fmt.Errorf("tasks on %s: %w", dpy, err)
	}
	dev := hands.Device()

	ao := atspi.Options{SessionBus: sessionBus, Logger: log.With("component", "atspi")}
	if addr, err := atspi.DisplayBusAddress(ctx, conn); err == nil && addr != "" {
		ao.Address = addr
	}
	tree, err := atspi.Connect(ctx, ao)
	if err != nil {
		if !tc.OCR {
			return nil, fmt.Errorf("accessibility bus of %s: %w (start applications with accessibility on, or set ACU_TASK_OCR=true for OCR-only maps)", dpy, err)
		}
		log.Warn("no accessibility bus: element maps hold OCR text only", "display", dpy, "err", err)
		tree = nil
	} else {
		s.closers = append(s.closers, func() { tree.Close() })
	}
	eo := elements.Options{Display: dpy, Capture: hub, Input: dev, Exclude: c.ExcludeWindows, Logger: log.With("component", "elements"),
		// The task's accessibility effects pass the gate too.
		Effect: func(ctx context.Context, el *elements.Element, kind string, fn func(context.Context) error) error {
			return hands.Element(ctx, el.ID, el.App, el.Window, kind, fn)
		}}
	if tree != nil {
		eo.Tree = tree
	}
	if tc.OCR {
		eng, err := ocr.New(ocr.Options{Binary: c.TesseractBinary, Logger: log.With("component", "ocr")})
		if err != nil {
			return nil, fmt.Errorf("OCR for element maps: %w (install tesseract-ocr or set ACU_TASK_OCR=false)", err)
		}
		eo.OCR = eng
	}
	x, err := elements.New(eo)
	if err != nil {
		return nil, err
	}
	dirs := append([]string(nil), tc.AppDirs...)
	if home != "" {
		dirs = append(dirs, filepath.Join(home, ".local/share/applications"))
	}
	oo := orchestrator.Options{
		Elements: x, Fast: fast, Planner: planner, Verifier: verifier, Runs: reg, Apps: orchestrator.DesktopApps(dirs),
		Input: dev, Screenshots: tc.Screenshots, FastScreenshots: tc.FastScreenshot, MaxIterations: tc.MaxIterations, CallTimeout: tc.CallTimeout,
		MaxTokens: tc.MaxTokens, PauseQuiet: tc.PauseQuiet, RecoverAfter: tc.RecoverAfter, OnEvent: onEvent, Logger: log,
		Launch: orchestrator.DesktopLauncher{Gate: g, Dirs: dirs, Display: dpy},
		Wait:   wait,
	}
	if tc.RecoverAfter == 0 {
		oo.RecoverAfter = -1 // the count alone; the orchestrator's 0 means its default
	}
	if db != nil {
		oo.Progress = db
		if c.KeepJudgedFrames {
			oo.Frames = db // each iteration's frame, for the run timeline
		}
	}
	if tc.PauseOnUser {
		oo.Watch = orchestrator.NewInputWatch(conn, orchestrator.InputWatchOptions{Logger: log})
	}
	if tc.Split {
		if oo.Arrange, err = orchestrator.NewWindowArranger(ctx, g, dpy); err != nil {
			return nil, err
		}
	}
	s.Orch, err = orchestrator.New(oo)
	if err != nil {
		return nil, err
	}
	return s, nil
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
	show := func(runID, stream string, data any) { printTaskEvent(e.stdout, stream, data) }
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		show = func(runID, stream string, data any) {
			_ = enc.Encode(map[string]any{"runId": runID, "stream": stream, "data": data})
		}
	}
	// wait_for steps wait through the daemon's smart wait when one
	// answers, else through a wait engine of this process.
	var wait orchestrator.Waiter
	if cl, ok := daemonAnswers(ctx, e); ok {
		wait = clientWaiter{cl: cl, display: c.TaskDisplay()}
	} else {
		lw := &localWaits{c: c, parts: parts, log: log}
		defer lw.Close()
		wait = lw
	}
	g := gate.New(gateOptions(c, e, log))
	defer g.Close()
	s, err := newTaskService(ctx, c, parts.hub, g, parts.runs, parts.db, nil, wait, e.getenv("DBUS_SESSION_BUS_ADDRESS"), e.getenv("HOME"), show, log)
	if err != nil {
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
	if *asJSON {
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
func serveTasks(ctx context.Context, c *config.Config, getenv func(string) string, hub *capture.Hub, g *gate.Gate, reg *runs.Registry, db *store.DB, ledger *llm.Ledger,
	eng *smartwait.Engine, log *slog.Logger) *taskService {
	if !c.Task().Enabled {
		return nil
	}
	s, err := newTaskService(ctx, c, hub, g, reg, db, ledger, engineWaiter{eng: eng, display: c.TaskDisplay()}, getenv("DBUS_SESSION_BUS_ADDRESS"), getenv("HOME"), nil, log)
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
