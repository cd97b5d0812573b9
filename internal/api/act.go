package api

import (
	"fmt"
	"strings"
)

// Error codes of the acting routes (POST /v1/actions).
const (
	CodeActDisabled    = "act_disabled"    // 403: acting is off (ACU_ACT_ENABLED=false)
	CodeDisplayDenied  = "display_denied"  // 403: the display is not in ACU_ACT_DISPLAYS
	CodeWindowDenied   = "window_denied"   // 403: the action lands in a window of ACU_ACT_DENY
	CodeUserActive     = "user_active"     // 409: the user is using the display; retry after RetryAfterMs
	CodeActionFailed   = "action_failed"   // an action's own failure, in its ActionResult
	CodeElementMissing = "element_missing" // an element id no longer in the map, in its ActionResult
	CodeElementStale   = "element_stale"   // an element gone or no longer showing since its map was read: nothing was done; read the map again
)

// Point is a position in one of three forms:
//   - an element of the element map: {"element":"btn_ok"};
//   - normalized 0..1000 of the screen {"x":500,"y":500}, or of a window
//     {"x":500,"y":500,"window":"Firefox"} (title substring or window:0x…);
//   - pixels of a screenshot acu returned: {"x":412,"y":233,"shot":"shot_…"}
//     (the id of GET /v1/screenshot's X-Acu-Shot-Id or of an ActShot), or
//     {"x":412,"y":233,"image":"960x540"} (a screenshot of that size of the
//     screen, or of the window when window is set).
//
// A point with x,y and no window, shot or image takes the request's.
type Point struct {
	X       *int   `json:"x,omitempty"`
	Y       *int   `json:"y,omitempty"`
	Element string `json:"element,omitempty"`
	Window  string `json:"window,omitempty"`
	Shot    string `json:"shot,omitempty"`
	Image   string `json:"image,omitempty"`
}

// Pt returns a point at x, y (normalized 0..1000 of the screen unless the
// request or the point says otherwise).
func Pt(x, y int) *Point { return &Point{X: &x, Y: &y} }

// El returns a point at an element of the element map.
func El(id string) *Point { return &Point{Element: id} }

// Action kinds.
const (
	ActMove      = "move"       // at
	ActClick     = "click"      // at (optional: where the pointer is), button, count 1-3
	ActMouseDown = "mouse_down" // at (optional), button
	ActMouseUp   = "mouse_up"   // at (optional), button
	ActDrag      = "drag"       // path (2+ points), button, hold_ms before moving
	ActScroll    = "scroll"     // at (optional), dx, dy wheel clicks (positive: right, down)
	ActType      = "type"       // text; at (optional): an element or point to focus first
	ActKey       = "key"        // keys ("ctrl+l", "alt+Tab", "Return"), hold_ms, repeat; at (optional) to focus first
	ActWait      = "wait"       // ms
)

// ActionKinds lists the action kinds, for help and errors.
var ActionKinds = []string{ActMove, ActClick, ActMouseDown, ActMouseUp, ActDrag, ActScroll, ActType, ActKey, ActWait}

// Action is one step of POST /v1/actions.
type Action struct {
	Kind   string  `json:"kind"`
	At     *Point  `json:"at,omitempty"`
	Path   []Point `json:"path,omitempty"`
	Button string  `json:"button,omitempty"` // left (default), right, middle, back (X button 8), forward (9)
	Count  int     `json:"count,omitempty"`  // click: 1 (default) to 3
	DX     int     `json:"dx,omitempty"`
	DY     int     `json:"dy,omitempty"`
	Text   string  `json:"text,omitempty"`
	Keys   string  `json:"keys,omitempty"`
	HoldMs int     `json:"hold_ms,omitempty"` // key: how long each key is held; drag: hold before moving
	Repeat int     `json:"repeat,omitempty"`  // key: 1 (default) to 100
	Ms     int     `json:"ms,omitempty"`      // wait: 1..60000
	// Mods (click, scroll, drag, move, mouse_down, mouse_up): modifier
	// keys held down during the action, as "shift" or "ctrl+shift".
	Mods string `json:"mods,omitempty"`
	// Verify (element targets of click, type, key): re-extract the element
	// map after the action and check it had an effect, retrying once.
	Verify bool `json:"verify,omitempty"`
	// Pointer (element targets): use the pointer and keyboard even where
	// the element offers an accessibility action.
	Pointer bool `json:"pointer,omitempty"`
}

// SettleOptions asks for a wait after the actions until the target stops
// changing: QuietMs unchanged (default 100), at most TimeoutMs (default
// 5000). Target is a capture target (default screen).
type SettleOptions struct {
	QuietMs   int    `json:"quiet_ms,omitempty"`
	TimeoutMs int    `json:"timeout_ms,omitempty"`
	Target    string `json:"target,omitempty"`
}

// ShotOptions asks for a screenshot: Format jpeg (default) or png; the
// image at most MaxWidth pixels wide (default 960 for jpeg, full size for
// png) or scaled by Scale (0..1]; Region a capture target (screen,
// window:<title>, crop:x1,y1,x2,y2 in 0..1000); Quality 1..100 for jpeg
// (default 72).
type ShotOptions struct {
	Format   string  `json:"format,omitempty"`
	MaxWidth int     `json:"max_width,omitempty"`
	Scale    float64 `json:"scale,omitempty"`
	Region   string  `json:"region,omitempty"`
	Quality  int     `json:"quality,omitempty"`
	// Labels draws each element's id on the picture (set-of-marks).
	Labels bool `json:"labels,omitempty"`
}

// ActRequest is POST /v1/actions: actions run in order on one display,
// stopping at the first failure. Window, Shot and Image are the frame of
// x,y points that name none (see Point).
type ActRequest struct {
	// Host runs the request on another daemon of a fleet sharing one
	// PostgreSQL database (its ACU_HOST_ID), through the database: that
	// daemon claims it, acts on its display and the answer comes back here.
	Host       string         `json:"host,omitempty"`
	Display    string         `json:"display,omitempty"`
	Window     string         `json:"window,omitempty"`
	Shot       string         `json:"shot,omitempty"`
	Image      string         `json:"image,omitempty"`
	Actions    []Action       `json:"actions"`
	Settle     *SettleOptions `json:"settle,omitempty"`
	Screenshot *ShotOptions   `json:"screenshot,omitempty"`
	// Diff returns the element-map diff from before the actions to after
	// them (and the settle).
	Diff bool `json:"diff,omitempty"`
	// OrderTimeoutMs bounds each wait for an application to handle the
	// input before an action by another mechanism (default 1000, at most
	// 10000); see ActionResult.Ordered.
	OrderTimeoutMs int `json:"order_timeout_ms,omitempty"`
}

// ActionResult is the outcome of one action.
type ActionResult struct {
	Index   int    `json:"index"`
	Kind    string `json:"kind"`
	OK      bool   `json:"ok"`
	Skipped bool   `json:"skipped,omitempty"` // not run: an earlier action failed
	// Via says how: xtest (X11's input device), virtual (a Wayland
	// display's virtual pointer and keyboard), or for element targets
	// action:<name>, editable_text or pointer.
	Via      string  `json:"via,omitempty"`
	Element  string  `json:"element,omitempty"`
	At       *[2]int `json:"at,omitempty"` // screen pixels acted at
	Window   string  `json:"window,omitempty"`
	Attempts int     `json:"attempts,omitempty"` // verified element actions
	// Moved says an element target had moved since its map was read: acu
	// looked at it again and acted at its new place (At).
	Moved string `json:"moved,omitempty"`
	// Ordered is set on an action carried by another mechanism than the
	// one before it (XTest, an AT-SPI action, AT-SPI text): true when acu
	// proved the application handled the earlier input first, false when
	// it could not within order_timeout_ms (OrderNote says why; the action
	// ran all the same).
	Ordered   *bool        `json:"ordered,omitempty"`
	OrderNote string       `json:"order_note,omitempty"`
	OrderMs   float64      `json:"order_ms,omitempty"`
	Error     *ErrorDetail `json:"error,omitempty"`
	Ms        float64      `json:"ms"`
}

// SettleInfo is what the settle after the actions saw.
type SettleInfo struct {
	Settled  bool    `json:"settled"`
	WaitedMs float64 `json:"waited_ms"`
	Changes  int     `json:"changes"`
}

// ActShot is a screenshot in a JSON answer. ID maps its pixels back to the
// screen in later requests ({"shot": id}); Region is the captured
// rectangle in screen pixels, x,y,w,h.
type ActShot struct {
	ID     string `json:"id"`
	Format string `json:"format"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Region [4]int `json:"region"`
	Screen [2]int `json:"screen"` // the whole screen's size
	Data   []byte `json:"data"`   // base64 in JSON
}

// ElementChange is one changed element of a diff.
type ElementChange struct {
	ID     string   `json:"id"`
	What   []string `json:"what"`
	Before Element  `json:"before"`
	After  Element  `json:"after"`
}

// ElementDiff is the element-map diff; Text is its compact form.
type ElementDiff struct {
	Added   []Element       `json:"added,omitempty"`
	Removed []Element       `json:"removed,omitempty"`
	Changed []ElementChange `json:"changed,omitempty"`
	Text    string          `json:"text"`
}

// ActResponse answers POST /v1/actions. OK is false when an action failed
// or was refused after others ran (its result says why; the ones after it
// are skipped).
type ActResponse struct {
	OK         bool           `json:"ok"`
	Display    string         `json:"display"`
	SessionRun string         `json:"session_run,omitempty"`
	Results    []ActionResult `json:"results"`
	Settle     *SettleInfo    `json:"settle,omitempty"`
	Screenshot *ActShot       `json:"screenshot,omitempty"`
	Diff       *ElementDiff   `json:"diff,omitempty"`
	Ms         float64        `json:"ms"`
}

// Element is one entry of the element map. Box is x,y,w,h and Center x,y
// in screen pixels.
type Element struct {
	ID        string   `json:"id"`
	Type      string   `json:"type"`
	Text      string   `json:"text,omitempty"`
	Value     string   `json:"value,omitempty"`
	Desc      string   `json:"desc,omitempty"`
	Role      string   `json:"role,omitempty"`
	Box       [4]int   `json:"box"`
	Center    [2]int   `json:"center"`
	App       string   `json:"app,omitempty"`
	Window    string   `json:"window,omitempty"`
	Clickable bool     `json:"clickable,omitempty"`
	Editable  bool     `json:"editable,omitempty"`
	Focused   bool     `json:"focused,omitempty"`
	Enabled   bool     `json:"enabled,omitempty"`
	Checked   bool     `json:"checked,omitempty"`
	Showing   bool     `json:"showing,omitempty"`
	Active    bool     `json:"active,omitempty"`
	Actions   []string `json:"actions,omitempty"`
	Source    string   `json:"source"`
}

// ElementMap answers GET /v1/elements: the map as JSON and as the compact
// text a model reads (Text), and with labels=true a screenshot with each
// element's id drawn on it.
type ElementMap struct {
	Display    string    `json:"display"`
	Iteration  int       `json:"iteration"`
	Screen     [2]int    `json:"screen"`
	Elements   []Element `json:"elements"`
	Text       string    `json:"text"`
	Dropped    int       `json:"dropped,omitempty"`
	TreeError  string    `json:"tree_error,omitempty"`
	Screenshot *ActShot  `json:"screenshot,omitempty"`
	Ms         float64   `json:"ms"`
}

// ElementsQuery is GET /v1/elements' parameters.
type ElementsQuery struct {
	Display string
	Window  string // only elements inside this window (title substring or window:0x…)
	Labels  bool   // add a labelled screenshot
	Shot    *ShotOptions
}

// String is the result on one line, as the CLI and the MCP tools print it:
// "0 click: ok on btn_ok at 412,233 via action:click", "1 type: skipped",
// "1 key: failed: <message>".
func (x ActionResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s: ", x.Index, x.Kind)
	switch {
	case x.Skipped:
		b.WriteString("skipped")
	case !x.OK:
		b.WriteString("failed")
		if x.Error != nil {
			b.WriteString(": " + x.Error.Message)
		}
	default:
		b.WriteString("ok")
		if x.Element != "" {
			b.WriteString(" on " + x.Element)
		}
		if x.At != nil {
			fmt.Fprintf(&b, " at %d,%d", x.At[0], x.At[1])
		}
		if x.Via != "" {
			b.WriteString(" via " + x.Via)
		}
	}
	return b.String()
}
