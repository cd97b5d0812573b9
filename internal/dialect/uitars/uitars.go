// Package uitars is the dialect of UI-TARS (and other models that answer
// in its action strings, as click(start_box='(x1,y1)') or
// hotkey(key='ctrl c')): it parses a model output as the reference parser
// (@ui-tars/action-parser) does, with the coordinate conventions of the
// model versions (absolute pixels, 0..1000, Qwen2.5-VL smart resize), and
// translates the actions into a dialect.Plan of acu actions. UI-TARS has
// no result item: what goes back to the model is the next screenshot, as
// an OpenAI-compatible user message (Message). It runs nothing itself.
package uitars

import (
	"encoding/base64"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/dialect"
)

// DefaultLimit is the largest picture sent to the model.
var DefaultLimit = dialect.Size{W: 1280, H: 800}

// Tool translates UI-TARS outputs for one display.
type Tool struct {
	Screen, Image dialect.Size
	// Mode is the coordinate convention (Relative, Absolute, Smart).
	Mode string
	// Format and Quality of the screenshots (default png).
	Format  string
	Quality int
	// ScrollClicks is the wheel clicks of one scroll (default 5).
	ScrollClicks int
	// WaitFor is how long wait() waits at most (default 5 s, as the
	// reference desktop app sleeps); acu ends it once the screen is still.
	WaitFor time.Duration
}

// New returns the tool for a screen of size screen, sent within limit
// (zero: DefaultLimit), reading coordinates in mode.
func New(screen, limit dialect.Size, mode string) Tool {
	if limit.W == 0 {
		limit = DefaultLimit
	}
	if mode == "" {
		mode = Relative
	}
	return Tool{Screen: screen, Image: dialect.Fit(screen, limit), Mode: mode, Format: "png"}
}

// CheckMode reports whether mode is a coordinate convention.
func CheckMode(mode string) error {
	switch mode {
	case Relative, Absolute, Smart:
		return nil
	}
	return fmt.Errorf("coordinate mode %q: use relative (0..1000), absolute (pixels) or smart (Qwen2.5-VL smart resize)", mode)
}

// Parse parses a model output in t's coordinate convention.
func (t Tool) Parse(text string) []Parsed {
	return Parse(text, Options{Mode: t.Mode, W: t.Image.W, H: t.Image.H})
}

// Plan translates a model output into acu actions. finished and
// call_user end the plan with their status; actions after them are not
// run.
func (t Tool) Plan(text string) (dialect.Plan, []Parsed, error) {
	parsed := t.Parse(text)
	plan := dialect.Plan{Shot: dialect.ShotOptions(t.Image, t.format(), t.Quality)}
	var acts []api.Action
loop:
	for i, p := range parsed {
		field := fmt.Sprintf("actions[%d]", i)
		if p.Type == "" {
			return dialect.Plan{}, parsed, dialect.Invalid(field, "action %d does not parse: write one call as click(start_box='(x1,y1)'), type(content='…') or finished(content='…')", i+1)
		}
		switch p.Type {
		case "finished":
			plan.Status, plan.Content = dialect.StatusFinished, unescape(p.Inputs["content"])
		case "call_user":
			plan.Status, plan.Content = dialect.StatusCallUser, unescape(p.Inputs["content"])
		case "wait":
			d := t.WaitFor
			if d <= 0 {
				d = 5 * time.Second
			}
			if i == len(parsed)-1 {
				plan.Wait = d
			} else {
				acts = append(acts, api.Action{Kind: api.ActWait, Ms: int(d.Milliseconds())})
			}
			continue
		default:
			a, err := t.action(p, field)
			if err != nil {
				return dialect.Plan{}, parsed, err
			}
			acts = append(acts, a...)
			continue
		}
		break loop
	}
	if len(acts) > 0 {
		plan.Act = &api.ActRequest{Actions: acts, Settle: &api.SettleOptions{}}
	}
	if plan.Status != "" && plan.Act == nil {
		plan.Shot = nil
	}
	return plan, parsed, nil
}

// action translates one parsed action.
func (t Tool) action(p Parsed, field string) ([]api.Action, error) {
	k, ok := kinds[p.Type]
	if !ok {
		return nil, dialect.Invalid(field, "action %q is not one acu runs: use click, left_double, right_single, drag, hotkey, type, scroll, wait, finished or call_user", p.Type)
	}
	return k(t, call{Parsed: p, field: field})
}

// call is one parsed action being translated, with its field's name for
// errors.
type call struct {
	Parsed
	field string
}

// kinds translate the actions acu runs, as UI-TARS' desktop operator runs
// them (finished, call_user and wait are the plan's, not actions).
var kinds = map[string]func(Tool, call) ([]api.Action, error){
	"click":         pointer(api.Action{Kind: api.ActClick}),
	"left_single":   pointer(api.Action{Kind: api.ActClick}),
	"left_double":   pointer(api.Action{Kind: api.ActClick, Count: 2}),
	"right_single":  pointer(api.Action{Kind: api.ActClick, Button: "right"}),
	"middle_single": pointer(api.Action{Kind: api.ActClick, Button: "middle"}),
	"hover":         pointer(api.Action{Kind: api.ActMove}),
	"mouse_move":    pointer(api.Action{Kind: api.ActMove}),
	"drag":          Tool.drag,
	"select":        Tool.drag,
	"hotkey":        Tool.hotkey,
	"press":         Tool.hotkey,
	"keydown":       Tool.hotkey,
	"keyup":         Tool.hotkey,
	"type":          Tool.typeText,
	"scroll":        Tool.scroll,
}

// at is the point of a box (key: start_coords or end_coords) in the
// picture; nil when it is absent and not required.
func (t Tool) at(c call, key string, required bool) (*api.Point, error) {
	box := strings.Replace(key, "coords", "box", 1)
	v, ok := c.Coords[key]
	if !ok {
		if required {
			return nil, dialect.Invalid(c.field, "%s needs %s", c.Type, box)
		}
		return nil, nil
	}
	if len(v) != 2 || math.IsNaN(v[0]) || math.IsNaN(v[1]) {
		return nil, dialect.Invalid(c.field, "%s: %s is not a point: give (x,y)", c.Type, box)
	}
	x, y := int(math.Floor(v[0])), int(math.Floor(v[1]))
	if x < 0 || y < 0 || x >= t.Image.W || y >= t.Image.H {
		return nil, dialect.Invalid(c.field, "%s: (%v,%v) is outside the %s screenshot", c.Type, v[0], v[1], t.Image)
	}
	return dialect.ImagePoint(x, y, t.Image), nil
}

// pointer is action a at the start box.
func pointer(a api.Action) func(Tool, call) ([]api.Action, error) {
	return func(t Tool, c call) ([]api.Action, error) {
		p, err := t.at(c, "start_coords", true)
		if err != nil {
			return nil, err
		}
		a.At = p
		return []api.Action{a}, nil
	}
}

func (t Tool) drag(c call) ([]api.Action, error) {
	from, err := t.at(c, "start_coords", true)
	if err != nil {
		return nil, err
	}
	to, err := t.at(c, "end_coords", true)
	if err != nil {
		return nil, err
	}
	return []api.Action{{Kind: api.ActDrag, Path: []api.Point{*from, *to}}}, nil
}

func (Tool) hotkey(c call) ([]api.Action, error) {
	k := c.Inputs["key"]
	if k == "" {
		k = c.Inputs["hotkey"]
	}
	keys, err := Keys(k)
	if err != nil {
		return nil, dialect.Invalid(c.field, "%s: %v", c.Type, err)
	}
	return []api.Action{{Kind: api.ActKey, Keys: keys}}, nil
}

// typeText types the content; a trailing newline is a press of Return.
func (Tool) typeText(c call) ([]api.Action, error) {
	text := unescape(c.Inputs["content"])
	enter := strings.HasSuffix(text, "\n")
	text = strings.TrimSuffix(text, "\n")
	var out []api.Action
	if text != "" {
		out = append(out, api.Action{Kind: api.ActType, Text: text})
	}
	if enter {
		out = append(out, api.Action{Kind: api.ActKey, Keys: "Return"})
	}
	if len(out) == 0 {
		return nil, dialect.Invalid(c.field, "type needs content")
	}
	return out, nil
}

// scroll turns ScrollClicks wheel clicks (default 5) towards direction,
// at the start box or where the pointer is.
func (t Tool) scroll(c call) ([]api.Action, error) {
	p, err := t.at(c, "start_coords", false)
	if err != nil {
		return nil, err
	}
	n := t.ScrollClicks
	if n <= 0 {
		n = 5
	}
	a := api.Action{Kind: api.ActScroll, At: p}
	switch strings.ToLower(c.Inputs["direction"]) {
	case "up":
		a.DY = -n
	case "down":
		a.DY = n
	case "left":
		a.DX = -n
	case "right":
		a.DX = n
	default:
		return nil, dialect.Invalid(c.field, "scroll direction %q: use up, down, left or right", c.Inputs["direction"])
	}
	return []api.Action{a}, nil
}

// unescape turns the escapes the model writes inside quotes (\n, \', \")
// into the characters.
func unescape(s string) string {
	return strings.NewReplacer(`\n`, "\n", `\'`, "'", `\"`, `"`, `\\`, `\`).Replace(s)
}

// keyNames maps UI-TARS key names to X keysym names.
var keyNames = map[string]string{
	"enter": "Return", "return": "Return", "esc": "Escape", "escape": "Escape", "space": "space", "tab": "Tab",
	"backspace": "BackSpace", "delete": "Delete", "del": "Delete", "home": "Home", "end": "End", "insert": "Insert",
	"pageup": "Prior", "pagedown": "Next", "page_up": "Prior", "page_down": "Next",
	"up": "Up", "down": "Down", "left": "Left", "right": "Right",
	"arrowup": "Up", "arrowdown": "Down", "arrowleft": "Left", "arrowright": "Right",
	"ctrl": "ctrl", "control": "ctrl", "shift": "shift", "alt": "alt", "meta": "super", "cmd": "super", "command": "super", "win": "super", "super": "super",
}

// Keys turns a hotkey's keys (space-separated, pressed together: "ctrl
// c", "enter") into acu's chord syntax ("ctrl+c", "Return").
func Keys(k string) (string, error) {
	fields := strings.Fields(k)
	if len(fields) == 0 {
		return "", fmt.Errorf("no key given: write hotkey(key='ctrl c')")
	}
	for i, f := range fields {
		if n, ok := keyNames[strings.ToLower(f)]; ok {
			fields[i] = n
		} else if len(f) == 1 {
			fields[i] = strings.ToLower(f)
		}
	}
	return strings.Join(fields, "+"), nil
}

func (t Tool) format() string {
	if t.Format == "" {
		return "png"
	}
	return t.Format
}

// Message is an OpenAI-compatible chat message: what goes back to the
// model after its actions.
type Message struct {
	Role    string `json:"role"`
	Content []Part `json:"content"`
}

// Part is a text or image_url part of a message.
type Part struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *ImageURL `json:"image_url,omitempty"`
}

// ImageURL is an image as a data URL.
type ImageURL struct {
	URL string `json:"url"`
}

// Result is the user message to hand back after outcome o: the
// screenshot, and what failed when something did.
func (t Tool) Result(p dialect.Plan, o dialect.Outcome) Message {
	m := Message{Role: "user", Content: []Part{}}
	if o.Err != nil {
		m.Content = append(m.Content, Part{Type: "text", Text: "The last action failed: " + o.Err.Error()})
	}
	if o.Waited != nil {
		m.Content = append(m.Content, Part{Type: "text", Text: dialect.WaitText(p, *o.Waited)})
	}
	if o.Shot != nil {
		m.Content = append(m.Content, Part{Type: "image_url", ImageURL: &ImageURL{
			URL: "data:image/" + o.Shot.Format + ";base64," + base64.StdEncoding.EncodeToString(o.Shot.Data)}})
	}
	return m
}
