package computer

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/dialect/anthropic"
	"github.com/acu-dev/acu/internal/llm"
)

// Kind is the run kind of `acu computer`.
const Kind = "computer"

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

// Model is a computer-use model's endpoint (*llm.Client): raw calls for
// Anthropic's and OpenAI's wire formats, chat for UI-TARS.
type Model interface {
	Raw(ctx context.Context, req llm.RawRequest) (llm.RawResponse, error)
	Chat(ctx context.Context, req llm.Request) (llm.Response, error)
}

// Recorder records the run (*runs.Registry).
type Recorder interface {
	Emit(ctx context.Context, runID, stream string, data any) error
}

// LoopOptions configure one loop.
type LoopOptions struct {
	Vendor string
	Task   string
	Model  string
	Query  api.ComputerQuery
	// MaxSteps bounds the model turns; MaxCost the model cost in US
	// dollars (0: none).
	MaxSteps  int
	MaxCost   float64
	MaxTokens int
	// AcknowledgeSafety acknowledges OpenAI's pending safety checks on the
	// caller's behalf (the user said so on the command line); otherwise a
	// check stops the loop with StatusNeedsUser.
	AcknowledgeSafety bool
	// UserWait is how long an active user may hold the loop (default 5m).
	UserWait time.Duration
	// AskUser hands the loop to the user when the model calls for them
	// (UI-TARS call_user) or its action has safety checks (OpenAI), and
	// blocks until they answer. Nil ends the loop with StatusNeedsUser
	// instead. Errors: ErrNoAnswer when nobody answered in time, or the
	// reason the run was ended meanwhile (a cancel).
	AskUser func(ctx context.Context, q Ask) (Answer, error)
	RunID   string
	Exec    Executor
	Waits   Waiter
	LLM     Model
	Record  func(ctx context.Context, ev TurnEvent)
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
	log   *slog.Logger
	tools api.ComputerResult
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
	l := &loop{o: o, log: o.Logger}
	tools, err := o.Exec.ComputerTool(ctx, o.Vendor, o.Query)
	if err != nil {
		return l.fail(ctx, fmt.Errorf("read the display's size: %w", err))
	}
	l.tools = tools
	switch o.Vendor {
	case api.VendorAnthropic:
		err = l.anthropic(ctx)
	case api.VendorOpenAI:
		err = l.openai(ctx)
	case api.VendorUITARS:
		err = l.uitars(ctx)
	default:
		err = fmt.Errorf("provider %q: use anthropic, openai or uitars", o.Vendor)
	}
	if err != nil {
		return l.fail(ctx, err)
	}
	return l.res
}

func (l *loop) fail(ctx context.Context, err error) LoopResult {
	l.res.Error = err.Error()
	l.res.Status = StatusFailed
	if ctx.Err() != nil {
		l.res.Status = StatusCancelled
	}
	return l.res
}

// account adds a model call to the totals and checks the cost budget.
func (l *loop) account(ev *TurnEvent, r llm.Response) error {
	ev.ModelMs = float64(r.Latency.Microseconds()) / 1000
	ev.TokensIn, ev.TokensOut, ev.CostUSD, ev.CostKnown = r.Usage.InputTokens, r.Usage.OutputTokens, r.CostUSD, r.CostKnown
	l.res.TokensIn += r.Usage.InputTokens
	l.res.TokensOut += r.Usage.OutputTokens
	l.res.CostUSD += r.CostUSD
	if !r.CostKnown {
		l.res.Unpriced++
	}
	ev.TotalCost = l.res.CostUSD
	if l.o.MaxCost > 0 && l.res.CostUSD >= l.o.MaxCost {
		l.res.Status, l.res.Error = StatusBudget, fmt.Sprintf("the cost budget of $%.2f is spent ($%.4f)", l.o.MaxCost, l.res.CostUSD)
		return errBudget
	}
	return nil
}

// errBudget stops a loop whose cost budget is spent.
var errBudget = errors.New("cost budget spent")

func (l *loop) record(ctx context.Context, ev TurnEvent) {
	if l.o.Record != nil {
		l.o.Record(ctx, ev)
	}
}

// execute runs one item, holding while the user is at the controls.
func (l *loop) execute(ctx context.Context, ev *TurnEvent, item json.RawMessage, q api.ComputerQuery) (api.ComputerResult, error) {
	deadline := time.Now().Add(l.o.UserWait)
	for {
		res, err := l.o.Exec.Computer(ctx, l.o.Vendor, q, item)
		if err != nil {
			return res, fmt.Errorf("run the model's action: %w", err)
		}
		ev.ExecMs += res.Ms
		if res.Error == nil || res.Error.Code != api.CodeUserActive {
			return res, nil
		}
		// The user first: wait until they have been still, then run the
		// same action again; the model never sees the pause.
		wait := max(time.Duration(res.Error.RetryAfterMs)*time.Millisecond, 200*time.Millisecond)
		if time.Now().Add(wait).After(deadline) {
			return res, fmt.Errorf("the user has been using the display for over %s: acu does not fight them for the pointer", l.o.UserWait)
		}
		l.record(ctx, TurnEvent{Turn: ev.Turn, Status: "paused", Error: "the user is active: waiting " + wait.String()})
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return res, ctx.Err()
		case <-t.C:
		}
	}
}

// smartWaitTool is the extra tool's description and schema.
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

// ---- Anthropic Messages with the computer tool ----

type antContent = json.RawMessage

type antMessage struct {
	Role    string       `json:"role"`
	Content []antContent `json:"content"`
}

type antTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type antReply struct {
	Content []struct {
		Type  string          `json:"type"`
		Text  string          `json:"text,omitempty"`
		ID    string          `json:"id,omitempty"`
		Name  string          `json:"name,omitempty"`
		Input json.RawMessage `json:"input,omitempty"`
	} `json:"content"`
	StopReason string `json:"stop_reason"`
	Model      string `json:"model"`
	Usage      struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

func decodeAnt(b []byte) (llm.Response, error) {
	var r antReply
	if err := json.Unmarshal(b, &r); err != nil {
		return llm.Response{}, err
	}
	return llm.Response{Model: r.Model, FinishReason: r.StopReason, Usage: llm.Usage{InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens}}, nil
}

// keepImages is how many of the latest screenshots stay in the
// conversation sent to Anthropic (as the vendor demo keeps 3): older ones
// become a note, so a long task does not resend every picture.
const keepImages = 3

func (l *loop) anthropic(ctx context.Context) error {
	system := "You are operating a Linux desktop through the computer tool. Take a screenshot first. After each action acu waits until the screen is still and returns a screenshot, so you do not need to wait after actions. Use smart_wait for anything slow. When the task is done, answer with a short summary and no tool call."
	var tools []any
	tools = append(tools, l.tools.Tool)
	if l.o.Waits != nil {
		tools = append(tools, antTool{Name: "smart_wait", Description: smartWaitDesc, InputSchema: smartWaitSchema})
	}
	beta := anthropic.Tool{Version: l.o.Query.Version}.BetaHeader()
	task, _ := json.Marshal(map[string]string{"type": "text", "text": l.o.Task})
	msgs := []antMessage{{Role: "user", Content: []antContent{task}}}
	for turn := 1; ; turn++ {
		if turn > l.o.MaxSteps {
			l.res.Status, l.res.Error = StatusBudget, fmt.Sprintf("the step budget of %d turns is spent", l.o.MaxSteps)
			return nil
		}
		l.res.Turns = turn
		body, _ := json.Marshal(map[string]any{"model": l.o.Model, "max_tokens": l.o.MaxTokens, "system": system, "tools": tools, "messages": pruneAnt(msgs)})
		r, err := l.o.LLM.Raw(ctx, llm.RawRequest{Path: "/v1/messages", Body: body, Model: l.o.Model, RunID: l.o.RunID,
			Headers: map[string]string{"anthropic-beta": beta}, Decode: decodeAnt})
		if err != nil {
			return err
		}
		ev := TurnEvent{Turn: turn}
		stop := l.account(&ev, r.Response)
		var reply antReply
		if err := json.Unmarshal(r.Body, &reply); err != nil {
			return fmt.Errorf("decode the model's reply: %w", err)
		}
		var assistant []antContent
		var results []antContent
		var texts []string
		for i, c := range reply.Content {
			raw, _ := json.Marshal(reply.Content[i])
			assistant = append(assistant, raw)
			switch c.Type {
			case "text":
				texts = append(texts, c.Text)
			case "tool_use":
				ev.Actions = append(ev.Actions, c.Name+" "+string(c.Input))
				if stop != nil {
					continue
				}
				if c.Name == "smart_wait" {
					out := l.smartWait(ctx, c.Input)
					b, _ := json.Marshal(map[string]any{"type": "tool_result", "tool_use_id": c.ID, "content": []map[string]string{{"type": "text", "text": out}}})
					results = append(results, b)
					ev.Status = "waited"
					continue
				}
				res, err := l.execute(ctx, &ev, raw, l.o.Query)
				if err != nil {
					return err
				}
				results = append(results, res.Result)
				ev.Status, ev.ShotID, ev.SessionRun = res.Status, res.ShotID, res.SessionRun
				if res.Error != nil {
					ev.Error = res.Error.Message
				}
			}
		}
		ev.Text = strings.Join(texts, "\n")
		if len(results) == 0 && stop == nil {
			ev.Status = "done"
			l.record(ctx, ev)
			l.res.Status, l.res.Summary = StatusCompleted, ev.Text
			return nil
		}
		l.record(ctx, ev)
		if stop != nil {
			return nil
		}
		msgs = append(msgs, antMessage{Role: "assistant", Content: assistant}, antMessage{Role: "user", Content: results})
	}
}

// pruneAnt replaces the images of all but the last keepImages tool
// results with a note.
func pruneAnt(msgs []antMessage) []antMessage {
	seen := 0
	out := make([]antMessage, len(msgs))
	copy(out, msgs)
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Role != "user" {
			continue
		}
		var content []antContent
		changed := false
		for _, c := range out[i].Content {
			var tr anthropic.ToolResult
			if json.Unmarshal(c, &tr) != nil || tr.Type != "tool_result" {
				content = append(content, c)
				continue
			}
			var kept []anthropic.Content
			for _, p := range tr.Content {
				if p.Type == "image" {
					seen++
					if seen > keepImages {
						p = anthropic.Content{Type: "text", Text: "(an older screenshot, left out)"}
						changed = true
					}
				}
				kept = append(kept, p)
			}
			tr.Content = kept
			b, _ := json.Marshal(tr)
			content = append(content, b)
		}
		if changed {
			out[i] = antMessage{Role: out[i].Role, Content: content}
		}
	}
	return out
}

// ---- OpenAI Responses with the computer_use_preview tool ----

type oaiReply struct {
	ID     string            `json:"id"`
	Model  string            `json:"model"`
	Output []json.RawMessage `json:"output"`
	Usage  struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
	Status string `json:"status"`
}

func decodeOAI(b []byte) (llm.Response, error) {
	var r oaiReply
	if err := json.Unmarshal(b, &r); err != nil {
		return llm.Response{}, err
	}
	return llm.Response{Model: r.Model, FinishReason: r.Status, Usage: llm.Usage{InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens}}, nil
}

func (l *loop) openai(ctx context.Context) error {
	tools := []any{l.tools.Tool}
	if l.o.Waits != nil {
		tools = append(tools, map[string]any{"type": "function", "name": "smart_wait", "description": smartWaitDesc, "parameters": smartWaitSchema})
	}
	input := []any{map[string]any{"role": "user", "content": l.o.Task}}
	prev := ""
	for turn := 1; ; turn++ {
		if turn > l.o.MaxSteps {
			l.res.Status, l.res.Error = StatusBudget, fmt.Sprintf("the step budget of %d turns is spent", l.o.MaxSteps)
			return nil
		}
		l.res.Turns = turn
		req := map[string]any{"model": l.o.Model, "tools": tools, "input": input, "truncation": "auto",
			"reasoning": map[string]string{"summary": "concise"}}
		if prev != "" {
			req["previous_response_id"] = prev
		}
		body, _ := json.Marshal(req)
		r, err := l.o.LLM.Raw(ctx, llm.RawRequest{Path: "/responses", Body: body, Model: l.o.Model, RunID: l.o.RunID, Decode: decodeOAI})
		if err != nil {
			return err
		}
		ev := TurnEvent{Turn: turn}
		stop := l.account(&ev, r.Response)
		var reply oaiReply
		if err := json.Unmarshal(r.Body, &reply); err != nil {
			return fmt.Errorf("decode the model's reply: %w", err)
		}
		prev = reply.ID
		input = nil
		var texts []string
		for _, raw := range reply.Output {
			var it struct {
				Type      string          `json:"type"`
				CallID    string          `json:"call_id"`
				Name      string          `json:"name"`
				Arguments string          `json:"arguments"`
				Action    json.RawMessage `json:"action"`
				Actions   json.RawMessage `json:"actions"`
				Content   []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
			}
			if json.Unmarshal(raw, &it) != nil {
				continue
			}
			switch it.Type {
			case "message":
				for _, c := range it.Content {
					texts = append(texts, c.Text)
				}
			case "function_call":
				ev.Actions = append(ev.Actions, it.Name+" "+it.Arguments)
				if stop != nil {
					continue
				}
				out := "unknown function " + it.Name
				if it.Name == "smart_wait" {
					out = l.smartWait(ctx, json.RawMessage(it.Arguments))
					ev.Status = "waited"
				}
				input = append(input, map[string]any{"type": "function_call_output", "call_id": it.CallID, "output": out})
			case "computer_call":
				a := it.Action
				if a == nil {
					a = it.Actions
				}
				ev.Actions = append(ev.Actions, string(a))
				if stop != nil {
					continue
				}
				q := l.o.Query
				if l.o.AcknowledgeSafety {
					var c struct {
						Pending []struct {
							ID string `json:"id"`
						} `json:"pending_safety_checks"`
					}
					_ = json.Unmarshal(raw, &c)
					for _, p := range c.Pending {
						q.Acknowledge = append(q.Acknowledge, p.ID)
					}
				}
				res, err := l.execute(ctx, &ev, raw, q)
				if err != nil {
					return err
				}
				ev.Status, ev.ShotID, ev.SessionRun = res.Status, res.ShotID, res.SessionRun
				if res.Status == api.ComputerSafetyCheck {
					ev.Error = res.Error.Message
					l.record(ctx, ev)
					ans, ok, err := l.askUser(ctx, Ask{Reason: AskSafetyCheck, Message: checkMessages(res.PendingSafetyChecks), Pending: res.PendingSafetyChecks})
					if err != nil || !ok {
						return err
					}
					if !ans.Acknowledge {
						l.res.Status, l.res.Pending = StatusNeedsUser, res.PendingSafetyChecks
						l.res.Error = "the user answered without acknowledging the model's safety checks: " + string(res.PendingSafetyChecks)
						return nil
					}
					// The user accepted: run the same call, acknowledging.
					q.Acknowledge = append(q.Acknowledge, checkIDs(res.PendingSafetyChecks)...)
					ev = TurnEvent{Turn: turn, Actions: ev.Actions, Text: ev.Text}
					if res, err = l.execute(ctx, &ev, raw, q); err != nil {
						return err
					}
					ev.Status, ev.ShotID, ev.SessionRun = res.Status, res.ShotID, res.SessionRun
					if res.Status == api.ComputerSafetyCheck {
						return fmt.Errorf("the model's action still has safety checks after the user acknowledged %s: %s", string(res.PendingSafetyChecks), res.Error.Message)
					}
				}
				input = append(input, json.RawMessage(res.Result))
				if res.Error != nil {
					ev.Error = res.Error.Message
					input = append(input, map[string]any{"role": "user", "content": "The last computer action failed: " + res.Error.Message})
				}
			}
		}
		ev.Text = strings.Join(texts, "\n")
		if len(input) == 0 && stop == nil {
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

// ---- UI-TARS over an OpenAI-compatible chat endpoint ----

// UITARSPrompt is the computer-use prompt of UI-TARS (its model card's
// COMPUTER_USE template), with the task appended.
const UITARSPrompt = "You are a GUI agent. You are given a task and your action history, with screenshots. You need to perform the next action to complete the task.\n\n" +
	"## Output Format\n```\nThought: ...\nAction: ...\n```\n\n" +
	"## Action Space\n" +
	"click(start_box='<|box_start|>(x1,y1)<|box_end|>')\nleft_double(start_box='<|box_start|>(x1,y1)<|box_end|>')\nright_single(start_box='<|box_start|>(x1,y1)<|box_end|>')\n" +
	"drag(start_box='<|box_start|>(x1,y1)<|box_end|>', end_box='<|box_start|>(x3,y3)<|box_end|>')\nhotkey(key='')\n" +
	"type(content='') #If you want to submit your input, use \"\\n\" at the end of `content`.\n" +
	"scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', direction='down or up or right or left')\n" +
	"wait() #Sleep for 5s and take a screenshot to check for any changes.\nfinished(content='xxx') # Use escape characters \\', \\\", and \\n in content part to ensure we can parse the content in normal python string format.\n" +
	"call_user() # Submit the task and call the user when the task is unsolvable, or when you need the user's help.\n\n" +
	"## Note\n- Use English in `Thought` part.\n- Write a small plan and finally summarize your next action (with its target element) in one sentence in `Thought` part.\n\n" +
	"## User Instruction\n"

// uitarsHistory is how many screenshots stay in the conversation.
const uitarsHistory = 5

func (l *loop) uitars(ctx context.Context) error {
	shot, err := l.o.Exec.ScreenshotWith(ctx, l.o.Query.Display, api.ShotOptions{Format: "png", MaxWidth: l.tools.Image[0]})
	if err != nil {
		return fmt.Errorf("take the first screenshot: %w", err)
	}
	msgs := []llm.Message{{Role: "user", Text: UITARSPrompt + l.o.Task}, {Role: "user", Images: []llm.Image{{MIME: "image/png", Data: shot.Data}}}}
	for turn := 1; ; turn++ {
		if turn > l.o.MaxSteps {
			l.res.Status, l.res.Error = StatusBudget, fmt.Sprintf("the step budget of %d turns is spent", l.o.MaxSteps)
			return nil
		}
		l.res.Turns = turn
		r, err := l.o.LLM.Chat(ctx, llm.Request{Model: l.o.Model, Messages: pruneTARS(msgs), MaxTokens: l.o.MaxTokens, RunID: l.o.RunID})
		if err != nil {
			return err
		}
		ev := TurnEvent{Turn: turn, Text: r.Text}
		stop := l.account(&ev, r)
		if stop != nil {
			l.record(ctx, ev)
			return nil
		}
		item, _ := json.Marshal(r.Text)
		ev.Actions = []string{actionPart(r.Text)}
		res, err := l.execute(ctx, &ev, item, l.o.Query)
		if err != nil {
			return err
		}
		ev.Status, ev.ShotID, ev.SessionRun = res.Status, res.ShotID, res.SessionRun
		if res.Error != nil {
			ev.Error = res.Error.Message
		}
		l.record(ctx, ev)
		switch res.Status {
		case api.ComputerFinished:
			l.res.Status, l.res.Summary = StatusCompleted, res.Content
			return nil
		case api.ComputerCallUser:
			ans, ok, err := l.askUser(ctx, Ask{Reason: AskCallUser, Message: firstNonEmpty(res.Content, actionPart(r.Text))})
			if err != nil || !ok {
				return err
			}
			// The user has helped: tell the model what they said, with
			// the screen as it is now.
			shot, err := l.o.Exec.ScreenshotWith(ctx, l.o.Query.Display, api.ShotOptions{Format: "png", MaxWidth: l.tools.Image[0]})
			if err != nil {
				return fmt.Errorf("take a screenshot after the user's help: %w", err)
			}
			text := "The user has helped and hands the task back to you."
			if ans.Message != "" {
				text = "The user answered: " + ans.Message
			}
			msgs = append(msgs, llm.Message{Role: "assistant", Text: r.Text}, llm.Message{Role: "user", Text: text, Images: []llm.Image{{MIME: "image/png", Data: shot.Data}}})
			continue
		}
		msgs = append(msgs, llm.Message{Role: "assistant", Text: r.Text}, tarsMessage(res.Result))
	}
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
	var cs []struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(pending, &cs)
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

func checkMessages(pending json.RawMessage) string {
	var cs []struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
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

func actionPart(s string) string {
	if i := strings.LastIndex(s, "Action:"); i >= 0 {
		return strings.TrimSpace(s[i+len("Action:"):])
	}
	return strings.TrimSpace(s)
}

// tarsMessage turns the result item (an OpenAI-compatible user message)
// into an llm message.
func tarsMessage(raw json.RawMessage) llm.Message {
	var m struct {
		Content []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			ImageURL struct {
				URL string `json:"url"`
			} `json:"image_url"`
		} `json:"content"`
	}
	_ = json.Unmarshal(raw, &m)
	out := llm.Message{Role: "user"}
	var texts []string
	for _, c := range m.Content {
		if c.Type == "text" {
			texts = append(texts, c.Text)
			continue
		}
		if _, data, ok := strings.Cut(c.ImageURL.URL, ";base64,"); ok {
			if b, err := base64.StdEncoding.DecodeString(data); err == nil {
				out.Images = append(out.Images, llm.Image{Data: b})
			}
		}
	}
	out.Text = strings.Join(texts, "\n")
	return out
}

// pruneTARS keeps the images of the last uitarsHistory messages that
// have one.
func pruneTARS(msgs []llm.Message) []llm.Message {
	out := make([]llm.Message, len(msgs))
	copy(out, msgs)
	seen := 0
	for i := len(out) - 1; i >= 0; i-- {
		if len(out[i].Images) == 0 {
			continue
		}
		if seen++; seen > uitarsHistory {
			out[i].Images = nil
			if out[i].Text == "" {
				out[i].Text = "(an older screenshot, left out)"
			}
		}
	}
	return out
}
