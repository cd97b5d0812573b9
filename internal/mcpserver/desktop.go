package mcpserver

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/api"
)

// DesktopBackend is what the window, launch and clipboard tools need
// (*api.Client).
type DesktopBackend interface {
	Windows(ctx context.Context, display string) (api.WindowList, error)
	WindowOp(ctx context.Context, id, op string, req api.WindowOp) (api.WindowOpResult, error)
	Pointer(ctx context.Context, display string) (api.Pointer, error)
	GetClipboard(ctx context.Context, display, selection, typ string) (api.Clipboard, error)
	SetClipboard(ctx context.Context, req api.Clipboard) (api.Clipboard, error)
	Launch(ctx context.Context, req api.LaunchRequest) (api.LaunchResult, error)
}

// AddDesktopTools registers list_windows, focus_window, window, launch_app,
// clipboard_get, clipboard_set and pointer.
func AddDesktopTools(s *mcp.Server, b DesktopBackend) {
	d := &desktopTools{b: b}
	addTool(s, &mcp.Tool{Name: "list_windows", Description: "List the top-level windows: id, title, class, pid, place and size in pixels, and whether each is focused, minimized or maximized.", Annotations: readOnly}, d.list)
	addTool(s, &mcp.Tool{Name: "focus_window", Description: "Bring a window to the front and give it the keyboard: by id (0x…) from list_windows, or by title substring.", Annotations: additive}, d.focus)
	addTool(s, &mcp.Tool{Name: "window", Description: "Operate on a window: op close (politely; kill=true disconnects it if it does not close), move (x, y), resize (w, h), minimize, maximize or focus.", Annotations: destructive}, d.op)
	addTool(s, &mcp.Tool{Name: "launch_app", Description: "Start an application on the desktop: a desktop entry by name or id (\"Text Editor\", org.gnome.gedit) or an argv; wait_window waits for its window and returns it.", Annotations: additive}, d.launch)
	addTool(s, &mcp.Tool{Name: "clipboard_get", Description: "Read the clipboard (or the primary selection): text, or an image (image/png).", Annotations: readOnly}, d.clipGet)
	addTool(s, &mcp.Tool{Name: "clipboard_set", Description: "Put text (or a PNG, as base64) on the clipboard or the primary selection; acu keeps it there for paste until something else is copied.", Annotations: destructive}, d.clipSet)
	addTool(s, &mcp.Tool{Name: "pointer", Description: "Where the pointer is: pixels, 0..1000 of the screen, the window under it and the buttons held.", Annotations: readOnly}, d.pointer)
}

type desktopTools struct{ b DesktopBackend }

// WindowsArgs name a display.
type WindowsArgs struct {
	Display string `json:"display,omitempty" jsonschema:"X display (default: the daemon's)"`
}

// FocusArgs are focus_window's arguments.
type FocusArgs struct {
	Window  string `json:"window" jsonschema:"the window: its id (0x…) from list_windows, or a title substring"`
	Display string `json:"display,omitempty" jsonschema:"X display (default: the daemon's)"`
}

// WindowArgs are window's arguments.
type WindowArgs struct {
	Window  string `json:"window" jsonschema:"the window: its id (0x…) from list_windows, or a title substring"`
	Op      string `json:"op" jsonschema:"close, move, resize, minimize, maximize or focus"`
	X       *int   `json:"x,omitempty" jsonschema:"move: the client area's left edge in pixels"`
	Y       *int   `json:"y,omitempty" jsonschema:"move: its top edge"`
	W       *int   `json:"w,omitempty" jsonschema:"resize: width in pixels"`
	H       *int   `json:"h,omitempty" jsonschema:"resize: height in pixels"`
	Kill    bool   `json:"kill,omitempty" jsonschema:"close: disconnect the program if the window does not close"`
	Display string `json:"display,omitempty" jsonschema:"X display (default: the daemon's)"`
}

// LaunchArgs are launch_app's arguments.
type LaunchArgs struct {
	App        string   `json:"app,omitempty" jsonschema:"a desktop entry's name or id"`
	Argv       []string `json:"argv,omitempty" jsonschema:"or a program and its arguments"`
	WaitWindow bool     `json:"wait_window,omitempty" jsonschema:"wait for its window to appear and return it"`
	Timeout    float64  `json:"timeout,omitempty" jsonschema:"seconds to wait for the window (default 10)"`
	Display    string   `json:"display,omitempty" jsonschema:"X display (default: the daemon's)"`
	// Env is passed as is: the daemon's own secrets never reach the program.
	Env map[string]string `json:"env,omitempty" jsonschema:"environment variables to set for the program (the daemon's API keys, tokens and ACU_* settings are never passed on)"`
}

// ClipGetArgs are clipboard_get's arguments.
type ClipGetArgs struct {
	Selection string `json:"selection,omitempty" jsonschema:"clipboard (default) or primary"`
	Type      string `json:"type,omitempty" jsonschema:"text (default) or image/png"`
	Display   string `json:"display,omitempty" jsonschema:"X display (default: the daemon's)"`
}

// ClipSetArgs are clipboard_set's arguments.
type ClipSetArgs struct {
	Text      string `json:"text,omitempty" jsonschema:"the text to copy"`
	ImagePNG  string `json:"image_png,omitempty" jsonschema:"or a PNG image, base64"`
	Selection string `json:"selection,omitempty" jsonschema:"clipboard (default) or primary"`
	Display   string `json:"display,omitempty" jsonschema:"X display (default: the daemon's)"`
}

// ClipInfo is the clipboard tools' structured result (an image is sent as
// image content beside it).
type ClipInfo struct {
	Display   string `json:"display"`
	Selection string `json:"selection"`
	Text      string `json:"text,omitempty"`
	Image     bool   `json:"image,omitempty"`
	Bytes     int    `json:"bytes"`
}

func (d *desktopTools) list(ctx context.Context, _ *mcp.CallToolRequest, in WindowsArgs) (*mcp.CallToolResult, api.WindowList, error) {
	l, err := d.b.Windows(ctx, in.Display)
	if err != nil {
		return nil, api.WindowList{}, actError(err)
	}
	var b strings.Builder
	wm := l.WM
	if wm == "" {
		wm = "no window manager"
	}
	fmt.Fprintf(&b, "%d windows on %s (%s):", len(l.Windows), l.Display, wm)
	for _, w := range l.Windows {
		fmt.Fprintf(&b, "\n%s %q class %s at %d,%d %dx%d", w.ID, w.Title, w.Class, w.X, w.Y, w.W, w.H)
		for _, f := range []struct {
			on   bool
			word string
		}{{w.Focused, "focused"}, {w.Minimized, "minimized"}, {w.Maximized, "maximized"}, {!w.Mapped, "hidden"}} {
			if f.on {
				b.WriteString(" " + f.word)
			}
		}
	}
	return textResult(b.String()), l, nil
}

// windowID finds a window's id: an id as given, else the one window whose
// title contains the text.
func (d *desktopTools) windowID(ctx context.Context, display, w string) (string, error) {
	if strings.HasPrefix(w, "0x") || strings.HasPrefix(w, "window:0x") {
		return strings.TrimPrefix(w, "window:"), nil
	}
	l, err := d.b.Windows(ctx, display)
	if err != nil {
		return "", actError(err)
	}
	var found []api.Window
	for _, x := range l.Windows {
		if strings.Contains(strings.ToLower(x.Title), strings.ToLower(strings.TrimPrefix(w, "window:"))) {
			found = append(found, x)
		}
	}
	switch len(found) {
	case 1:
		return found[0].ID, nil
	case 0:
		return "", fmt.Errorf("no window's title contains %q: see list_windows", w)
	}
	var names []string
	for _, x := range found {
		names = append(names, fmt.Sprintf("%s %q", x.ID, x.Title))
	}
	return "", fmt.Errorf("%d windows match %q: give an id (%s)", len(found), w, strings.Join(names, ", "))
}

func (d *desktopTools) focus(ctx context.Context, req *mcp.CallToolRequest, in FocusArgs) (*mcp.CallToolResult, api.WindowOpResult, error) {
	return d.op(ctx, req, WindowArgs{Window: in.Window, Op: api.WindowFocus, Display: in.Display})
}

func (d *desktopTools) op(ctx context.Context, _ *mcp.CallToolRequest, in WindowArgs) (*mcp.CallToolResult, api.WindowOpResult, error) {
	id, err := d.windowID(ctx, in.Display, in.Window)
	if err != nil {
		return nil, api.WindowOpResult{}, err
	}
	r, err := d.b.WindowOp(ctx, id, in.Op, api.WindowOp{Display: in.Display, X: in.X, Y: in.Y, W: in.W, H: in.H, Kill: in.Kill})
	if err != nil {
		return nil, api.WindowOpResult{}, actError(err)
	}
	text := fmt.Sprintf("%s %s: done with %s.", in.Op, id, r.Method)
	if w := r.Window; w != nil {
		text += fmt.Sprintf(" Now %q at %d,%d %dx%d, focused %v, minimized %v, maximized %v.", w.Title, w.X, w.Y, w.W, w.H, w.Focused, w.Minimized, w.Maximized)
	} else if in.Op == api.WindowClose {
		text += " The window is gone."
	}
	return textResult(text), r, nil
}

func (d *desktopTools) launch(ctx context.Context, _ *mcp.CallToolRequest, in LaunchArgs) (*mcp.CallToolResult, api.LaunchResult, error) {
	r, err := d.b.Launch(ctx, api.LaunchRequest{Display: in.Display, DesktopEntry: in.App, Argv: in.Argv, WaitWindow: in.WaitWindow, Timeout: in.Timeout, Env: in.Env})
	if err != nil {
		return nil, api.LaunchResult{}, actError(err)
	}
	text := fmt.Sprintf("Started %s (pid %d) on %s.", strings.Join(r.Argv, " "), r.PID, r.Display)
	if w := r.Window; w != nil {
		text += fmt.Sprintf(" Its window %s %q is at %d,%d %dx%d.", w.ID, w.Title, w.X, w.Y, w.W, w.H)
	} else if r.Note != "" {
		text += " " + r.Note
	}
	return textResult(text), r, nil
}

func (d *desktopTools) clipGet(ctx context.Context, _ *mcp.CallToolRequest, in ClipGetArgs) (*mcp.CallToolResult, ClipInfo, error) {
	c, err := d.b.GetClipboard(ctx, in.Display, in.Selection, in.Type)
	if err != nil {
		return nil, ClipInfo{}, actError(err)
	}
	info := ClipInfo{Display: c.Display, Selection: c.Selection, Text: c.Text, Image: len(c.ImagePNG) > 0, Bytes: len(c.Text) + len(c.ImagePNG)}
	if info.Image {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: c.ImagePNG, MIMEType: "image/png"},
			&mcp.TextContent{Text: fmt.Sprintf("The %s selection holds a PNG of %d bytes.", c.Selection, len(c.ImagePNG))}}}, info, nil
	}
	return textResult(c.Text), info, nil
}

func (d *desktopTools) clipSet(ctx context.Context, _ *mcp.CallToolRequest, in ClipSetArgs) (*mcp.CallToolResult, ClipInfo, error) {
	req := api.Clipboard{Display: in.Display, Selection: in.Selection, Text: in.Text}
	if in.ImagePNG != "" {
		b, err := base64.StdEncoding.DecodeString(in.ImagePNG)
		if err != nil {
			return nil, ClipInfo{}, fmt.Errorf("image_png is not base64: %v", err)
		}
		req.ImagePNG = b
	}
	c, err := d.b.SetClipboard(ctx, req)
	if err != nil {
		return nil, ClipInfo{}, actError(err)
	}
	n := len(req.Text) + len(req.ImagePNG)
	return textResult(fmt.Sprintf("Copied %d bytes to the %s selection.", n, c.Selection)),
		ClipInfo{Display: c.Display, Selection: c.Selection, Text: req.Text, Image: len(req.ImagePNG) > 0, Bytes: n}, nil
}

func (d *desktopTools) pointer(ctx context.Context, _ *mcp.CallToolRequest, in WindowsArgs) (*mcp.CallToolResult, api.Pointer, error) {
	p, err := d.b.Pointer(ctx, in.Display)
	if err != nil {
		return nil, api.Pointer{}, actError(err)
	}
	if p.Buttons == nil {
		p.Buttons = []int{}
	}
	return textResult(fmt.Sprintf("Pointer at %d,%d (%d,%d of 1000) over %s, buttons held %v.", p.X, p.Y, p.NX, p.NY, p.Window, p.Buttons)), p, nil
}
