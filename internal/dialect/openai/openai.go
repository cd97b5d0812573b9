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

func (t Tool) action(a Action, field string) ([]api.Action, int, error) {
	uses := map[string]string{"click": "bxyk", "double_click": "xyk", "drag": "pk", "keypress": "k", "move": "xyk",
		"screenshot": "", "scroll": "xysk", "type": "t", "wait": "m"}
	u, ok := uses[a.Type]
	if !ok {
		return nil, 0, dialect.Invalid(field+".type", "%s.type %q: use click, double_click, drag, keypress, move, screenshot, scroll, type or wait", field, a.Type)
	}
	for _, f := range []struct {
		code, name string
		set        bool
	}{{"b", "button", a.Button != ""}, {"x", "x", a.X != nil || a.Y != nil}, {"p", "path", a.Path != nil},
		{"s", "scroll_x", a.ScrollX != nil || a.ScrollY != nil}, {"t", "text", a.Text != nil}, {"m", "ms", a.Ms != nil}} {
		if f.set && !strings.Contains(u, f.code) {
			return nil, 0, dialect.Invalid(field+"."+f.name, "%s: %s does not take %s", field, a.Type, f.name)
		}
	}
	var mods string
	if a.Keys != nil && a.Type != "keypress" {
		var err error
		if mods, err = modsOf(a.Keys, field+".keys"); err != nil {
			return nil, 0, err
		}
	}
	switch a.Type {
	case "screenshot":
		return nil, 0, nil
	case "wait":
		ms := DefaultWaitMs
		if a.Ms != nil {
			if *a.Ms <= 0 || *a.Ms > 60000 || math.IsNaN(*a.Ms) {
				return nil, 0, dialect.Invalid(field+".ms", "%s.ms %v: wait 1 to 60000 ms", field, *a.Ms)
			}
			ms = int(*a.Ms)
		}
		return nil, ms, nil
	case "type":
		if a.Text == nil || *a.Text == "" {
			return nil, 0, dialect.Invalid(field+".text", "%s: type needs text", field)
		}
		return []api.Action{{Kind: api.ActType, Text: *a.Text}}, 0, nil
	case "keypress":
		keys, err := Keys(a.Keys)
		if err != nil {
			return nil, 0, dialect.Invalid(field+".keys", "%s.keys: %v", field, err)
		}
		return []api.Action{{Kind: api.ActKey, Keys: keys}}, 0, nil
	case "drag":
		if len(a.Path) < 2 {
			return nil, 0, dialect.Invalid(field+".path", "%s: drag needs a path of at least 2 points", field)
		}
		path := make([]api.Point, 0, len(a.Path))
		for i, q := range a.Path {
			x, y := q.X, q.Y
			p, err := t.point(&x, &y, fmt.Sprintf("%s.path[%d]", field, i))
			if err != nil {
				return nil, 0, err
			}
			path = append(path, *p)
		}
		return []api.Action{{Kind: api.ActDrag, Path: path, Mods: mods}}, 0, nil
	}
	p, err := t.point(a.X, a.Y, field)
	if err != nil {
		return nil, 0, err
	}
	switch a.Type {
	case "move":
		return []api.Action{{Kind: api.ActMove, At: p, Mods: mods}}, 0, nil
	case "double_click":
		return []api.Action{{Kind: api.ActClick, At: p, Count: 2, Mods: mods}}, 0, nil
	case "scroll":
		sx, sy := 0.0, 0.0
		if a.ScrollX != nil {
			sx = *a.ScrollX
		}
		if a.ScrollY != nil {
			sy = *a.ScrollY
		}
		dx, dy := clicks(sx), clicks(sy)
		if abs(dx) > 100 || abs(dy) > 100 {
			return nil, 0, dialect.Invalid(field+".scroll_y", "%s: scroll by %v,%v pixels is more than 100 wheel clicks", field, sx, sy)
		}
		if dx == 0 && dy == 0 {
			return []api.Action{{Kind: api.ActMove, At: p, Mods: mods}}, 0, nil
		}
		return []api.Action{{Kind: api.ActScroll, At: p, DX: dx, DY: dy, Mods: mods}}, 0, nil
	}
	// click
	switch a.Button {
	case "", "left":
		return []api.Action{{Kind: api.ActClick, At: p, Mods: mods}}, 0, nil
	case "right":
		return []api.Action{{Kind: api.ActClick, At: p, Button: "right", Mods: mods}}, 0, nil
	case "wheel":
		return []api.Action{{Kind: api.ActClick, At: p, Button: "middle", Mods: mods}}, 0, nil
	case "back", "forward":
		// The mouse's side buttons, X buttons 8 and 9, as the Responses
		// API means them: an app listening for them sees them (a browser
		// goes back or forward), not a key chord.
		return []api.Action{{Kind: api.ActClick, At: p, Button: a.Button, Mods: mods}}, 0, nil
	}
	return nil, 0, dialect.Invalid(field+".button", "%s.button %q: use left, right, wheel, back or forward", field, a.Button)
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
// keys are pressed one after another with the modifiers held each time.
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
	out := make([]string, len(rest))
	for i, r := range rest {
		out[i] = prefix + r
	}
	return strings.Join(out, " "), nil
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
