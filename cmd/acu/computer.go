package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/computer"
	"github.com/acu-dev/acu/internal/config"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/runs"
)

func init() {
	featureCommands = append(featureCommands,
		command{"computer", `drive a computer-use model (Anthropic, OpenAI, UI-TARS) on the desktop: acu computer "<task>" --provider anthropic`, runComputer})
}

// computerDefaults are each provider's model, key variable and base URL.
var computerDefaults = map[string]struct{ model, keyEnv, base string }{
	api.VendorAnthropic: {"claude-sonnet-4-5", "ANTHROPIC_API_KEY", ""},
	api.VendorOpenAI:    {"computer-use-preview", "OPENAI_API_KEY", ""},
	api.VendorUITARS:    {"ui-tars-1.5-7b", "ACU_COMPUTER_API_KEY", ""},
}

func runComputer(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "computer", `--provider anthropic|openai|uitars [flags] "<task>"

Drives a computer-use model on the display: screenshot, the model's action in its vendor's dialect,
acu runs it (settling instead of sleeping), the result back to the model, until the model is done or
a budget runs out. The run is a run of kind "computer" with one event per turn. Keys: ANTHROPIC_API_KEY,
OPENAI_API_KEY, or ACU_COMPUTER_API_KEY for any; ACU_COMPUTER_BASE_URL or --base-url for another endpoint
(UI-TARS: any OpenAI-compatible server). When the model calls for the user (UI-TARS call_user) or its
action has safety checks (OpenAI), the run waits for the user's answer: acu runs resume RUN [--message TEXT]
(--acknowledge for safety checks, with an admin token), or acu runs cancel RUN. Exit status: 0 completed,
1 failed or out of budget, 3 the model needed the user and nobody answered within --user-timeout,
130 cancelled (Ctrl-C or acu runs cancel).`)
	provider := fs.String("provider", "", "anthropic, openai or uitars")
	model := fs.String("model", "", "the model (default per provider: claude-sonnet-4-5, computer-use-preview, ui-tars-1.5-7b)")
	baseURL := fs.String("base-url", "", "the provider's endpoint (default ACU_COMPUTER_BASE_URL, else the vendor's)")
	maxSteps := fs.Int("max-steps", 50, "model turns before the run stops")
	maxCost := fs.Float64("max-cost", 0, "US dollars of model cost before the run stops (0: no limit)")
	limit := fs.String("limit", "1280x800", "largest screenshot offered to the model, WxH (coordinates map back to exact screen pixels)")
	version := fs.String("tool-version", "", "Anthropic tool version (default computer_20250124; computer_20251124 adds zoom)")
	mode := fs.String("coords", "relative", "UI-TARS coordinates: relative (0..1000), absolute (pixels) or smart (Qwen2.5-VL smart resize)")
	ack := fs.Bool("acknowledge-safety-checks", false, "OpenAI: accept the model's safety checks instead of stopping for the user")
	userWait := fs.Duration("user-timeout", time.Hour, "how long the run waits for acu runs resume when the model needs the user (0: stop at once, exit 3)")
	smart := fs.Bool("smart-wait", true, "offer acu's smart wait as an extra tool (Anthropic, OpenAI)")
	timeout := fs.Duration("call-timeout", 120*time.Second, "timeout of one model call")
	asJSON := fs.Bool("json", false, "print every event as a JSON line instead of a readable one")
	c, rest, warnings, err := config.Load(e.getenv, e.environ, fs, args)
	if err != nil {
		return err
	}
	task := strings.TrimSpace(strings.Join(rest, " "))
	def, ok := computerDefaults[*provider]
	if !ok {
		fs.Usage()
		return &exitError{code: 2, msg: "acu computer: --provider must be anthropic, openai or uitars"}
	}
	if task == "" {
		fs.Usage()
		return &exitError{code: 2, msg: `acu computer: say what to do, e.g. acu computer --provider anthropic "fill in the form"`}
	}
	dpy := c.Display
	if dpy == "" {
		return &exitError{code: 2, msg: "acu computer: no display: pass --display :99 or set DISPLAY"}
	}
	log := newLogger(c, e.stderr)
	for _, w := range warnings {
		log.Warn(w)
	}
	cc := c.Computer()
	if *model == "" {
		*model = firstOf(cc.Model, def.model)
	}
	if *baseURL == "" {
		*baseURL = cc.BaseURL
	}
	key, keyEnv := c.ComputerAPIKey(*provider)
	if *provider == api.VendorUITARS && *baseURL == "" {
		return &exitError{code: 2, msg: "acu computer: UI-TARS needs --base-url (or ACU_COMPUTER_BASE_URL): an OpenAI-compatible endpoint serving the model, up to /v1"}
	}
	if !key.Set() && (*baseURL == "" || !localURL(*baseURL)) {
		return &exitError{code: 2, msg: fmt.Sprintf("acu computer: the %s model needs a key: set %s or ACU_COMPUTER_API_KEY", *provider, firstOf(def.keyEnv, "ACU_COMPUTER_API_KEY"))}
	}
	wire := llm.OpenAI
	if *provider == api.VendorAnthropic {
		wire = llm.Anthropic
	}
	ledger := llm.NewLedger()
	mc, err := llm.New(llm.Options{Provider: wire, BaseURL: *baseURL, Model: *model, APIKey: key, Timeout: *timeout, Ledger: ledger,
		Logger: log.With("component", "llm", "role", "computer"), Prices: modelPrices(c), Name: "computer", KeyEnv: keyEnv})
	if err != nil {
		return err
	}
	if *maxCost > 0 {
		if err := mc.CheckPriced(*model); err != nil {
			return &exitError{code: 2, msg: fmt.Sprintf("acu computer: --max-cost cannot be kept: %v", err)}
		}
	}
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return fmt.Errorf("create ACU_DATA_DIR %s: %w", c.DataDir, err)
	}
	// The desktop: the running daemon, else one started detached (as acu
	// mcp does), which outlives this run.
	sctx, cancel := context.WithTimeout(ctx, daemonStartTimeout)
	cl, started, err := ensureDaemon(sctx, c, e, log)
	cancel()
	if err != nil {
		return err
	}
	if started {
		log.Info("acu computer: no daemon answered; started one, detached", "addr", cl.BaseURL(), "log", daemonLogPath(c))
	}
	cl.SetClientName("computer:" + *provider)
	parts, err := openWorkParts(ctx, c, log, nil, "computer")
	if err != nil {
		return err
	}
	defer parts.Close()
	q := api.ComputerQuery{Display: dpy, Limit: *limit, Version: *version, Mode: *mode}
	run, err := parts.runs.Start(ctx, runs.StartOptions{Kind: computer.Kind, Spec: map[string]any{"task": task, "provider": *provider, "model": *model,
		"display": dpy, "limit": *limit, "max_steps": *maxSteps, "max_cost": *maxCost}})
	if err != nil {
		return err
	}
	show := func(stream string, data any) { printComputerEvent(e.stdout, run.ID, data) }
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		show = func(stream string, data any) {
			_ = enc.Encode(map[string]any{"runId": run.ID, "stream": stream, "data": data})
		}
	} else {
		fmt.Fprintf(e.stdout, "computer (%s %s) on %s: %s\nrun: %s\n", *provider, *model, dpy, task, run.ID)
	}
	o := computer.LoopOptions{Vendor: *provider, Task: task, Model: *model, Query: q, MaxSteps: *maxSteps, MaxCost: *maxCost,
		AcknowledgeSafety: *ack, RunID: run.ID, Exec: cl, LLM: mc, Logger: log,
		Record: func(ctx context.Context, ev computer.TurnEvent) {
			if _, err := parts.runs.Emit(context.WithoutCancel(ctx), run.ID, "turn", ev); err != nil {
				log.Warn("record a turn", "run_id", run.ID, "err", err)
			}
			show("turn", ev)
		}}
	if *smart && *provider != api.VendorUITARS {
		o.Waits = cl
	}
	if *userWait > 0 {
		o.AskUser = computer.AskThroughRun(parts.runs, run.ID, *userWait, func(q computer.Ask) {
			show("needs_user", q)
		})
	}
	res := computer.Run(ctx, o)
	status := runs.StatusError
	switch res.Status {
	case computer.StatusCompleted:
		status = runs.StatusCompleted
	case computer.StatusCancelled:
		status = runs.StatusCancelled
	}
	if _, err := parts.runs.End(context.WithoutCancel(ctx), run.ID, status, res.Error, res); err != nil && !errors.Is(err, runs.ErrEnded) {
		log.Warn("end the run", "run_id", run.ID, "err", err)
	}
	show("result", res)
	switch res.Status {
	case computer.StatusCompleted:
		return nil
	case computer.StatusCancelled:
		return &exitError{code: 130}
	case computer.StatusNeedsUser:
		return &exitError{code: 3}
	}
	return &exitError{code: 1}
}

// printComputerEvent prints one event as a progress line.
func printComputerEvent(w io.Writer, runID string, data any) {
	switch ev := data.(type) {
	case computer.TurnEvent:
		line := fmt.Sprintf("[%d] %s %s", ev.Turn, ev.Status, oneLine(strings.Join(ev.Actions, "; "), 100))
		if ev.Error != "" {
			line += " error: " + oneLine(ev.Error, 100)
		}
		if ev.Text != "" {
			line += " | " + oneLine(ev.Text, 80)
		}
		fmt.Fprintf(w, "%s (model %.0f ms, acu %.0f ms, $%.4f)\n", line, ev.ModelMs, ev.ExecMs, ev.TotalCost)
	case computer.Ask:
		what := "the model asks for your help"
		if ev.Reason == computer.AskSafetyCheck {
			what = "the model's next action has safety checks for you to accept"
		}
		fmt.Fprintf(w, "waiting for you: %s: %s\n  go on: acu runs resume %s%s [--message TEXT]\n  stop:  acu runs cancel %s\n",
			what, oneLine(ev.Message, 200), runID, map[bool]string{true: " --acknowledge"}[ev.Reason == computer.AskSafetyCheck], runID)
	case computer.LoopResult:
		fmt.Fprintf(w, "%s after %d turns (%s, %d+%d tokens): %s\n", ev.Status, ev.Turns, costText(ev.CostUSD, ev.Unpriced), ev.TokensIn, ev.TokensOut, firstOf(ev.Summary, ev.Error))
	}
}
