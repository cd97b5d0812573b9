package orchestrator

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/llm"
)

// Window sizes of the seed.
const (
	ConversationWindow = 12 // messages kept after the pinned task message
	ActionHistory      = 5  // last actions the progress checker and loop detection see
	LoopRepeat         = 3  // the same element this often in the last ActionHistory actions is a loop
	FailureContextShow = 3  // last failures appended to the enhanced task
)

const fastSystem = `You are the fast agent of a desktop automation system on a Linux X11 desktop.
You see the screen as an ELEMENT MAP: one element a line, "[id] type "text" (centre x,y width x height) flags".
You act only on element ids from the current map. Each iteration, reply with one JSON object only:
{"thought":"what you see and what you do next",
 "steps":[{"action":"click","target":"btn_ok"},
          {"action":"type","target":"txt_1","text":"text to put in the field"},
          {"action":"key","target":"optional element id to focus","keys":"Return"},
          {"action":"double_click","target":"itm_report_txt"}, {"action":"right_click","target":"txt_1"},
          {"action":"scroll","target":"optional element id to scroll in","direction":"down","amount":5},
          {"action":"drag","target":"element to drag","to":"element to drop it on"},
          {"action":"launch","app":"Mousepad"},
          {"action":"wait_for","condition":"the export has finished","timeout":120}],
 "complete":false,
 "summary":"when complete: what was done"}
Rules:
- 1 to 3 steps per reply; the map is read again after them.
- "type" replaces the whole content of an editable element.
- "key" takes X key names and chords: Return, Escape, Tab, ctrl+a, alt+Left, Page_Down.
- "scroll" turns the mouse wheel over the element (up, down, left, right; 1-20 clicks, default 5): use it to
  reach elements listed as not showing.
- "launch" starts an installed application by its name. "wait_for" waits until a condition you describe is true
  on the screen (up to "timeout" seconds): use it for anything slow instead of replying again and again.
- Set "complete": true with no steps only when the screen shows the task is done.
- Never repeat an action that did not change anything: try something else.`

// fastReply is the fast agent's answer.
type fastReply struct {
	Thought  string     `json:"thought"`
	Steps    []fastStep `json:"steps"`
	Complete bool       `json:"complete"`
	Summary  string     `json:"summary"`
}

type fastStep struct {
	Action string `json:"action"`
	Target string `json:"target,omitempty"`
	Text   string `json:"text,omitempty"`
	Keys   string `json:"keys,omitempty"`
	// scroll and drag
	Direction string `json:"direction,omitempty"`
	Amount    int    `json:"amount,omitempty"`
	To        string `json:"to,omitempty"`
	// launch and wait_for
	App       string  `json:"app,omitempty"`
	Condition string  `json:"condition,omitempty"`
	Timeout   float64 `json:"timeout,omitempty"` // seconds
}

// The steps that act on the desktop rather than on an element.
const (
	stepLaunch  = "launch"
	stepWaitFor = "wait_for"
)

// desktopStep reports whether s is a launch or wait_for step, and which.
func (s fastStep) desktopStep() (string, bool) {
	switch strings.ToLower(strings.TrimSpace(s.Action)) {
	case "launch", "open_app", "start_app":
		return stepLaunch, true
	case "wait_for", "wait", "wait_until":
		return stepWaitFor, true
	}
	return "", false
}

// fastStepWire is a step as models write it: acu's "target" or
// agentrelay's "element" (seed 003) for the element id, and agentrelay's
// {"action":"complete"} step for acu's "complete": true.
type fastStepWire struct {
	fastStep
	Element string `json:"element"`
	Summary string `json:"summary"`
	Reason  string `json:"reason"`
}

// actionComplete is agentrelay's step that claims the task is done.
const actionComplete = "complete"

// step is s as the element map carries it out. Recheck is on: the map
// the model chose from is as old as its thinking, and a control that moved
// meanwhile is clicked where it is now, or the step is stale.
func (s fastStep) step() (elements.Step, error) {
	st := elements.Step{Target: s.Target, Recheck: true}
	switch strings.ToLower(s.Action) {
	case "click", "tap", "press", "activate":
		st.Kind = elements.StepClick
	case "type", "input", "fill", "set_text":
		st.Kind = elements.StepType
		st.Text = s.Text
	case "key", "keys", "press_key", "hotkey":
		st.Kind = elements.StepKey
		st.Text = s.Keys
		if st.Text == "" {
			st.Text = s.Text
		}
		if st.Text == "" {
			return st, fmt.Errorf("key step without keys")
		}
	case "double_click", "doubleclick", "dblclick":
		st.Kind = elements.StepDoubleClick
	case "right_click", "rightclick", "context_click":
		st.Kind = elements.StepRightClick
	case "scroll":
		st.Kind = elements.StepScroll
		st.Text = strings.ToLower(firstNonEmpty(s.Direction, s.Text))
		st.Amount = s.Amount
	case "drag", "drag_and_drop":
		st.Kind = elements.StepDrag
		st.To = s.To
	default:
		return st, fmt.Errorf("unknown action %q: use click, type, key, double_click, right_click, scroll or drag", s.Action)
	}
	if st.Kind != elements.StepKey && st.Kind != elements.StepScroll && st.Target == "" {
		return st, fmt.Errorf("%s step without a target element id", st.Kind)
	}
	if st.Kind == elements.StepDrag && st.To == "" {
		return st, fmt.Errorf("drag step without \"to\", the element to drop on")
	}
	return st, nil
}

// parseFast reads the fast agent's reply, in acu's form or agentrelay's.
// A {"action":"complete"} step sets Complete (its summary or reason
// becomes the reply's summary when the reply has none) and is not a step.
func parseFast(text string) (fastReply, error) {
	var r fastReply
	raw, err := llm.ExtractJSON(text)
	if err != nil {
		return r, fmt.Errorf("read the fast agent's reply: %w", err)
	}
	var w struct {
		Thought  string         `json:"thought"`
		Steps    []fastStepWire `json:"steps"`
		Complete bool           `json:"complete"`
		Summary  string         `json:"summary"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return r, fmt.Errorf("read the fast agent's reply: %w", err)
	}
	r = fastReply{Thought: w.Thought, Complete: w.Complete, Summary: w.Summary}
	for _, st := range w.Steps {
		if strings.EqualFold(strings.TrimSpace(st.Action), actionComplete) {
			r.Complete = true
			r.Summary = firstNonEmpty(r.Summary, st.Summary, st.Text, st.Reason)
			continue
		}
		s := st.fastStep
		if s.Target == "" {
			s.Target = st.Element
		}
		r.Steps = append(r.Steps, s)
	}
	return r, nil
}

// fastPrompt is the fast agent's system prompt of one iteration: the rules,
// the enhanced task, the element map and its diff.
func fastPrompt(b *strings.Builder, i int, enhancedTask string, m *elements.Map, diff string, device *DeviceContext) string {
	b.Reset()
	b.WriteString(fastSystem)
	b.WriteString("\n\nTASK:\n")
	b.WriteString(enhancedTask)
	if device != nil {
		b.WriteString("\n\nDEVICE:\n")
		device.write(b, m)
	}
	fmt.Fprintf(b, "\n\nELEMENT MAP (iteration %d):\n", i)
	b.WriteString(m.Text())
	if diff != "" {
		b.WriteString("\nCHANGES SINCE THE LAST ITERATION:\n")
		b.WriteString(diff)
	}
	return b.String()
}

// Action is one executed step, for loop detection, the progress checker and
// the failure context.
type Action struct {
	Iteration int    `json:"iteration"`
	Step      string `json:"step"`
	Kind      string `json:"kind"`
	Target    string `json:"target,omitempty"`
	OK        bool   `json:"ok"`
	Via       string `json:"via,omitempty"`
	Error     string `json:"error,omitempty"`
	// Stale: the step was not carried out because its element moved off
	// or vanished since the map was read (elements.ErrStale).
	Stale bool `json:"stale,omitempty"`
}

// fail records err as the action's failure.
func (a *Action) fail(err error) {
	a.Error = err.Error()
	a.Stale = errors.Is(err, elements.ErrStale)
}

func (a Action) String() string {
	if a.OK {
		return fmt.Sprintf("iter %d: %s (ok, %s)", a.Iteration, a.Step, a.Via)
	}
	return fmt.Sprintf("iter %d: %s (FAILED: %s)", a.Iteration, a.Step, a.Error)
}

// lastActions returns up to n most recent actions.
func lastActions(h []Action, n int) []Action {
	if len(h) > n {
		return h[len(h)-n:]
	}
	return h
}

// sameElementLoop finds an element acted on LoopRepeat or more times in the
// last ActionHistory actions; "" when there is none.
func sameElementLoop(h []Action) (target string, n int) {
	recent := lastActions(h, ActionHistory)
	for i, a := range recent {
		if a.Target == "" {
			continue
		}
		c := 0
		for _, b := range recent[i:] {
			if b.Target == a.Target && b.Kind == a.Kind {
				c++
			}
		}
		if c >= LoopRepeat && c > n {
			target, n = a.Target, c
		}
	}
	return target, n
}

// actionHistoryContext is the seed's buildActionHistoryContext: the recent
// actions, and when one element is being acted on in a loop, diagnostic
// suggestions.
func actionHistoryContext(h []Action, m *elements.Map) string {
	target, n := sameElementLoop(h)
	if target == "" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ACTION LOOP DETECTED: you acted on %s %d times in your last %d actions and the task is not done.\n", target, n, ActionHistory)
	b.WriteString("Recent actions:\n")
	for _, a := range lastActions(h, ActionHistory) {
		fmt.Fprintf(&b, "- %s\n", a)
	}
	b.WriteString("Diagnose before acting on it again:\n")
	if el, ok := m.Get(target); ok {
		switch {
		case !el.Enabled && el.Source&elements.FromTree != 0:
			fmt.Fprintf(&b, "- %s is disabled: something else must happen first (fill a required field, select an item).\n", target)
		case el.Editable:
			fmt.Fprintf(&b, "- %s is an input: its value is %q; if it is right, confirm with a button or the Return key instead.\n", target, el.Value)
		default:
			fmt.Fprintf(&b, "- %s may not do what you expect: look at CHANGES SINCE THE LAST ITERATION for what it did.\n", target)
		}
	} else {
		fmt.Fprintf(&b, "- %s is no longer in the map: pick an element from the current map.\n", target)
	}
	b.WriteString("- Is a dialog, menu or popup in the way? Dismiss it (key Escape) or finish it first.\n")
	b.WriteString("- Use a different element, a keyboard shortcut, or another approach.")
	return b.String()
}

const checkSystem = `You check the progress of a desktop automation agent on a Linux X11 desktop.
Given the task, the current screen (element map) and the agent's last actions, decide whether the
agent is making meaningful progress toward the task. Repeating the same action without effect,
or working in the wrong application, is not progress.
Reply with one JSON object only: {"progressing":true or false,"reason":"one sentence"}`

func checkPrompt(i int, task string, m *elements.Map, h []Action) string {
	var b strings.Builder
	fmt.Fprintf(&b, "TASK: %s\n\nLast actions:\n", task)
	for _, a := range lastActions(h, ActionHistory) {
		fmt.Fprintf(&b, "- %s\n", a)
	}
	if len(h) == 0 {
		b.WriteString("- none\n")
	}
	fmt.Fprintf(&b, "\nCurrent element map (iteration %d):\n%s", i, m.Text())
	return b.String()
}

type checkReply struct {
	Progressing bool   `json:"progressing"`
	Reason      string `json:"reason"`
}

const verifySystem = `You verify whether a desktop task on a Linux X11 desktop is really done.
The agent claims it is complete. Judge only from the current screen (element map and screenshot if any).
If the agent did something other than the task (a wrong item, a different window, another value instead of the asked one),
say so in the reason with the word "wrong".
Reply with one JSON object only: {"done":true or false,"reason":"one sentence"}`

func verifyPrompt(i int, task, summary string, m *elements.Map, h []Action) string {
	var b strings.Builder
	fmt.Fprintf(&b, "TASK: %s\n\nThe agent says: %s\n\nIts last actions:\n", task, summary)
	for _, a := range lastActions(h, ActionHistory) {
		fmt.Fprintf(&b, "- %s\n", a)
	}
	fmt.Fprintf(&b, "\nCurrent element map (iteration %d):\n%s", i, m.Text())
	return b.String()
}

type verifyReply struct {
	Done   bool   `json:"done"`
	Reason string `json:"reason"`
}

// wrongTask reports whether a verifier's reason says the agent did a
// different task than asked (the seed's keywords).
func wrongTask(reason string) bool {
	r := strings.ToLower(reason)
	return strings.Contains(r, "wrong") || strings.Contains(r, "different") || strings.Contains(r, "instead of")
}

// window returns the fast agent's messages: the pinned message, then the
// last ConversationWindow messages of history, then cur, with consecutive
// messages of one role joined (providers want them alternating).
func window(pinned string, history []llm.Message, cur string) []llm.Message {
	if len(history) > ConversationWindow {
		history = history[len(history)-ConversationWindow:]
	}
	out := make([]llm.Message, 0, len(history)+2)
	add := func(m llm.Message) {
		if n := len(out); n > 0 && out[n-1].Role == m.Role {
			out[n-1].Text += "\n\n" + m.Text
			return
		}
		out = append(out, m)
	}
	add(llm.Message{Role: "user", Text: pinned})
	for _, m := range history {
		add(m)
	}
	add(llm.Message{Role: "user", Text: cur})
	return out
}

// DeviceContext is the device context of the fast agent's prompt (seed 003):
// the screen, the focused application, the locale, and the installed
// applications with their descriptions, for launch steps.
type DeviceContext struct {
	Language, TimeZone string
	Apps               []App
	apps               string // the apps' lines, made once
}

// maxDeviceApps caps the applications listed to the fast agent (the
// planner gets up to maxApps).
const maxDeviceApps = 60

// NewDeviceContext returns the device context of a host: its locale from getenv
// (LC_ALL, LC_MESSAGES, LANG), its time zone, and apps.
func NewDeviceContext(getenv func(string) string, apps []App) *DeviceContext {
	d := &DeviceContext{Language: firstNonEmpty(getenv("LC_ALL"), getenv("LC_MESSAGES"), getenv("LANG"), "unknown"), TimeZone: time.Local.String(), Apps: apps}
	var b strings.Builder
	for k, a := range apps {
		if k == maxDeviceApps {
			fmt.Fprintf(&b, "(and %d more)\n", len(apps)-k)
			break
		}
		b.WriteString(a.line())
		b.WriteByte('\n')
	}
	d.apps = b.String()
	return d
}

func (d *DeviceContext) write(b *strings.Builder, m *elements.Map) {
	fmt.Fprintf(b, "Screen %dx%d. ", m.Screen.Dx(), m.Screen.Dy())
	for _, e := range m.Elements {
		if e.Type == elements.TypeWindow && e.Active {
			fmt.Fprintf(b, "Focused window: %q", e.Text)
			if e.App != "" {
				fmt.Fprintf(b, " of %s", e.App)
			}
			b.WriteString(". ")
			break
		}
	}
	fmt.Fprintf(b, "Language %s, time zone %s.\n", d.Language, d.TimeZone)
	if d.apps != "" {
		b.WriteString("Installed applications (launch takes the name):\n")
		b.WriteString(d.apps)
	}
}
