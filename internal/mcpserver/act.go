package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/api"
)

// ActBackend is what the acting tools need (*api.Client): POST /v1/actions,
// GET /v1/elements and screenshots with options.
type ActBackend interface {
	Act(ctx context.Context, req api.ActRequest) (api.ActResponse, error)
	Elements(ctx context.Context, q api.ElementsQuery) (api.ElementMap, error)
	ScreenshotWith(ctx context.Context, display string, o api.ShotOptions) (api.Shot, error)
}

// Tool annotations: what a client may assume about a tool (MCP's hints).
var (
	readOnly    = &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	destructive = &mcp.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(false)}
	additive    = &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}
)

func ptr[T any](v T) *T { return &v }

// AddActTools registers act, the single-purpose acting tools and
// desktop_state.
func AddActTools(s *mcp.Server, b ActBackend) {
	a := &actTools{b: b}
	addTool(s, &mcp.Tool{Name: "act", Description: actDesc, Annotations: destructive}, a.act)
	addTool(s, &mcp.Tool{Name: "click", Description: clickDesc, Annotations: destructive}, a.click)
	addTool(s, &mcp.Tool{Name: "type_text", Description: typeDesc, Annotations: destructive}, a.typeText)
	addTool(s, &mcp.Tool{Name: "press_key", Description: keyDesc, Annotations: destructive}, a.pressKey)
	addTool(s, &mcp.Tool{Name: "scroll", Description: scrollDesc, Annotations: destructive}, a.scroll)
	addTool(s, &mcp.Tool{Name: "drag", Description: dragDesc, Annotations: destructive}, a.drag)
	addTool(s, &mcp.Tool{Name: "move_pointer", Description: moveDesc, Annotations: destructive}, a.move)
	addTool(s, &mcp.Tool{Name: "desktop_state", Description: stateDesc, Annotations: readOnly}, a.state)
}

type actTools struct{ b ActBackend }

const positionHelp = `Positions: "element" (an id from desktop_state, e.g. btn_ok: the surest), or x,y in 0..1000 of the screen (or of "window"), or pixels of a screenshot acu returned: x,y with "shot" (its id).`

const actDesc = `Act on the desktop: a list of actions run in order on one display, stopping at the first failure, with a result per action. Kinds: move, click (button left|right|middle|back|forward, count 1-3), mouse_down, mouse_up, drag (path of points, hold_ms), scroll (dx, dy wheel clicks at a point), type (text), key (keys like "ctrl+l", "alt+Tab", "Return"; hold_ms, repeat), wait (ms).
Points are {"element":"btn_ok"}, {"x":500,"y":500} (0..1000 of the screen, or of "window"), or {"x":412,"y":233,"shot":"<id>"} (pixels of a screenshot acu returned).
After the actions: settle waits until the screen stops changing (no blind sleeps), screenshot returns a picture, diff returns what changed in the element map. Refused when the user is using the mouse or keyboard (user_active: retry later), in denied windows, or on displays acting is off for.`

const clickDesc = `Click at a position. ` + positionHelp + ` button left (default), right or middle; count 2 for a double click. Waits for the screen to settle afterwards; screenshot=true returns the result.`

const typeDesc = `Type text (any Unicode the keyboard map can reach). With an element or x,y, focuses it first (an editable element gets the text directly). Waits for the screen to settle afterwards.`

const keyDesc = `Press a key or a combination: "Return", "ctrl+l", "alt+Tab", "ctrl+shift+t" (xdotool key names). hold_ms holds it; repeat presses it again. With an element or x,y, focuses it first.`

const scrollDesc = `Scroll by wheel clicks at a position (default: where the pointer is): dy > 0 down, dy < 0 up, dx > 0 right. ` + positionHelp

const dragDesc = `Drag from one position to another (or along a path of points) with a button held. ` + positionHelp

const moveDesc = `Move the pointer to a position, without clicking (hover menus, tooltips). ` + positionHelp

const stateDesc = `What is on the desktop now: every visible element (buttons, fields, text) with its id, type, text and place, from the accessibility tree and OCR. Act on ids with click, type_text or act. labels=true adds a screenshot with each id drawn on it.`

// PointArgs is a position in a single-purpose tool.
type PointArgs struct {
	Element string `json:"element,omitempty" jsonschema:"an element id from desktop_state, e.g. btn_ok"`
	X       *int   `json:"x,omitempty" jsonschema:"x in 0..1000 of the screen or window, or a pixel of the screenshot named by shot"`
	Y       *int   `json:"y,omitempty" jsonschema:"y, like x"`
	Window  string `json:"window,omitempty" jsonschema:"x,y are 0..1000 of this window (title substring or window:0x...)"`
	Shot    string `json:"shot,omitempty" jsonschema:"x,y are pixels of this screenshot (its id)"`
}

func (p PointArgs) point() (*api.Point, error) {
	if p.Element == "" && p.X == nil && p.Y == nil {
		return nil, nil
	}
	if p.Element == "" && (p.X == nil || p.Y == nil) {
		return nil, errors.New("give both x and y, or an element id")
	}
	return &api.Point{Element: p.Element, X: p.X, Y: p.Y, Window: p.Window, Shot: p.Shot}, nil
}

// AfterArgs says what a single-purpose tool returns after acting.
type AfterArgs struct {
	Display    string `json:"display,omitempty" jsonschema:"X display such as :99 (default: the daemon's)"`
	NoSettle   bool   `json:"no_settle,omitempty" jsonschema:"return at once instead of waiting for the screen to settle"`
	Screenshot bool   `json:"screenshot,omitempty" jsonschema:"return a screenshot (jpeg, 960 wide) after acting"`
	Diff       bool   `json:"diff,omitempty" jsonschema:"return what changed in the element map"`
}

func (a AfterArgs) request(actions ...api.Action) api.ActRequest {
	r := api.ActRequest{Display: a.Display, Actions: actions, Diff: a.Diff}
	if !a.NoSettle {
		r.Settle = &api.SettleOptions{QuietMs: 300, TimeoutMs: 5000}
	}
	if a.Screenshot {
		r.Screenshot = &api.ShotOptions{Format: "jpeg"}
	}
	return r
}

// ActArgs are act's arguments: POST /v1/actions' body.
type ActArgs struct {
	Host       string             `json:"host,omitempty" jsonschema:"in a fleet of daemons sharing one database: the host (ACU_HOST_ID) whose display to act on; its daemon acts and the answer comes back (default: this daemon's)"`
	Display    string             `json:"display,omitempty" jsonschema:"X display such as :99 (default: the daemon's)"`
	Window     string             `json:"window,omitempty" jsonschema:"x,y points without a frame of their own are 0..1000 of this window"`
	Shot       string             `json:"shot,omitempty" jsonschema:"x,y points without a frame of their own are pixels of this screenshot (its id)"`
	Actions    []api.Action       `json:"actions" jsonschema:"the actions, run in order"`
	Settle     *api.SettleOptions `json:"settle,omitempty" jsonschema:"wait afterwards until the target is unchanged for quiet_ms (default 100), at most timeout_ms (default 5000)"`
	Screenshot *api.ShotOptions   `json:"screenshot,omitempty" jsonschema:"return a screenshot afterwards: format jpeg|png, max_width, scale, region, quality, labels"`
	Diff       bool               `json:"diff,omitempty" jsonschema:"return the element-map diff from before to after"`
}

// ClickArgs are click's arguments.
type ClickArgs struct {
	PointArgs
	Button string `json:"button,omitempty" jsonschema:"left (default), right or middle"`
	Count  int    `json:"count,omitempty" jsonschema:"1 (default), 2 for a double click, 3 for a triple click"`
	AfterArgs
}

// TypeArgs are type_text's arguments.
type TypeArgs struct {
	Text string `json:"text" jsonschema:"the text to type"`
	PointArgs
	AfterArgs
}

// KeyArgs are press_key's arguments.
type KeyArgs struct {
	Keys   string `json:"keys" jsonschema:"a key or combination: Return, ctrl+l, alt+Tab"`
	HoldMs int    `json:"hold_ms,omitempty" jsonschema:"hold each key this long"`
	Repeat int    `json:"repeat,omitempty" jsonschema:"press it this many times (1-100)"`
	PointArgs
	AfterArgs
}

// ScrollArgs are scroll's arguments.
type ScrollArgs struct {
	DX int `json:"dx,omitempty" jsonschema:"wheel clicks right (negative: left)"`
	DY int `json:"dy,omitempty" jsonschema:"wheel clicks down (negative: up)"`
	PointArgs
	AfterArgs
}

// DragArgs are drag's arguments.
type DragArgs struct {
	From   PointArgs   `json:"from" jsonschema:"where the drag starts"`
	To     PointArgs   `json:"to" jsonschema:"where it ends"`
	Via    []PointArgs `json:"via,omitempty" jsonschema:"points passed on the way"`
	Button string      `json:"button,omitempty" jsonschema:"left (default), right or middle"`
	HoldMs int         `json:"hold_ms,omitempty" jsonschema:"hold the button this long before moving"`
	AfterArgs
}

// MoveArgs are move_pointer's arguments.
type MoveArgs struct {
	PointArgs
	AfterArgs
}

// StateArgs are desktop_state's arguments.
type StateArgs struct {
	Display  string `json:"display,omitempty" jsonschema:"X display (default: the daemon's)"`
	Window   string `json:"window,omitempty" jsonschema:"only elements inside this window"`
	Labels   bool   `json:"labels,omitempty" jsonschema:"add a screenshot with each element id drawn on it"`
	MaxWidth int    `json:"max_width,omitempty" jsonschema:"width of that screenshot in pixels (default 960)"`
}

func (a *actTools) act(ctx context.Context, _ *mcp.CallToolRequest, in ActArgs) (*mcp.CallToolResult, ActOutput, error) {
	return a.run(ctx, api.ActRequest{Host: in.Host, Display: in.Display, Window: in.Window, Shot: in.Shot, Actions: in.Actions,
		Settle: in.Settle, Screenshot: in.Screenshot, Diff: in.Diff})
}

func (a *actTools) click(ctx context.Context, _ *mcp.CallToolRequest, in ClickArgs) (*mcp.CallToolResult, ActOutput, error) {
	at, err := in.point()
	if err != nil {
		return nil, ActOutput{}, err
	}
	return a.run(ctx, in.request(api.Action{Kind: api.ActClick, At: at, Button: in.Button, Count: in.Count}))
}

func (a *actTools) typeText(ctx context.Context, _ *mcp.CallToolRequest, in TypeArgs) (*mcp.CallToolResult, ActOutput, error) {
	at, err := in.point()
	if err != nil {
		return nil, ActOutput{}, err
	}
	return a.run(ctx, in.request(api.Action{Kind: api.ActType, At: at, Text: in.Text}))
}

func (a *actTools) pressKey(ctx context.Context, _ *mcp.CallToolRequest, in KeyArgs) (*mcp.CallToolResult, ActOutput, error) {
	at, err := in.point()
	if err != nil {
		return nil, ActOutput{}, err
	}
	return a.run(ctx, in.request(api.Action{Kind: api.ActKey, At: at, Keys: in.Keys, HoldMs: in.HoldMs, Repeat: in.Repeat}))
}

func (a *actTools) scroll(ctx context.Context, _ *mcp.CallToolRequest, in ScrollArgs) (*mcp.CallToolResult, ActOutput, error) {
	at, err := in.point()
	if err != nil {
		return nil, ActOutput{}, err
	}
	return a.run(ctx, in.request(api.Action{Kind: api.ActScroll, At: at, DX: in.DX, DY: in.DY}))
}

func (a *actTools) drag(ctx context.Context, _ *mcp.CallToolRequest, in DragArgs) (*mcp.CallToolResult, ActOutput, error) {
	var path []api.Point
	for i, p := range append(append([]PointArgs{in.From}, in.Via...), in.To) {
		pt, err := p.point()
		if err != nil || pt == nil {
			return nil, ActOutput{}, fmt.Errorf("drag point %d: give an element id or x and y", i)
		}
		path = append(path, *pt)
	}
	return a.run(ctx, in.request(api.Action{Kind: api.ActDrag, Path: path, Button: in.Button, HoldMs: in.HoldMs}))
}

func (a *actTools) move(ctx context.Context, _ *mcp.CallToolRequest, in MoveArgs) (*mcp.CallToolResult, ActOutput, error) {
	at, err := in.point()
	if err != nil || at == nil {
		return nil, ActOutput{}, errors.New("move_pointer: give an element id or x and y")
	}
	return a.run(ctx, in.request(api.Action{Kind: api.ActMove, At: at}))
}

// run sends the request and answers with a text summary, the screenshot as
// image content, and the response (without the image bytes) as structured
// content. A refusal (403, 409 user_active, 400) is a tool error the model
// reads.
func (a *actTools) run(ctx context.Context, req api.ActRequest) (*mcp.CallToolResult, ActOutput, error) {
	resp, err := a.b.Act(ctx, req)
	if err != nil {
		return nil, ActOutput{}, actError(err)
	}
	res := &mcp.CallToolResult{}
	if s := resp.Screenshot; s != nil {
		res.Content = append(res.Content, &mcp.ImageContent{Data: s.Data, MIMEType: "image/" + s.Format})
	}
	res.Content = append(res.Content, &mcp.TextContent{Text: summarize(resp)})
	res.IsError = !resp.OK
	if resp.Results == nil {
		resp.Results = []api.ActionResult{}
	}
	return res, ActOutput{OK: resp.OK, Display: resp.Display, SessionRun: resp.SessionRun, Results: resp.Results,
		Settle: resp.Settle, Screenshot: shotMeta(resp.Screenshot), Diff: resp.Diff, Ms: resp.Ms}, nil
}

// actError turns the API's refusals into messages a model can act on.
func actError(err error) error {
	var se *api.StatusError
	if !errors.As(err, &se) {
		return err
	}
	switch se.Code {
	case api.CodeUserActive:
		return fmt.Errorf("the user is using this display (active for %d ms): acu does not fight the human for the pointer; try again in %d ms or later", se.ActiveMs, se.RetryAfterMs)
	case api.CodeInvalid:
		msg := se.Message
		if len(se.Suggestions) > 0 {
			msg += " (near matches: " + strings.Join(se.Suggestions, ", ") + ")"
		}
		return errors.New(msg)
	}
	return errors.New(se.Message)
}

func summarize(r api.ActResponse) string {
	var b strings.Builder
	for _, x := range r.Results {
		b.WriteString(x.String() + "\n")
	}
	if s := r.Settle; s != nil {
		if s.Settled {
			fmt.Fprintf(&b, "screen settled after %.0f ms (%d changes)\n", s.WaitedMs, s.Changes)
		} else {
			fmt.Fprintf(&b, "screen still changing after %.0f ms\n", s.WaitedMs)
		}
	}
	if s := r.Screenshot; s != nil {
		fmt.Fprintf(&b, "screenshot %s: %dx%d of the region %v of a %dx%d screen; click its pixels with shot=%q\n",
			s.ID, s.Width, s.Height, s.Region, s.Screen[0], s.Screen[1], s.ID)
	}
	if d := r.Diff; d != nil && d.Text != "" {
		b.WriteString("element changes:\n" + d.Text)
	}
	return strings.TrimSpace(b.String())
}

func (a *actTools) state(ctx context.Context, _ *mcp.CallToolRequest, in StateArgs) (*mcp.CallToolResult, StateOutput, error) {
	q := api.ElementsQuery{Display: in.Display, Window: in.Window, Labels: in.Labels}
	if in.Labels {
		q.Shot = &api.ShotOptions{Format: "jpeg", MaxWidth: in.MaxWidth}
	}
	m, err := a.b.Elements(ctx, q)
	if err != nil {
		return nil, StateOutput{}, actError(err)
	}
	res := &mcp.CallToolResult{}
	if s := m.Screenshot; s != nil {
		res.Content = append(res.Content, &mcp.ImageContent{Data: s.Data, MIMEType: "image/" + s.Format})
	}
	text := fmt.Sprintf("%d elements on %s (%dx%d screen):\n%s", len(m.Elements), m.Display, m.Screen[0], m.Screen[1], m.Text)
	if m.TreeError != "" {
		text += "\n(accessibility tree unavailable: " + m.TreeError + "; elements are from OCR)"
	}
	res.Content = append(res.Content, &mcp.TextContent{Text: text})
	return res, StateOutput{Display: m.Display, Iteration: m.Iteration, Screen: m.Screen, Elements: m.Elements, Text: m.Text,
		Dropped: m.Dropped, TreeError: m.TreeError, Screenshot: shotMeta(m.Screenshot), Ms: m.Ms}, nil
}

// ShotMeta describes a screenshot sent as image content beside it.
type ShotMeta struct {
	ID     string `json:"id"`
	Format string `json:"format"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Region [4]int `json:"region" jsonschema:"the captured rectangle in screen pixels: x, y, w, h"`
	Screen [2]int `json:"screen" jsonschema:"the screen's size"`
}

func shotMeta(s *api.ActShot) *ShotMeta {
	if s == nil {
		return nil
	}
	return &ShotMeta{ID: s.ID, Format: s.Format, Width: s.Width, Height: s.Height, Region: s.Region, Screen: s.Screen}
}

// ActOutput is the acting tools' structured result: POST /v1/actions'
// answer, with the screenshot's bytes sent once, as image content.
type ActOutput struct {
	OK         bool               `json:"ok"`
	Display    string             `json:"display"`
	SessionRun string             `json:"session_run,omitempty"`
	Results    []api.ActionResult `json:"results"`
	Settle     *api.SettleInfo    `json:"settle,omitempty"`
	Screenshot *ShotMeta          `json:"screenshot,omitempty"`
	Diff       *api.ElementDiff   `json:"diff,omitempty"`
	Ms         float64            `json:"ms"`
}

// StateOutput is desktop_state's structured result: the element map.
type StateOutput struct {
	Display    string        `json:"display"`
	Iteration  int           `json:"iteration"`
	Screen     [2]int        `json:"screen"`
	Elements   []api.Element `json:"elements"`
	Text       string        `json:"text"`
	Dropped    int           `json:"dropped,omitempty"`
	TreeError  string        `json:"tree_error,omitempty"`
	Screenshot *ShotMeta     `json:"screenshot,omitempty"`
	Ms         float64       `json:"ms"`
}
