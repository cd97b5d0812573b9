// Package anthropic is the dialect of Anthropic's computer tool
// (computer_20241022, computer_20250124 and computer_20251124, whose zoom
// it serves): it translates a tool_use block of the Messages API into a
// dialect.Plan of acu actions and the outcome into the tool_result block
// to hand back, scaling coordinates between the picture offered to the
// model (display_width_px x display_height_px) and the screen. It runs
// nothing itself.
package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/dialect"
)

// Tool versions.
const (
	Version20241022 = "computer_20241022"
	Version20250124 = "computer_20250124"
	Version20251124 = "computer_20251124"
)

// ToolName is the name the computer tool is declared under.
const ToolName = "computer"

// DefaultLimit is the largest picture offered to the model: Anthropic
// recommends WXGA (1280x800) or XGA (1024x768) and scales larger images
// down on its side, which would cost the coordinates their exactness.
var DefaultLimit = dialect.Size{W: 1280, H: 800}

// Tool translates computer tool calls for one display.
type Tool struct {
	// Screen is the display's size in pixels; Image the size the screen
	// is offered at (dialect.Fit(Screen, DefaultLimit) unless set).
	Screen, Image dialect.Size
	// Version is the declared tool version (default Version20250124).
	Version string
	// Format and Quality of the screenshots (default png).
	Format  string
	Quality int
	// WaitQuiet ends a model's wait once the screen was still this long
	// (default dialect.DefaultWaitQuiet).
	WaitQuiet time.Duration
}

// New returns the tool for a screen of size screen, offered within limit
// (zero: DefaultLimit).
func New(screen, limit dialect.Size) Tool {
	if limit.W == 0 {
		limit = DefaultLimit
	}
	return Tool{Screen: screen, Image: dialect.Fit(screen, limit), Version: Version20250124, Format: "png"}
}

// Definition is the tool's declaration in a Messages API request.
type Definition struct {
	Type            string `json:"type"`
	Name            string `json:"name"`
	DisplayWidthPx  int    `json:"display_width_px"`
	DisplayHeightPx int    `json:"display_height_px"`
	DisplayNumber   *int   `json:"display_number,omitempty"`
	EnableZoom      bool   `json:"enable_zoom,omitempty"`
}

// Definition returns the declaration of t.
func (t Tool) Definition() Definition {
	v := t.version()
	return Definition{Type: v, Name: ToolName, DisplayWidthPx: t.Image.W, DisplayHeightPx: t.Image.H, EnableZoom: v == Version20251124}
}

// BetaHeader is the anthropic-beta header value the tool version needs.
func (t Tool) BetaHeader() string {
	switch t.version() {
	case Version20241022:
		return "computer-use-2024-10-22"
	case Version20251124:
		return "computer-use-2025-11-24"
	}
	return "computer-use-2025-01-24"
}

func (t Tool) version() string {
	if t.Version == "" {
		return Version20250124
	}
	return t.Version
}

// ToolUse is a tool_use content block as the Messages API sends it.
type ToolUse struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// Input is the computer tool's input.
type Input struct {
	Action          string    `json:"action"`
	Coordinate      []float64 `json:"coordinate,omitempty"`
	StartCoordinate []float64 `json:"start_coordinate,omitempty"`
	Text            *string   `json:"text,omitempty"`
	ScrollDirection string    `json:"scroll_direction,omitempty"`
	ScrollAmount    *float64  `json:"scroll_amount,omitempty"`
	Duration        *float64  `json:"duration,omitempty"`
	Region          []float64 `json:"region,omitempty"`
}

// Actions lists the actions of the tool versions.
var Actions = map[string][]string{
	Version20241022: {"key", "type", "mouse_move", "left_click", "left_click_drag", "right_click", "middle_click", "double_click", "screenshot", "cursor_position"},
	Version20250124: {"key", "hold_key", "type", "cursor_position", "mouse_move", "left_mouse_down", "left_mouse_up", "left_click", "left_click_drag",
		"right_click", "middle_click", "double_click", "triple_click", "scroll", "wait", "screenshot"},
	Version20251124: {"key", "hold_key", "type", "cursor_position", "mouse_move", "left_mouse_down", "left_mouse_up", "left_click", "left_click_drag",
		"right_click", "middle_click", "double_click", "triple_click", "scroll", "wait", "screenshot", "zoom"},
}

// Limits of the actions acu accepts.
const (
	MaxHold   = 10 * time.Second // hold_key duration (acu's key hold limit)
	MaxWait   = 100 * time.Second
	MaxScroll = 100
)

// Decode reads a tool_use block (or its input alone).
func Decode(data []byte) (ToolUse, Input, error) {
	var tu ToolUse
	if err := json.Unmarshal(data, &tu); err != nil {
		return tu, Input{}, dialect.Invalid("", "the tool_use block is not JSON: %v", err)
	}
	raw := tu.Input
	if tu.Type == "" && len(tu.Input) == 0 {
		raw = data // the input alone
	} else if tu.Type != "tool_use" {
		return tu, Input{}, dialect.Invalid("type", "type is %q: send the tool_use block of the computer tool", tu.Type)
	}
	var in Input
	if err := json.Unmarshal(raw, &in); err != nil {
		return tu, in, dialect.Invalid("input", "the computer tool's input does not parse: %v", err)
	}
	return tu, in, nil
}

// Plan translates one computer tool input into acu actions.
func (t Tool) Plan(in Input) (dialect.Plan, error) {
	v := t.version()
	if in.Action == "" {
		return dialect.Plan{}, dialect.Invalid("action", "action is missing: use one of %s", strings.Join(Actions[v], ", "))
	}
	k, ok := kinds[in.Action]
	if !ok || !slices.Contains(Actions[v], in.Action) {
		return dialect.Plan{}, dialect.Invalid("action", "action %q is not one of %s's: %s", in.Action, v, strings.Join(Actions[v], ", "))
	}
	for _, f := range []struct {
		code, name string
		set        bool
	}{{"c", "coordinate", in.Coordinate != nil}, {"s", "start_coordinate", in.StartCoordinate != nil},
		{"t", "text", in.Text != nil}, {"d", "scroll_direction", in.ScrollDirection != "" || in.ScrollAmount != nil},
		{"u", "duration", in.Duration != nil}, {"r", "region", in.Region != nil}} {
		if f.set && !strings.Contains(k.fields, f.code) {
			return dialect.Plan{}, dialect.Invalid(f.name, "%s does not take %s", in.Action, f.name)
		}
	}
	return k.plan(t, in)
}

// kind is one action of the computer tool: the input fields it takes (c
// coordinate, s start_coordinate, t text, d scroll_direction and
// scroll_amount, u duration, r region) and its translation, as the
// vendor's reference implementation (computer-use-demo's computer.py)
// runs it with xdotool.
type kind struct {
	fields string
	plan   func(Tool, Input) (dialect.Plan, error)
}

var kinds = map[string]kind{
	"screenshot":      {"", func(t Tool, _ Input) (dialect.Plan, error) { return dialect.Plan{Shot: t.shot()}, nil }},
	"cursor_position": {"", func(Tool, Input) (dialect.Plan, error) { return dialect.Plan{Pointer: true}, nil }},
	"key":             {"t", Tool.key},
	"hold_key":        {"tu", Tool.holdKey},
	"type":            {"t", Tool.typeText},
	"mouse_move":      {"c", Tool.move},
	"left_mouse_down": {"c", button(api.ActMouseDown)},
	"left_mouse_up":   {"c", button(api.ActMouseUp)},
	"left_click":      {"ct", click("", 1)},
	"right_click":     {"ct", click("right", 1)},
	"middle_click":    {"ct", click("middle", 1)},
	"double_click":    {"ct", click("", 2)},
	"triple_click":    {"ct", click("", 3)},
	"left_click_drag": {"sc", Tool.drag},
	"scroll":          {"ctd", Tool.scroll},
	"wait":            {"u", Tool.wait},
	"zoom":            {"r", func(t Tool, in Input) (dialect.Plan, error) { return t.zoom(in.Region) }},
}

func (t Tool) shot() *api.ShotOptions { return dialect.ShotOptions(t.Image, t.format(), t.Quality) }

// act is a plan that runs a, settles, and takes a screenshot.
func (t Tool) act(a ...api.Action) dialect.Plan {
	return dialect.Plan{Act: &api.ActRequest{Actions: a, Settle: &api.SettleOptions{}}, Shot: t.shot()}
}

func text(in Input) string {
	if in.Text == nil {
		return ""
	}
	return *in.Text
}

// key presses a key or a combination (xdotool key syntax: ctrl+l, Return;
// several, space-separated, one after another).
func (t Tool) key(in Input) (dialect.Plan, error) {
	if strings.TrimSpace(text(in)) == "" {
		return dialect.Plan{}, dialect.Invalid("text", "key needs text: the key or combination, as ctrl+l or Return")
	}
	return t.act(api.Action{Kind: api.ActKey, Keys: text(in)}), nil
}

// holdKey holds a key down for duration seconds.
func (t Tool) holdKey(in Input) (dialect.Plan, error) {
	if strings.TrimSpace(text(in)) == "" {
		return dialect.Plan{}, dialect.Invalid("text", "hold_key needs text: the key to hold, as shift")
	}
	d, err := seconds(in.Duration, "duration", MaxHold)
	if err != nil {
		return dialect.Plan{}, err
	}
	return t.act(api.Action{Kind: api.ActKey, Keys: text(in), HoldMs: int(d.Milliseconds())}), nil
}

func (t Tool) typeText(in Input) (dialect.Plan, error) {
	if text(in) == "" {
		return dialect.Plan{}, dialect.Invalid("text", "type needs text")
	}
	return t.act(api.Action{Kind: api.ActType, Text: text(in)}), nil
}

func (t Tool) move(in Input) (dialect.Plan, error) {
	p, err := t.point(in.Coordinate, "coordinate", true)
	if err != nil {
		return dialect.Plan{}, err
	}
	return t.act(api.Action{Kind: api.ActMove, At: p}), nil
}

// button presses or releases the left button, where the pointer is or at
// the coordinate.
func button(k string) func(Tool, Input) (dialect.Plan, error) {
	return func(t Tool, in Input) (dialect.Plan, error) {
		p, err := t.point(in.Coordinate, "coordinate", false)
		if err != nil {
			return dialect.Plan{}, err
		}
		return t.act(api.Action{Kind: k, At: p}), nil
	}
}

// click clicks button count times, holding the modifier keys of text.
func click(b string, count int) func(Tool, Input) (dialect.Plan, error) {
	return func(t Tool, in Input) (dialect.Plan, error) {
		p, err := t.point(in.Coordinate, "coordinate", false)
		if err != nil {
			return dialect.Plan{}, err
		}
		a := api.Action{Kind: api.ActClick, At: p, Mods: mods(text(in)), Button: b}
		if count > 1 {
			a.Count = count
		}
		return t.act(a), nil
	}
}

func (t Tool) drag(in Input) (dialect.Plan, error) {
	from, err := t.point(in.StartCoordinate, "start_coordinate", true)
	if err != nil {
		return dialect.Plan{}, err
	}
	to, err := t.point(in.Coordinate, "coordinate", true)
	if err != nil {
		return dialect.Plan{}, err
	}
	return t.act(api.Action{Kind: api.ActDrag, Path: []api.Point{*from, *to}}), nil
}

// scroll turns scroll_amount wheel clicks towards scroll_direction,
// holding the modifier keys of text.
func (t Tool) scroll(in Input) (dialect.Plan, error) {
	p, err := t.point(in.Coordinate, "coordinate", false)
	if err != nil {
		return dialect.Plan{}, err
	}
	if in.ScrollAmount == nil {
		return dialect.Plan{}, dialect.Invalid("scroll_amount", "scroll needs scroll_amount: wheel clicks, 1 to %d", MaxScroll)
	}
	n := *in.ScrollAmount
	if n != math.Trunc(n) || n < 0 || n > MaxScroll {
		return dialect.Plan{}, dialect.Invalid("scroll_amount", "scroll_amount %v: give whole wheel clicks, 0 to %d", n, MaxScroll)
	}
	a := api.Action{Kind: api.ActScroll, At: p, Mods: mods(text(in))}
	switch in.ScrollDirection {
	case "up":
		a.DY = -int(n)
	case "down":
		a.DY = int(n)
	case "left":
		a.DX = -int(n)
	case "right":
		a.DX = int(n)
	default:
		return dialect.Plan{}, dialect.Invalid("scroll_direction", "scroll_direction %q: use up, down, left or right", in.ScrollDirection)
	}
	if n == 0 {
		return dialect.Plan{Shot: t.shot()}, nil
	}
	return t.act(a), nil
}

// wait waits duration seconds at most, ending once the screen is still.
func (t Tool) wait(in Input) (dialect.Plan, error) {
	d, err := seconds(in.Duration, "duration", MaxWait)
	if err != nil {
		return dialect.Plan{}, err
	}
	return dialect.Plan{Wait: d, WaitQuiet: t.WaitQuiet, Shot: t.shot()}, nil
}

// mods turns the text of a click or scroll (modifier keys to hold, as
// "shift" or "ctrl+shift") into acu's mods.
func mods(text string) string { return strings.TrimSpace(text) }

func seconds(v *float64, field string, limit time.Duration) (time.Duration, error) {
	if v == nil {
		return 0, dialect.Invalid(field, "%s is missing: give seconds, up to %v", field, limit.Seconds())
	}
	if *v <= 0 || math.IsNaN(*v) || *v > limit.Seconds() {
		return 0, dialect.Invalid(field, "%s %v: give seconds above 0, up to %v", field, *v, limit.Seconds())
	}
	return time.Duration(*v * float64(time.Second)), nil
}

func (t Tool) format() string {
	if t.Format == "" {
		return "png"
	}
	return t.Format
}

// point maps a coordinate of the offered picture to an acu position;
// without one (when optional), nil: where the pointer is.
func (t Tool) point(c []float64, field string, required bool) (*api.Point, error) {
	if c == nil {
		if required {
			return nil, dialect.Invalid(field, "%s is missing: give [x, y] in pixels of the %s screenshot", field, t.Image)
		}
		return nil, nil
	}
	if len(c) != 2 {
		return nil, dialect.Invalid(field, "%s has %d numbers: give [x, y]", field, len(c))
	}
	x, y := c[0], c[1]
	if x != math.Trunc(x) || y != math.Trunc(y) {
		return nil, dialect.Invalid(field, "%s [%v, %v]: give whole pixels", field, x, y)
	}
	if x < 0 || y < 0 || x >= float64(t.Image.W) || y >= float64(t.Image.H) {
		return nil, dialect.Invalid(field, "%s [%v, %v] is outside the %s screen: x must be 0..%d and y 0..%d", field, x, y, t.Image, t.Image.W-1, t.Image.H-1)
	}
	return dialect.ImagePoint(int(x), int(y), t.Image), nil
}

// zoom returns a screenshot of region [x1, y1, x2, y2] (pixels of the
// offered picture) at the screen's full resolution, no wider than the
// offered picture.
func (t Tool) zoom(r []float64) (dialect.Plan, error) {
	if len(r) != 4 {
		return dialect.Plan{}, dialect.Invalid("region", "zoom needs region [x1, y1, x2, y2], in pixels of the %s screenshot", t.Image)
	}
	for _, v := range r {
		if v != math.Trunc(v) || v < 0 {
			return dialect.Plan{}, dialect.Invalid("region", "region %v: give whole pixels of the %s screenshot", r, t.Image)
		}
	}
	x1, y1, x2, y2 := int(r[0]), int(r[1]), int(r[2]), int(r[3])
	if x2 <= x1 || y2 <= y1 || x2 > t.Image.W || y2 > t.Image.H {
		return dialect.Plan{}, dialect.Invalid("region", "region %v: give x1 < x2 <= %d and y1 < y2 <= %d", r, t.Image.W, t.Image.H)
	}
	// The crop target is in 0..1000 of the screen: round outwards so the
	// region is all inside it.
	n := func(v, size int, up bool) int {
		f := float64(v) * 1000 / float64(size)
		if up {
			return min(1000, int(math.Ceil(f)))
		}
		return int(math.Floor(f))
	}
	crop := fmt.Sprintf("crop:%d,%d,%d,%d", n(x1, t.Image.W, false), n(y1, t.Image.H, false), n(x2, t.Image.W, true), n(y2, t.Image.H, true))
	return dialect.Plan{Shot: &api.ShotOptions{Format: t.format(), Quality: t.Quality, Region: crop, MaxWidth: t.Image.W}}, nil
}

// ToolResult is a tool_result content block of the Messages API.
type ToolResult struct {
	Type      string    `json:"type"`
	ToolUseID string    `json:"tool_use_id"`
	Content   []Content `json:"content"`
	IsError   bool      `json:"is_error,omitempty"`
}

// Content is a text or image block inside a tool_result.
type Content struct {
	Type   string       `json:"type"`
	Text   string       `json:"text,omitempty"`
	Source *ImageSource `json:"source,omitempty"`
}

// ImageSource is a base64 image.
type ImageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

// ErrorResult is the tool_result of a call acu could not run: is_error,
// with a text the model can act on.
func ErrorResult(id string, err error) ToolResult {
	return ToolResult{Type: "tool_result", ToolUseID: id, IsError: true, Content: []Content{{Type: "text", Text: errorText(err)}}}
}

func errorText(err error) string {
	var ie *dialect.InvalidError
	var se *api.StatusError
	switch {
	case errors.As(err, &ie):
		return "Invalid computer action: " + ie.Message
	case errors.As(err, &se) && se.Code == api.CodeUserActive:
		return "The user is using the mouse or keyboard right now, so acu did not act: wait, then take a screenshot and try again."
	case errors.As(err, &se):
		return fmt.Sprintf("The action was refused (%s): %s", se.Code, se.Message)
	}
	return "The action failed: " + err.Error()
}

// Result is the tool_result of outcome o for tool call id.
func (t Tool) Result(id string, p dialect.Plan, o dialect.Outcome) ToolResult {
	if o.Err != nil {
		return ErrorResult(id, o.Err)
	}
	res := ToolResult{Type: "tool_result", ToolUseID: id, Content: []Content{}}
	if p.Pointer {
		x, y := dialect.FromScreen(o.Pointer[0], o.Pointer[1], t.Image, t.Screen)
		res.Content = append(res.Content, Content{Type: "text", Text: fmt.Sprintf("X=%d,Y=%d", x, y)})
	}
	if o.Waited != nil {
		res.Content = append(res.Content, Content{Type: "text", Text: dialect.WaitText(p, *o.Waited)})
	}
	if o.Shot != nil {
		res.Content = append(res.Content, Content{Type: "image", Source: &ImageSource{Type: "base64", MediaType: "image/" + o.Shot.Format,
			Data: base64.StdEncoding.EncodeToString(o.Shot.Data)}})
	}
	return res
}
