package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/computer"
	"github.com/acu-dev/acu/internal/config"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/session"
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

// computerArgs are `acu computer`'s settings after its flags.
type computerArgs struct {
	provider, model, baseURL, limit, version, mode, task string
	maxSteps                                             int
	maxCost                                              float64
	ack, smart, asJSON                                   bool
	userWait, timeout                                    time.Duration
}

func runComputer(ctx context.Context, e *env, args []string) error {
	c, a, err := parseComputer(e, args)
	if err != nil {
		return err
	}
	log := newLogger(c, e.stderr)
	mc, err := computerModel(c, a, log)
	if err != nil {
		return err
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
	cl.SetClientName("computer:" + a.provider)
	parts, err := openWorkParts(ctx, c, log, nil, "computer")
	if err != nil {
		return err
	}
	defer parts.Close()
	o := computer.LoopOptions{Vendor: a.provider, Task: a.task, Model: a.model, Query: api.ComputerQuery{Display: c.Display, Limit: a.limit, Version: a.version, Mode: a.mode},
		MaxSteps: a.maxSteps, MaxCost: a.maxCost, CallTimeout: a.timeout, AcknowledgeSafety: a.ack, Runs: parts.runs, UserTimeout: a.userWait, Exec: cl, LLM: mc, Logger: log}
	runID := ""
	o.OnEvent = func(stream string, data any) { printComputerEvent(e.stdout, runID, data) }
	o.Started = func(id string) {
		runID = id
		fmt.Fprintf(e.stdout, "computer (%s %s) on %s: %s\nrun: %s\n", a.provider, a.model, c.Display, a.task, id)
	}
	if a.asJSON {
		enc := json.NewEncoder(e.stdout)
		o.OnEvent = func(stream string, data any) {
			_ = enc.Encode(map[string]any{"runId": runID, "stream": jsonStream(stream), "data": data})
		}
		o.Started = func(id string) { runID = id }
	}
	if a.smart && a.provider != api.VendorUITARS {
		o.Waits = cl
	}
	res := computer.Run(ctx, o)
	o.OnEvent("result", res)
	return computerExit(res)
}

// jsonStream is the stream an event of the loop is printed under in
// --json lines: a hand-over to the user is "needs_user".
func jsonStream(s string) string {
	if s == api.StreamControl {
		return "needs_user"
	}
	return s
}

// parseComputer reads `acu computer`'s flags, settings and task.
func parseComputer(e *env, args []string) (*config.Config, computerArgs, error) {
	fs := newFlags(e, "computer", computerUsage)
	var a computerArgs
	fs.StringVar(&a.provider, "provider", "", "anthropic, openai or uitars")
	fs.StringVar(&a.model, "model", "", "the model (default per provider: claude-sonnet-4-5, computer-use-preview, ui-tars-1.5-7b)")
	fs.StringVar(&a.baseURL, "base-url", "", "the provider's endpoint (default ACU_COMPUTER_BASE_URL, else the vendor's)")
	fs.IntVar(&a.maxSteps, "max-steps", 50, "model turns before the run stops")
	fs.Float64Var(&a.maxCost, "max-cost", 0, "US dollars of model cost before the run stops (0: no limit)")
	fs.StringVar(&a.limit, "limit", "1280x800", "largest screenshot offered to the model, WxH (coordinates map back to exact screen pixels)")
	fs.StringVar(&a.version, "tool-version", "", "Anthropic tool version (default computer_20250124; computer_20251124 adds zoom)")
	fs.StringVar(&a.mode, "coords", "relative", "UI-TARS coordinates: relative (0..1000), absolute (pixels) or smart (Qwen2.5-VL smart resize)")
	fs.BoolVar(&a.ack, "acknowledge-safety-checks", false, "OpenAI: accept the model's safety checks instead of stopping for the user")
	fs.DurationVar(&a.userWait, "user-timeout", time.Hour, "how long the run waits for acu runs resume when the model needs the user (0: stop at once, exit 3)")
	fs.BoolVar(&a.smart, "smart-wait", true, "offer acu's smart wait as an extra tool (Anthropic, OpenAI)")
	fs.DurationVar(&a.timeout, "call-timeout", 120*time.Second, "timeout of one model call, its retries included")
	fs.BoolVar(&a.asJSON, "json", false, "print every event as a JSON line instead of a readable one")
	c, rest, warnings, err := config.Load(e.getenv, e.environ, fs, args)
	if err != nil {
		return nil, a, err
	}
	a.task = strings.TrimSpace(strings.Join(rest, " "))
	def, ok := computerDefaults[a.provider]
	switch {
	case !ok:
		fs.Usage()
		return nil, a, &exitError{code: 2, msg: "acu computer: --provider must be anthropic, openai or uitars"}
	case a.task == "":
		fs.Usage()
		return nil, a, &exitError{code: 2, msg: `acu computer: say what to do, e.g. acu computer --provider anthropic "fill in the form"`}
	case c.Display == "":
		return nil, a, &exitError{code: 2, msg: "acu computer: no display: pass --display :99 or set DISPLAY"}
	}
	for _, w := range warnings {
		newLogger(c, e.stderr).Warn(w)
	}
	cc := c.Computer()
	a.model = firstOf(a.model, cc.Model, def.model)
	a.baseURL = firstOf(a.baseURL, cc.BaseURL)
	return c, a, nil
}

// computerModel is the client of the provider's model: a key unless the
// endpoint is local, and a price when a cost budget is set.
func computerModel(c *config.Config, a computerArgs, log *slog.Logger) (*llm.Client, error) {
	key, keyEnv := c.ComputerAPIKey(a.provider)
	if a.provider == api.VendorUITARS && a.baseURL == "" {
		return nil, &exitError{code: 2, msg: "acu computer: UI-TARS needs --base-url (or ACU_COMPUTER_BASE_URL): an OpenAI-compatible endpoint serving the model, up to /v1"}
	}
	if !key.Set() && (a.baseURL == "" || !localURL(a.baseURL)) {
		return nil, &exitError{code: 2, msg: fmt.Sprintf("acu computer: the %s model needs a key: set %s or ACU_COMPUTER_API_KEY",
			a.provider, firstOf(computerDefaults[a.provider].keyEnv, "ACU_COMPUTER_API_KEY"))}
	}
	wire := llm.OpenAI
	if a.provider == api.VendorAnthropic {
		wire = llm.Anthropic
	}
	mc, err := llm.New(llm.Options{Provider: wire, BaseURL: a.baseURL, Model: a.model, APIKey: key, Timeout: a.timeout, Ledger: llm.NewLedger(),
		Logger: log.With("component", "llm", "role", "computer"), Prices: modelPrices(c), Name: "computer", KeyEnv: keyEnv})
	if err != nil {
		return nil, err
	}
	if err := (session.Budget{MaxCost: a.maxCost}).CheckPriced(mc, a.model); err != nil {
		return nil, &exitError{code: 2, msg: fmt.Sprintf("acu computer: --max-cost cannot be kept: %v", err)}
	}
	return mc, nil
}

// computerExit is the exit status of a loop's outcome.
func computerExit(res computer.LoopResult) error {
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

const computerUsage = `--provider anthropic|openai|uitars [flags] "<task>"

Drives a computer-use model on the display: screenshot, the model's action in its vendor's dialect,
acu runs it (settling instead of sleeping), the result back to the model, until the model is done or
a budget runs out. The run is a run of kind "computer" with one event per turn. Keys: ANTHROPIC_API_KEY,
OPENAI_API_KEY, or ACU_COMPUTER_API_KEY for any; ACU_COMPUTER_BASE_URL or --base-url for another endpoint
(UI-TARS: any OpenAI-compatible server). When the model calls for the user (UI-TARS call_user) or its
action has safety checks (OpenAI), the run waits for the user's answer: acu runs resume RUN [--message TEXT]
(--acknowledge for safety checks, with an admin token), or acu runs cancel RUN. Exit status: 0 completed,
1 failed or out of budget, 3 the model needed the user and nobody answered within --user-timeout,
130 cancelled (Ctrl-C or acu runs cancel).`

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
