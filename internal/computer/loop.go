package computer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/dialect"
	"github.com/acu-dev/acu/internal/dialect/anthropic"
	"github.com/acu-dev/acu/internal/dialect/openai"
	"github.com/acu-dev/acu/internal/dialect/uitars"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/session"
)

// Kind is the run kind of `acu computer`.
const Kind = "computer"

// StreamTurn is the stream a loop's turns are recorded on.
const StreamTurn = "turn"

// Outcomes of a loop.
const (
	StatusCompleted = "completed" // the model says it is done
	StatusFailed    = "failed"    // a model or desktop error ended it
	StatusBudget    = "budget"    // the step or cost budget ran out
	StatusNeedsUser = "needs_user"
	StatusCancelled = "cancelled"
)

// Executor runs action items (*api.Client).
type Executor interface {
	Computer(ctx context.Context, vendor string, q api.ComputerQuery, item json.RawMessage) (api.ComputerResult, error)
	ComputerTool(ctx context.Context, vendor string, q api.ComputerQuery) (api.ComputerResult, error)
	ScreenshotWith(ctx context.Context, display string, o api.ShotOptions) (api.Shot, error)
}

// Waiter is the smart wait offered to the model as an extra tool
// (*api.Client); nil offers none.
type Waiter interface {
	CreateWait(ctx context.Context, w api.CreateWait) (api.Wait, error)
	WaitRun(ctx context.Context, id string, timeout time.Duration) (api.WaitResult, error)
	GetWait(ctx context.Context, id string) (api.Wait, error)
}

// Model is a computer-use model's endpoint (*llm.Client).
type Model = dialect.Model

// RunStore records a loop as a run and hands it to the user through it
// (*runs.Registry).
type RunStore interface {
	session.Registry
	RunControl
}

// conversations are the vendors' sides of the loop.
var conversations = map[string]func(dialect.ConversationOptions) dialect.Conversation{
	api.VendorAnthropic: func(o dialect.ConversationOptions) dialect.Conversation { return anthropic.NewConversation(o) },
	api.VendorOpenAI:    func(o dialect.ConversationOptions) dialect.Conversation { return openai.NewConversation(o) },
	api.VendorUITARS:    func(o dialect.ConversationOptions) dialect.Conversation { return uitars.NewConversation(o) },
}

// LoopOptions configure one loop.
type LoopOptions struct {
	Vendor string
	Task   string
	Model  string
	Query  api.ComputerQuery
	// MaxSteps bounds the model turns (default 50); MaxCost the model
	// cost in US dollars (0: none), which a call of unknown cost ends.
	MaxSteps  int
	MaxCost   float64
	MaxTokens int
	// CallTimeout bounds one model call, all its attempts (the session
	// harness's per-call timeout, `acu computer --call-timeout`); 0: none
	// beyond the model client's own per attempt. A call it ends fails the
	// loop with an error naming the limit.
	CallTimeout time.Duration
	// AcknowledgeSafety acknowledges OpenAI's pending safety checks on the
	// caller's behalf (the user said so on the command line); otherwise a
	// check stops the loop with StatusNeedsUser.
	AcknowledgeSafety bool
	// UserWait is how long an active user may hold the loop (default 5m).
	UserWait time.Duration
	// AskUser hands the loop to the user when the model calls for them
	// (UI-TARS call_user) or its action has safety checks (OpenAI), and
	// blocks until they answer. Nil ends the loop with StatusNeedsUser
	// instead, unless Runs and UserTimeout hand it over through the run.
	// Errors: ErrNoAnswer when nobody answered in time, or the reason the
	// run was ended meanwhile (a cancel).
	AskUser func(ctx context.Context, q Ask) (Answer, error)
	// Runs, when set, records the loop as a run of kind "computer": Run
	// starts it (Started is told its id), records each turn, and ends it
	// with the loop's outcome. With UserTimeout > 0 (and no AskUser) the
	// loop waits that long for the user's answer through the run
	// (AskThroughRun). Without Runs, RunID names a run already started
	// (recorded by the caller) for the model calls' ledger.
	Runs        RunStore
	UserTimeout time.Duration
	Started     func(runID string)
	RunID       string
	// OnEvent is shown every event: the turns (StreamTurn, a TurnEvent)
	// and the hand-overs to the user (api.StreamControl, an Ask).
	OnEvent func(stream string, data any)
	Exec    Executor
	Waits   Waiter
	LLM     Model
	Logger  *slog.Logger
}

// Ask is what the loop asks the user.
type Ask struct {
	Reason  string          `json:"reason"`            // AskCallUser or AskSafetyCheck
	Message string          `json:"message,omitempty"` // the model's words, or the checks' messages
	Pending json.RawMessage `json:"pending_safety_checks,omitempty"`
}

// Ask reasons.
const (
	AskCallUser    = "call_user"
	AskSafetyCheck = "safety_check"
)

// Answer is the user's reply to an Ask.
type Answer struct {
	// Acknowledge accepts the pending safety checks; a safety check is
	// never passed without it.
	Acknowledge bool `json:"acknowledge,omitempty"`
	// Message is handed to the model (call_user), e.g. what the user did.
	Message string `json:"message,omitempty"`
	By      string `json:"by,omitempty"` // who answered (a token's name)
}

// ErrNoAnswer: the user did not answer in time.
var ErrNoAnswer = errors.New("no answer from the user")

// TurnEvent is one turn of the loop: the model's call and what ran.
type TurnEvent struct {
	Turn       int      `json:"turn"`
	Actions    []string `json:"actions,omitempty"` // the vendor's actions, as sent
	Status     string   `json:"status"`            // the step's: acted, error, finished, call_user, safety_check, paused, waited
	Error      string   `json:"error,omitempty"`
	Text       string   `json:"text,omitempty"` // the model's text
	ShotID     string   `json:"shot_id,omitempty"`
	ModelMs    float64  `json:"model_ms"`
	ExecMs     float64  `json:"exec_ms"`
	TokensIn   int      `json:"tokens_in"`
	TokensOut  int      `json:"tokens_out"`
	CostUSD    float64  `json:"cost_usd"`
	CostKnown  bool     `json:"cost_known"`
	TotalCost  float64  `json:"total_cost_usd"`
	SessionRun string   `json:"session_run,omitempty"`
}

// LoopResult is how a loop ended.
type LoopResult struct {
	Status    string  `json:"status"`
	Turns     int     `json:"turns"`
	Summary   string  `json:"summary,omitempty"`
	Error     string  `json:"error,omitempty"`
	CostUSD   float64 `json:"cost_usd"`
	Unpriced  int     `json:"unpriced_calls,omitempty"`
	TokensIn  int     `json:"tokens_in"`
	TokensOut int     `json:"tokens_out"`
	// Pending are OpenAI's safety checks that stopped the loop.
	Pending json.RawMessage `json:"pending_safety_checks,omitempty"`
}

type loop struct {
	o     LoopOptions
	res   LoopResult
	meter session.Meter
	run   *session.Run
	log   *slog.Logger
}

// Run drives the model until it is done, a budget runs out or ctx ends.
func Run(ctx context.Context, o LoopOptions) LoopResult {
	if o.MaxSteps <= 0 {
		o.MaxSteps = 50
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = 4096
	}
	if o.UserWait <= 0 {
		o.UserWait = 5 * time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	l := &loop{o: o, log: o.Logger, meter: session.Meter{Budget: session.Budget{MaxSteps: o.MaxSteps, MaxCost: o.MaxCost}}}
	if err := l.start(ctx); err != nil {
		return l.fail(ctx, err)
	}
	if err := l.drive(ctx); err != nil {
		l.fail(ctx, err)
	}
	l.end(ctx)
	return l.res
}

// start records the loop as a run when it has a run store.
func (l *loop) start(ctx context.Context) error {
	if l.o.Runs == nil {
		l.run = session.Attach(nil, l.o.RunID, Kind, l.log)
		l.run.OnEvent = l.o.OnEvent
		return nil
	}
	run, err := session.Start(ctx, l.o.Runs, Kind, runs.StartOptions{Kind: Kind, Spec: map[string]any{"task": l.o.Task, "provider": l.o.Vendor,
		"model": l.o.Model, "display": l.o.Query.Display, "limit": l.o.Query.Limit, "max_steps": l.o.MaxSteps, "max_cost": l.o.MaxCost}}, l.log)
	if err != nil {
		return err
	}
	l.run, l.o.RunID = run, run.ID()
	l.run.OnEvent = l.o.OnEvent
	if l.o.AskUser == nil && l.o.UserTimeout > 0 {
		l.o.AskUser = AskThroughRun(l.o.Runs, run.ID(), l.o.UserTimeout, func(q Ask) {
			if l.o.OnEvent != nil {
				l.o.OnEvent(api.StreamControl, q)
			}
		})
	}
	if l.o.Started != nil {
		l.o.Started(run.ID())
	}
	return nil
}

// end records the run's end (a run the loop started).
func (l *loop) end(ctx context.Context) {
	if l.o.Runs == nil {
		return
	}
	status := runs.StatusError
	switch l.res.Status {
	case StatusCompleted:
		status = runs.StatusCompleted
	case StatusCancelled:
		status = runs.StatusCancelled
	}
	l.run.End(ctx, status, l.res.Error, l.res)
}

func (l *loop) fail(ctx context.Context, err error) LoopResult {
	l.res.Error = err.Error()
	l.res.Status = StatusFailed
	if ctx.Err() != nil {
		l.res.Status = StatusCancelled
	}
	return l.res
}

// smartWaitName is acu's smart wait, offered to Anthropic and OpenAI
// models beside the computer tool.
const smartWaitName = "smart_wait"

// drive runs the turns: the model's call, then each of its items, until
// the model has nothing more to run or the loop ends.
func (l *loop) drive(ctx context.Context) error {
	newConv, ok := conversations[l.o.Vendor]
	if !ok {
		return fmt.Errorf("provider %q: use anthropic, openai or uitars", l.o.Vendor)
	}
	tools, err := l.o.Exec.ComputerTool(ctx, l.o.Vendor, l.o.Query)
	if err != nil {
		return fmt.Errorf("read the display's size: %w", err)
	}
	co := dialect.ConversationOptions{Task: l.o.Task, Model: l.o.Model, MaxTokens: l.o.MaxTokens, RunID: l.o.RunID,
		Tool: tools.Tool, Version: l.o.Query.Version, Screenshot: func(ctx context.Context) ([]byte, error) {
			shot, err := l.o.Exec.ScreenshotWith(ctx, l.o.Query.Display, api.ShotOptions{Format: "png", MaxWidth: tools.Image[0]})
			return shot.Data, err
		}}
	if l.o.Waits != nil {
		co.Functions = []dialect.Function{{Name: smartWaitName, Description: smartWaitDesc, Schema: smartWaitSchema}}
	}
	conv := newConv(co)
	for {
		turn, err := l.meter.Step()
		if err != nil {
			l.res.Status, l.res.Error = StatusBudget, err.Error()
			return nil
		}
		l.res.Turns = turn
		t, err := conv.Next(ctx, timed{l.o.LLM, l.o.CallTimeout})
		if te, ok := errors.AsType[*session.TimeoutError](err); ok {
			return fmt.Errorf("model call for turn %d: no reply within %s (the call timeout, --call-timeout): %w", turn, te.After, te.Err)
		}
		if err != nil {
			return err
		}
		ev := TurnEvent{Turn: turn, Text: t.Text}
		stop := l.account(&ev, t)
		next := true
		for _, it := range t.Items {
			ev.Actions = append(ev.Actions, it.Shown)
			if stop != nil || !next {
				continue
			}
			var end bool
			if end, next, err = l.item(ctx, conv, &ev, it); end || err != nil {
				return err
			}
		}
		if !next {
			continue // the turn was recorded before the user took over
		}
		if len(t.Items) == 0 && stop == nil {
			ev.Status = "done"
			l.record(ctx, ev)
			l.res.Status, l.res.Summary = StatusCompleted, ev.Text
			return nil
		}
		l.record(ctx, ev)
		if stop != nil {
			return nil
		}
	}
}

// timed is the model with every call under the harness's per-call
// timeout d.
type timed struct {
	m Model
	d time.Duration
}

func (t timed) Raw(ctx context.Context, req llm.RawRequest) (llm.RawResponse, error) {
	return session.Call(ctx, t.d, func(ctx context.Context) (llm.RawResponse, error) { return t.m.Raw(ctx, req) })
}

func (t timed) Chat(ctx context.Context, req llm.Request) (llm.Response, error) {
	return session.Call(ctx, t.d, func(ctx context.Context) (llm.Response, error) { return t.m.Chat(ctx, req) })
}

// account adds a model call to the totals and checks the cost budget.
func (l *loop) account(ev *TurnEvent, t dialect.Turn) error {
	r := t.Response
	ev.ModelMs = float64(r.Latency.Microseconds()) / 1000
	ev.TokensIn, ev.TokensOut, ev.CostUSD, ev.CostKnown = r.Usage.InputTokens, r.Usage.OutputTokens, r.CostUSD, r.CostKnown
	err := l.meter.Add(r)
	l.res.TokensIn, l.res.TokensOut, l.res.CostUSD, l.res.Unpriced = l.meter.TokensIn, l.meter.TokensOut, l.meter.CostUSD, l.meter.Unpriced
	ev.TotalCost = l.res.CostUSD
	if err != nil {
		l.res.Status, l.res.Error = StatusBudget, err.Error()
	}
	return err
}

func (l *loop) record(ctx context.Context, ev TurnEvent) { l.run.Emit(ctx, StreamTurn, ev) }

// item runs one item of the model's turn and hands its outcome back to
// the conversation. end: the loop ends (l.res says how, or err); next is
// false when the user took over after this item: the turn's other items
// are not run and it is already recorded.
func (l *loop) item(ctx context.Context, conv dialect.Conversation, ev *TurnEvent, it dialect.Item) (end, next bool, err error) {
	if it.Kind == dialect.ItemFunction {
		out := "unknown function " + it.Name
		if it.Name == smartWaitName {
			out = l.smartWait(ctx, it.Raw)
			ev.Status = "waited"
		}
		conv.Output(it, out)
		return false, true, nil
	}
	q := l.o.Query
	if l.o.AcknowledgeSafety {
		q.Acknowledge = append(slices.Clip(q.Acknowledge), it.Pending...)
	}
	res, err := l.execute(ctx, ev, it.Raw, q)
	if err != nil {
		return true, false, err
	}
	show(ev, res)
	switch res.Status {
	case api.ComputerSafetyCheck:
		ok, err := l.safetyCheck(ctx, ev, it, q, &res)
		if err != nil || !ok {
			return true, false, err
		}
	case api.ComputerFinished:
		l.record(ctx, *ev)
		l.res.Status, l.res.Summary = StatusCompleted, res.Content
		return true, false, nil
	case api.ComputerCallUser:
		l.record(ctx, *ev)
		ans, ok, err := l.askUser(ctx, Ask{Reason: AskCallUser, Message: firstNonEmpty(res.Content, it.Shown)})
		if err != nil || !ok {
			return true, false, err
		}
		// The user has helped: tell the model what they said, with the
		// screen as it is now.
		return false, false, conv.Helped(ctx, ans.Message)
	}
	failure := ""
	if res.Error != nil {
		failure = res.Error.Message
	}
	conv.Result(it, res.Result, failure)
	return false, true, nil
}

// show puts an item's result on the turn's record.
func show(ev *TurnEvent, res api.ComputerResult) {
	ev.Status, ev.ShotID, ev.SessionRun = res.Status, res.ShotID, res.SessionRun
	if res.Error != nil {
		ev.Error = res.Error.Message
	}
}

// safetyCheck hands an action held by OpenAI's safety checks to the user
// and, when they acknowledge the checks, runs it again acknowledging them
// (res becomes its result). ok is false when the loop ends here.
func (l *loop) safetyCheck(ctx context.Context, ev *TurnEvent, it dialect.Item, q api.ComputerQuery, res *api.ComputerResult) (ok bool, err error) {
	l.record(ctx, *ev)
	ans, ok, err := l.askUser(ctx, Ask{Reason: AskSafetyCheck, Message: checkMessages(res.PendingSafetyChecks), Pending: res.PendingSafetyChecks})
	if err != nil || !ok {
		return false, err
	}
	if !ans.Acknowledge {
		l.res.Status, l.res.Pending = StatusNeedsUser, res.PendingSafetyChecks
		l.res.Error = "the user answered without acknowledging the model's safety checks: " + string(res.PendingSafetyChecks)
		return false, nil
	}
	// The user accepted: run the same call, acknowledging.
	q.Acknowledge = append(slices.Clip(q.Acknowledge), checkIDs(res.PendingSafetyChecks)...)
	*ev = TurnEvent{Turn: ev.Turn, Actions: ev.Actions, Text: ev.Text}
	again, err := l.execute(ctx, ev, it.Raw, q)
	if err != nil {
		return false, err
	}
	ev.Status, ev.ShotID, ev.SessionRun = again.Status, again.ShotID, again.SessionRun
	if again.Status == api.ComputerSafetyCheck {
		return false, fmt.Errorf("the model's action still has safety checks after the user acknowledged %s: %s", string(again.PendingSafetyChecks), again.Error.Message)
	}
	if again.Error != nil {
		ev.Error = again.Error.Message
	}
	*res = again
	return true, nil
}

// execute runs one item. While the user is at the controls the action
// service refuses it (user_active); the loop pauses through the harness
// (session.UserFirst), recording the pause and the resume, and runs the
// same action once the user has been still: the model never sees the
// pause.
func (l *loop) execute(ctx context.Context, ev *TurnEvent, item json.RawMessage, q api.ComputerQuery) (api.ComputerResult, error) {
	res, paused, err := session.UserFirst(ctx, l.o.UserWait, func(ctx context.Context) (api.ComputerResult, error) {
		res, err := l.o.Exec.Computer(ctx, l.o.Vendor, q, item)
		if err != nil {
			return res, fmt.Errorf("run the model's action: %w", err)
		}
		ev.ExecMs += res.Ms
		return res, nil
	}, userActive, func(r session.Refusal) {
		l.record(ctx, TurnEvent{Turn: ev.Turn, Status: "paused", Error: "the user is active: waiting " + r.Wait.String()})
		l.run.Emit(ctx, session.StreamIntervention, InterventionEvent{Turn: ev.Turn, Phase: "paused", Detail: r.Detail})
	})
	if paused > 0 && err == nil {
		l.run.Emit(ctx, session.StreamIntervention, InterventionEvent{Turn: ev.Turn, Phase: "resumed", PausedMs: paused.Milliseconds()})
	}
	return res, err
}

// userActive reads the action service's user-first refusal off a result.
func userActive(res api.ComputerResult) (session.Refusal, bool) {
	if res.Error == nil || res.Error.Code != api.CodeUserActive {
		return session.Refusal{}, false
	}
	return session.Refusal{Wait: time.Duration(res.Error.RetryAfterMs) * time.Millisecond, Detail: res.Error.Message}, true
}

// InterventionEvent is an event on session.StreamIntervention: the loop
// paused for the user (an action refused while they were at the
// controls), and resumed after PausedMs.
type InterventionEvent struct {
	Turn     int    `json:"turn"`
	Phase    string `json:"phase"` // paused, resumed
	Detail   string `json:"detail,omitempty"`
	PausedMs int64  `json:"paused_ms,omitempty"`
}

// smartWaitDesc is the extra tool's description and smartWaitSchema its
// arguments.
const smartWaitDesc = `Wait until something visible happens on the screen (a download finishes, a page loads, a dialog appears), up to timeout_s seconds, without taking screenshots: acu judges the screen cheaply whenever it changes and returns when the condition holds or at the timeout. Use it instead of repeated wait or screenshot actions for anything slower than a few seconds.`

var smartWaitSchema = json.RawMessage(`{"type":"object","properties":{"condition":{"type":"string","description":"what must be true on the screen, in plain language"},"timeout_s":{"type":"number","description":"the longest wait in seconds (1-3600)"}},"required":["condition","timeout_s"]}`)

// smartWait runs the extra tool: a wait on the daemon, blocking until it
// resolves.
func (l *loop) smartWait(ctx context.Context, args json.RawMessage) string {
	var a struct {
		Condition string  `json:"condition"`
		TimeoutS  float64 `json:"timeout_s"`
	}
	if err := json.Unmarshal(args, &a); err != nil || strings.TrimSpace(a.Condition) == "" || a.TimeoutS < 1 || a.TimeoutS > 3600 {
		return "smart_wait needs condition (text) and timeout_s (1 to 3600 seconds)"
	}
	if l.o.Waits == nil {
		return "smart_wait is not available: no judge is configured"
	}
	w, err := l.o.Waits.CreateWait(ctx, api.CreateWait{Criteria: a.Condition, Timeout: a.TimeoutS, Display: l.o.Query.Display})
	if err != nil {
		return "smart_wait could not start: " + err.Error()
	}
	if _, err := l.o.Waits.WaitRun(ctx, w.ID, time.Duration(a.TimeoutS*float64(time.Second))+30*time.Second); err != nil {
		return "smart_wait failed: " + err.Error()
	}
	w, err = l.o.Waits.GetWait(ctx, w.ID)
	if err != nil {
		return "smart_wait failed: " + err.Error()
	}
	out := fmt.Sprintf("smart_wait %s after %d judgements", w.State, w.Evaluations)
	if ev := firstNonEmpty(w.Evidence, w.Reason); ev != "" {
		out += ": " + ev
	}
	return out
}

// askUser hands the loop to the user. ok is false when the loop ends
// here (l.res says how); err ends it as failed or cancelled.
func (l *loop) askUser(ctx context.Context, q Ask) (ans Answer, ok bool, err error) {
	if l.o.AskUser == nil {
		l.res.Status = StatusNeedsUser
		switch q.Reason {
		case AskSafetyCheck:
			l.res.Pending = q.Pending
			l.res.Error = "the model's action has safety checks for the user to confirm: " + string(q.Pending) +
				" (run again with --acknowledge-safety-checks to accept them)"
		default:
			l.res.Error = "the model asks for the user's help"
			if q.Message != "" {
				l.res.Error += ": " + q.Message
			}
		}
		return Answer{}, false, nil
	}
	ans, err = l.o.AskUser(ctx, q)
	switch {
	case err == nil:
		return ans, true, nil
	case ctx.Err() != nil:
		return Answer{}, false, ctx.Err()
	case errors.Is(err, ErrNoAnswer):
		l.res.Status, l.res.Pending = StatusNeedsUser, q.Pending
		l.res.Error = fmt.Sprintf("the model needed the user (%s) and nobody answered: %v", q.Reason, err)
		return Answer{}, false, nil
	}
	l.res.Status, l.res.Error = StatusCancelled, err.Error()
	return Answer{}, false, nil
}

// checkIDs and checkMessages read OpenAI's pending_safety_checks.
func checkIDs(pending json.RawMessage) []string {
	var cs []openai.SafetyCheck
	_ = json.Unmarshal(pending, &cs)
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

func checkMessages(pending json.RawMessage) string {
	var cs []openai.SafetyCheck
	_ = json.Unmarshal(pending, &cs)
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		parts = append(parts, strings.TrimSpace(c.Code+": "+c.Message))
	}
	return strings.Join(parts, "; ")
}

func firstNonEmpty(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return a
	}
	return b
}
