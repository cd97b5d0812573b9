// Package openai is the dialect of OpenAI's computer use (the Responses
// API's computer_call items, of the computer_use_preview tool and of the
// computer tool that batches actions): it translates a computer_call into
// a dialect.Plan of acu actions and the outcome into the
// computer_call_output item to hand back, with the screenshot, scaling
// coordinates between the picture offered to the model and the screen.
// pending_safety_checks are never acknowledged here: the caller does.
package openai

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/dialect"
)

// DefaultLimit is the largest picture offered to the model.
var DefaultLimit = dialect.Size{W: 1280, H: 800}

// Tool translates computer calls for one display.
type Tool struct {
	// Screen is the display's size; Image the size it is offered at.
	Screen, Image dialect.Size
	// Format and Quality of the screenshots (default png).
	Format  string
	Quality int
	// Environment is declared in the tool (default linux).
	Environment string
}

// New returns the tool for a screen of size screen, offered within limit
// (zero: DefaultLimit).
func New(screen, limit dialect.Size) Tool {
	if limit.W == 0 {
		limit = DefaultLimit
	}
	return Tool{Screen: screen, Image: dialect.Fit(screen, limit), Format: "png", Environment: "linux"}
}

// Definition is the computer_use_preview tool's declaration.
type Definition struct {
	Type          string `json:"type"`
	DisplayWidth  int    `json:"display_width"`
	DisplayHeight int    `json:"display_height"`
	Environment   string `json:"environment"`
}

// Definition returns the declaration of t.
func (t Tool) Definition() Definition {
	env := t.Environment
	if env == "" {
		env = "linux"
	}
	return Definition{Type: "computer_use_preview", DisplayWidth: t.Image.W, DisplayHeight: t.Image.H, Environment: env}
}

// SafetyCheck is a pending safety check of a computer_call.
type SafetyCheck struct {
	ID      string `json:"id"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// Call is a computer_call output item. Action is one action (the preview
// tool); Actions a batch (the computer tool), run in order.
type Call struct {
	Type                string        `json:"type"`
	ID                  string        `json:"id,omitempty"`
	CallID              string        `json:"call_id"`
	Action              *Action       `json:"action,omitempty"`
	Actions             []Action      `json:"actions,omitempty"`
	PendingSafetyChecks []SafetyCheck `json:"pending_safety_checks"`
	Status              string        `json:"status,omitempty"`
}

// Action is one computer action.
type Action struct {
	Type    string   `json:"type"`
	Button  string   `json:"button,omitempty"`
	X       *float64 `json:"x,omitempty"`
	Y       *float64 `json:"y,omitempty"`
	Path    []XY     `json:"path,omitempty"`
	Keys    []string `json:"keys,omitempty"`
	ScrollX *float64 `json:"scroll_x,omitempty"`
	ScrollY *float64 `json:"scroll_y,omitempty"`
	Text    *string  `json:"text,omitempty"`
	Ms      *float64 `json:"ms,omitempty"`
}

// XY is a point of a drag path.
type XY struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// Decode reads a computer_call item.
func Decode(data []byte) (Call, error) {
	var c Call
	if err := json.Unmarshal(data, &c); err != nil {
		return c, dialect.Invalid("", "the computer_call item is not JSON: %v", err)
	}
	if c.Type != "computer_call" {
		return c, dialect.Invalid("type", "type is %q: send a computer_call item", c.Type)
	}
	if c.CallID == "" {
		return c, dialect.Invalid("call_id", "call_id is missing")
	}
	if c.Action == nil && len(c.Actions) == 0 {
		return c, dialect.Invalid("action", "the computer_call has no action")
	}
	return c, nil
}

// ScrollPixelsPerClick is how many pixels of scroll_x/scroll_y make one
// wheel click (browsers scroll about 100 pixels a click).
const ScrollPixelsPerClick = 100

// DefaultWaitMs is the wait of a wait action without ms: OpenAI's sample
// executors sleep 2 s; acu ends it early when the screen is still.
const DefaultWaitMs = 2000

// Plan translates a computer_call's actions into acu actions. Safety
// checks are the caller's: Plan does not look at them.
func (t Tool) Plan(c Call) (dialect.Plan, error) {
	list := c.Actions
	if c.Action != nil {
		list = append([]Action{*c.Action}, list...)
	}
	var acts []api.Action
	plan := dialect.Plan{Shot: dialect.ShotOptions(t.Image, t.format(), t.Quality)}
	for i, a := range list {
		field := "action"
		if len(list) > 1 {
			field = fmt.Sprintf("actions[%d]", i)
		}
		aa, wait, err := t.action(a, field)
		if err != nil {
			return dialect.Plan{}, err
		}
		if wait > 0 {
			if i != len(list)-1 {
				// a wait in the middle of a batch is a plain pause
				acts = append(acts, api.Action{Kind: api.ActWait, Ms: wait})
				continue
			}
			plan.Wait = msDur(wait)
			continue
		}
		acts = append(acts, aa...)
	}
	if len(acts) > 0 {
		plan.Act = &api.ActRequest{Actions: acts, Settle: &api.SettleOptions{}}
	}
	return plan, nil
}

// action translates one action of a call; wait is the ms of a wait
// action (no acu actions).
func (t Tool) action(a Action, field string) (acts []api.Action, wait int, err error) {
	k, ok := kinds[a.Type]
	if !ok {
		return nil, 0, dialect.Invalid(field+".type", "%s.type %q: use click, double_click, drag, keypress, move, screenshot, scroll, type or wait", field, a.Type)
	}
	for _, f := range []struct {
		code, name string
		set        bool
	}{{"b", "button", a.Button != ""}, {"x", "x", a.X != nil || a.Y != nil}, {"p", "path", a.Path != nil},
		{"s", "scroll_x", a.ScrollX != nil || a.ScrollY != nil}, {"t", "text", a.Text != nil}, {"m", "ms", a.Ms != nil}} {
		if f.set && !strings.Contains(k.fields, f.code) {
			return nil, 0, dialect.Invalid(field+"."+f.name, "%s: %s does not take %s", field, a.Type, f.name)
		}
	}
	c := call{Action: a, field: field}
	if a.Keys != nil && a.Type != "keypress" {
		if c.mods, err = modsOf(a.Keys, field+".keys"); err != nil {
			return nil, 0, err
		}
	}
	if strings.Contains(k.fields, "x") {
		if c.at, err = t.point(a.X, a.Y, field); err != nil {
			return nil, 0, err
		}
	}
	return k.plan(t, c)
}

// call is one action being translated: its field's name in errors, the
// modifier keys held through it and its position (for actions at x, y).
type call struct {
	Action
	field string
	mods  string
	at    *api.Point
}

// kind is one computer action type: the fields it takes (b button, x x
// and y, p path, k keys, s scroll_x and scroll_y, t text, m ms) and its
// translation, as OpenAI's sample executors run it.
type kind struct {
	fields string
	plan   func(Tool, call) ([]api.Action, int, error)
}

var kinds = map[string]kind{
	"click":        {"bxyk", Tool.click},
	"double_click": {"xyk", Tool.doubleClick},
	"drag":         {"pk", Tool.drag},
	"keypress":     {"k", Tool.keypress},
	"move":         {"xyk", Tool.move},
	"screenshot":   {"", func(Tool, call) ([]api.Action, int, error) { return nil, 0, nil }},
	"scroll":       {"xysk", Tool.scroll},
	"type":         {"t", Tool.typeText},
	"wait":         {"m", Tool.wait},
}

func (Tool) doubleClick(c call) ([]api.Action, int, error) {
	return one(api.Action{Kind: api.ActClick, At: c.at, Count: 2, Mods: c.mods})
}

func (Tool) move(c call) ([]api.Action, int, error) {
	return one(api.Action{Kind: api.ActMove, At: c.at, Mods: c.mods})
}

func one(a api.Action) ([]api.Action, int, error) { return []api.Action{a}, 0, nil }

// buttons are the click buttons: the side buttons back and forward are X
// buttons 8 and 9, as the Responses API means them (an app listening for
// them sees them, a browser goes back or forward), not a key chord.
var buttons = map[string]string{"": "", "left": "", "right": "right", "wheel": "middle", "back": "back", "forward": "forward"}

func (Tool) click(c call) ([]api.Action, int, error) {
	b, ok := buttons[c.Button]
	if !ok {
		return nil, 0, dialect.Invalid(c.field+".button", "%s.button %q: use left, right, wheel, back or forward", c.field, c.Button)
	}
	return one(api.Action{Kind: api.ActClick, At: c.at, Button: b, Mods: c.mods})
}

func (t Tool) drag(c call) ([]api.Action, int, error) {
	if len(c.Path) < 2 {
		return nil, 0, dialect.Invalid(c.field+".path", "%s: drag needs a path of at least 2 points", c.field)
	}
	path := make([]api.Point, 0, len(c.Path))
	for i, q := range c.Path {
		x, y := q.X, q.Y
		p, err := t.point(&x, &y, fmt.Sprintf("%s.path[%d]", c.field, i))
		if err != nil {
			return nil, 0, err
		}
		path = append(path, *p)
	}
	return one(api.Action{Kind: api.ActDrag, Path: path, Mods: c.mods})
}

func (Tool) keypress(c call) ([]api.Action, int, error) {
	keys, err := Keys(c.Keys)
	if err != nil {
		return nil, 0, dialect.Invalid(c.field+".keys", "%s.keys: %v", c.field, err)
	}
	return one(api.Action{Kind: api.ActKey, Keys: keys})
}

// scroll turns scroll_x and scroll_y pixels into wheel clicks at x, y; a
// scroll by nothing only moves there.
func (Tool) scroll(c call) ([]api.Action, int, error) {
	sx, sy := 0.0, 0.0
	if c.ScrollX != nil {
		sx = *c.ScrollX
	}
	if c.ScrollY != nil {
		sy = *c.ScrollY
	}
	dx, dy := clicks(sx), clicks(sy)
	if abs(dx) > 100 || abs(dy) > 100 {
		return nil, 0, dialect.Invalid(c.field+".scroll_y", "%s: scroll by %v,%v pixels is more than 100 wheel clicks", c.field, sx, sy)
	}
	if dx == 0 && dy == 0 {
		return one(api.Action{Kind: api.ActMove, At: c.at, Mods: c.mods})
	}
	return one(api.Action{Kind: api.ActScroll, At: c.at, DX: dx, DY: dy, Mods: c.mods})
}

func (Tool) typeText(c call) ([]api.Action, int, error) {
	if c.Text == nil || *c.Text == "" {
		return nil, 0, dialect.Invalid(c.field+".text", "%s: type needs text", c.field)
	}
	return one(api.Action{Kind: api.ActType, Text: *c.Text})
}

func (Tool) wait(c call) ([]api.Action, int, error) {
	if c.Ms == nil {
		return nil, DefaultWaitMs, nil
	}
	if *c.Ms <= 0 || *c.Ms > 60000 || math.IsNaN(*c.Ms) {
		return nil, 0, dialect.Invalid(c.field+".ms", "%s.ms %v: wait 1 to 60000 ms", c.field, *c.Ms)
	}
	return nil, int(*c.Ms), nil
}

// clicks turns scroll pixels into wheel clicks, at least one for any
// scroll.
func clicks(px float64) int {
	if px == 0 || math.IsNaN(px) {
		return 0
	}
	n := int(math.Round(px / ScrollPixelsPerClick))
	if n == 0 {
		if px > 0 {
			return 1
		}
		return -1
	}
	return n
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func msDur(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }

func (t Tool) format() string {
	if t.Format == "" {
		return "png"
	}
	return t.Format
}

func (t Tool) point(x, y *float64, field string) (*api.Point, error) {
	if x == nil || y == nil {
		return nil, dialect.Invalid(field+".x", "%s: give x and y in pixels of the %s screenshot", field, t.Image)
	}
	if *x != math.Trunc(*x) || *y != math.Trunc(*y) {
		return nil, dialect.Invalid(field+".x", "%s: x,y = %v,%v: give whole pixels", field, *x, *y)
	}
	if *x < 0 || *y < 0 || *x >= float64(t.Image.W) || *y >= float64(t.Image.H) {
		return nil, dialect.Invalid(field+".x", "%s: x,y = %v,%v is outside the %s screen", field, *x, *y, t.Image)
	}
	return dialect.ImagePoint(int(*x), int(*y), t.Image), nil
}

// keyNames maps the key names OpenAI's models send (upper case, browser
// style) to X keysym names.
var keyNames = map[string]string{
	"ENTER": "Return", "RETURN": "Return", "SPACE": "space", "TAB": "Tab", "ESC": "Escape", "ESCAPE": "Escape",
	"BACKSPACE": "BackSpace", "DELETE": "Delete", "DEL": "Delete", "INSERT": "Insert", "HOME": "Home", "END": "End",
	"PAGEUP": "Prior", "PAGE_UP": "Prior", "PAGEDOWN": "Next", "PAGE_DOWN": "Next",
	"UP": "Up", "DOWN": "Down", "LEFT": "Left", "RIGHT": "Right",
	"ARROWUP": "Up", "ARROWDOWN": "Down", "ARROWLEFT": "Left", "ARROWRIGHT": "Right",
	"CAPSLOCK": "Caps_Lock", "PRINTSCREEN": "Print", "MENU": "Menu",
	"/": "slash", "\\": "backslash", "-": "minus", "=": "equal", ",": "comma", ".": "period", ";": "semicolon",
	"'": "apostrophe", "`": "grave", "[": "bracketleft", "]": "bracketright", "+": "plus",
}

var modNames = map[string]string{
	"CTRL": "ctrl", "CONTROL": "ctrl", "SHIFT": "shift", "ALT": "alt", "OPTION": "alt",
	"META": "super", "SUPER": "super", "CMD": "super", "COMMAND": "super", "WIN": "super",
}

// Keys turns a keypress's keys (pressed together, modifiers first, as
// ["CTRL", "L"]) into acu's chord syntax ("ctrl+l"). Several non-modifier
// keys are one chord too ("ctrl+a+b"): held down together, pressed in order
// and released in reverse, as OpenAI's sample executor presses them.
func Keys(keys []string) (string, error) {
	if len(keys) == 0 {
		return "", fmt.Errorf("no keys: give the keys to press together, as [\"CTRL\", \"L\"]")
	}
	var mods, rest []string
	for _, k := range keys {
		u := strings.ToUpper(strings.TrimSpace(k))
		if u == "" {
			return "", fmt.Errorf("an empty key in %q", keys)
		}
		if m, ok := modNames[u]; ok {
			mods = append(mods, m)
			continue
		}
		if n, ok := keyNames[u]; ok {
			rest = append(rest, n)
			continue
		}
		if len(k) == 1 {
			rest = append(rest, strings.ToLower(k))
			continue
		}
		if len(u) >= 2 && u[0] == 'F' && strings.Trim(u[1:], "0123456789") == "" {
			rest = append(rest, u)
			continue
		}
		rest = append(rest, k) // an X keysym name, checked by the action service
	}
	if len(rest) == 0 { // modifiers alone: tap the last one
		rest, mods = mods[len(mods)-1:], mods[:len(mods)-1]
	}
	prefix := ""
	for _, m := range mods {
		prefix += m + "+"
	}
	return prefix + strings.Join(rest, "+"), nil
}

func modsOf(keys []string, field string) (string, error) {
	var out []string
	for _, k := range keys {
		m, ok := modNames[strings.ToUpper(strings.TrimSpace(k))]
		if !ok {
			return "", dialect.Invalid(field, "%s: %q is not a modifier key (CTRL, SHIFT, ALT, META)", field, k)
		}
		out = append(out, m)
	}
	return strings.Join(out, "+"), nil
}

// Output is a computer_call_output item.
type Output struct {
	Type                     string        `json:"type"`
	CallID                   string        `json:"call_id"`
	Output                   Screenshot    `json:"output"`
	AcknowledgedSafetyChecks []SafetyCheck `json:"acknowledged_safety_checks,omitempty"`
}

// Screenshot is a computer_screenshot output.
type Screenshot struct {
	Type     string `json:"type"`
	ImageURL string `json:"image_url"`
}

// Result is the computer_call_output of outcome o for call c, carrying
// the safety checks the caller acknowledged. The Responses API has no
// error output: a failure still returns the screenshot, and the caller
// tells the model what failed (ErrorText) in a message.
func (t Tool) Result(c Call, o dialect.Outcome, acknowledged []SafetyCheck) Output {
	out := Output{Type: "computer_call_output", CallID: c.CallID, AcknowledgedSafetyChecks: acknowledged}
	out.Output.Type = "computer_screenshot"
	if o.Shot != nil {
		out.Output.ImageURL = "data:image/" + o.Shot.Format + ";base64," + base64.StdEncoding.EncodeToString(o.Shot.Data)
	}
	return out
}

// Unacknowledged returns the pending safety checks of c that the caller
// did not acknowledge (by id).
func Unacknowledged(c Call, ackIDs []string) []SafetyCheck {
	var out []SafetyCheck
	for _, s := range c.PendingSafetyChecks {
		ok := false
		for _, id := range ackIDs {
			ok = ok || id == s.ID
		}
		if !ok {
			out = append(out, s)
		}
	}
	return out
}
