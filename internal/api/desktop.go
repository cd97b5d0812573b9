package api

import (
	"context"
	"net/url"
)

// Window is one top-level window in GET /v1/windows. Id is hexadecimal as
// X tools print it ("0x1a00003"); X, Y, W, H is the client area in screen
// pixels.
type Window struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Class     string `json:"class,omitempty"`
	Instance  string `json:"instance,omitempty"`
	PID       int    `json:"pid,omitempty"`
	X         int    `json:"x"`
	Y         int    `json:"y"`
	W         int    `json:"w"`
	H         int    `json:"h"`
	Desktop   int    `json:"desktop"` // -1: unknown or all desktops
	Mapped    bool   `json:"mapped"`
	Focused   bool   `json:"focused"`
	Minimized bool   `json:"minimized"`
	Maximized bool   `json:"maximized"`
}

// WindowList is GET /v1/windows.
type WindowList struct {
	Display string   `json:"display"`
	WM      string   `json:"wm,omitempty"` // the window manager's name; "" when none runs
	Windows []Window `json:"windows"`
	// Note says what the list lacks on this display, e.g. a Wayland
	// compositor that gives no window geometry (x, y, w, h are then 0).
	Note string `json:"note,omitempty"`
}

// Window operations, the last path element of POST /v1/windows/{id}/{op}.
const (
	WindowFocus    = "focus"
	WindowClose    = "close"
	WindowMove     = "move"
	WindowResize   = "resize"
	WindowMinimize = "minimize"
	WindowMaximize = "maximize"
)

// WindowOp is the body of POST /v1/windows/{id}/{op} (optional for focus,
// close, minimize, maximize). Move takes x and y (client area, pixels),
// resize w and h; close takes kill (disconnect the client when it does not
// close within grace seconds, default 2, or cannot be asked).
type WindowOp struct {
	Display string   `json:"display,omitempty"`
	X       *int     `json:"x,omitempty"`
	Y       *int     `json:"y,omitempty"`
	W       *int     `json:"w,omitempty"`
	H       *int     `json:"h,omitempty"`
	Kill    bool     `json:"kill,omitempty"`
	Grace   *float64 `json:"grace,omitempty"`
}

// WindowOpResult answers a window operation: how it was done and the
// window's state right after (a window manager may still be applying it).
// Window is nil once the window is gone (close).
type WindowOpResult struct {
	Op     string  `json:"op"`
	Method string  `json:"method"` // the X request: "_NET_ACTIVE_WINDOW", "SetInputFocus", "KillClient", ...
	WM     string  `json:"wm,omitempty"`
	Window *Window `json:"window,omitempty"`
}

// Pointer is GET /v1/pointer.
type Pointer struct {
	Display string `json:"display"`
	X       int    `json:"x"` // pixels
	Y       int    `json:"y"`
	NX      int    `json:"nx"` // 0..1000 of the screen
	NY      int    `json:"ny"`
	Window  string `json:"window,omitempty"` // the client window under the pointer
	Buttons []int  `json:"buttons"`          // held, 1..5
}

// Clipboard selections and types.
const (
	SelectionClipboard = "clipboard"
	SelectionPrimary   = "primary"
	ClipText           = "text"
	ClipPNG            = "image/png"
)

// Clipboard is GET /v1/clipboard's answer and PUT /v1/clipboard's body:
// exactly one of Text or ImagePNG (base64 in JSON).
type Clipboard struct {
	Display   string `json:"display,omitempty"`
	Selection string `json:"selection,omitempty"` // clipboard (default) or primary
	Text      string `json:"text,omitempty"`
	ImagePNG  []byte `json:"image_png,omitempty"`
}

// LaunchRequest is POST /v1/apps/launch: a desktop entry (id or Name) or an
// argv. WaitWindow waits up to Timeout seconds (default 10) for a new
// window of the process to map.
type LaunchRequest struct {
	Display      string   `json:"display,omitempty"`
	DesktopEntry string   `json:"desktop_entry,omitempty"`
	Argv         []string `json:"argv,omitempty"`
	WaitWindow   bool     `json:"wait_window,omitempty"`
	Timeout      float64  `json:"timeout,omitempty"`
	// Env sets variables for the program on top of the daemon's scrubbed
	// environment (the daemon's secrets and ACU_* settings are never
	// passed on; see docs/desktop.md).
	Env map[string]string `json:"env,omitempty"`
}

// LaunchResult answers a launch.
type LaunchResult struct {
	Display string   `json:"display"`
	PID     int      `json:"pid"`
	Argv    []string `json:"argv"`
	Entry   string   `json:"entry,omitempty"` // the desktop file used
	Window  *Window  `json:"window,omitempty"`
	// Note says why Window is missing when wait_window was asked.
	Note string `json:"note,omitempty"`
}

// Windows calls GET /v1/windows.
func (c *Client) Windows(ctx context.Context, display string) (WindowList, error) {
	var out WindowList
	err := c.do(ctx, "GET", "/v1/windows"+pairs("display", display), nil, &out)
	return out, err
}

// WindowOp calls POST /v1/windows/{id}/{op}.
func (c *Client) WindowOp(ctx context.Context, id, op string, req WindowOp) (WindowOpResult, error) {
	var out WindowOpResult
	err := c.do(ctx, "POST", "/v1/windows/"+url.PathEscape(id)+"/"+url.PathEscape(op), req, &out)
	return out, err
}

// Pointer calls GET /v1/pointer.
func (c *Client) Pointer(ctx context.Context, display string) (Pointer, error) {
	var out Pointer
	err := c.do(ctx, "GET", "/v1/pointer"+pairs("display", display), nil, &out)
	return out, err
}

// GetClipboard calls GET /v1/clipboard; typ is ClipText (default) or
// ClipPNG.
func (c *Client) GetClipboard(ctx context.Context, display, selection, typ string) (Clipboard, error) {
	var out Clipboard
	err := c.do(ctx, "GET", "/v1/clipboard"+pairs("display", display, "selection", selection, "type", typ), nil, &out)
	return out, err
}

// SetClipboard calls PUT /v1/clipboard.
func (c *Client) SetClipboard(ctx context.Context, req Clipboard) (Clipboard, error) {
	var out Clipboard
	err := c.do(ctx, "PUT", "/v1/clipboard", req, &out)
	return out, err
}

// Launch calls POST /v1/apps/launch.
func (c *Client) Launch(ctx context.Context, req LaunchRequest) (LaunchResult, error) {
	var out LaunchResult
	err := c.do(ctx, "POST", "/v1/apps/launch", req, &out)
	return out, err
}

// pairs builds "?k=v&..." from pairs, leaving out empty values.
func pairs(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			v.Set(kv[i], kv[i+1])
		}
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}
