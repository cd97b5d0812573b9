package display

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jezek/xgb/xproto"
)

// ErrNoWindow is returned (wrapped) by window operations on an id that is
// not a window on the display (any more).
var ErrNoWindow = errors.New("no such window")

// ErrNoDelete is returned (wrapped) by Close when the window neither has a
// window manager to ask nor speaks WM_DELETE_WINDOW, and kill was not asked.
var ErrNoDelete = errors.New("window does not support WM_DELETE_WINDOW")

// WM describes the running window manager, if any: one is running when the
// root's _NET_SUPPORTING_WM_CHECK names a window that names itself.
type WM struct {
	Running   bool
	Name      string // its _NET_WM_NAME ("Openbox")
	supported map[xproto.Atom]bool
}

// supports reports whether the window manager lists the atom in
// _NET_SUPPORTED.
func (c *Conn) supports(wm WM, name string) bool {
	if !wm.Running {
		return false
	}
	a, err := c.Atom(name)
	return err == nil && wm.supported[a]
}

// WindowManager detects the running EWMH window manager.
func (c *Conn) WindowManager(ctx context.Context) (WM, error) {
	if err := ctx.Err(); err != nil {
		return WM{}, err
	}
	check, err := c.Atom("_NET_SUPPORTING_WM_CHECK")
	if err != nil {
		return WM{}, err
	}
	w, ok := c.windowProp(c.Screen.Root, check)
	if !ok || w == 0 {
		return WM{}, nil
	}
	if self, ok := c.windowProp(xproto.Window(w), check); !ok || self != w {
		return WM{}, nil // a stale check window left by a window manager that died
	}
	wm := WM{Running: true, supported: map[xproto.Atom]bool{}}
	at, err := c.atoms4("_NET_WM_NAME", "UTF8_STRING", "_NET_SUPPORTED")
	if err != nil {
		return WM{}, err
	}
	if r, err := xproto.GetProperty(c.X, false, xproto.Window(w), at[0], at[1], 0, 256).Reply(); err == nil {
		wm.Name = string(r.Value)
	}
	if r, err := xproto.GetProperty(c.X, false, c.Screen.Root, at[2], xproto.AtomAtom, 0, 4096).Reply(); err == nil && r.Format == 32 {
		for i := 0; i+4 <= len(r.Value); i += 4 {
			wm.supported[xproto.Atom(le32(r.Value[i:]))] = true
		}
	}
	return wm, nil
}

// windowProp reads a 32-bit WINDOW or CARDINAL property's first value.
func (c *Conn) windowProp(w xproto.Window, prop xproto.Atom) (uint32, bool) {
	r, err := xproto.GetProperty(c.X, false, w, prop, xproto.GetPropertyTypeAny, 0, 1).Reply()
	if err != nil || r.Format != 32 || len(r.Value) < 4 {
		return 0, false
	}
	return le32(r.Value), true
}

func (c *Conn) cardinals(w xproto.Window, prop xproto.Atom) []uint32 {
	var out []uint32
	for _, a := range c.atomList(w, prop) {
		out = append(out, uint32(a))
	}
	return out
}

func (c *Conn) atomList(w xproto.Window, prop xproto.Atom) []xproto.Atom {
	r, err := xproto.GetProperty(c.X, false, w, prop, xproto.GetPropertyTypeAny, 0, 1024).Reply()
	if err != nil || r.Format != 32 {
		return nil
	}
	out := make([]xproto.Atom, 0, len(r.Value)/4)
	for i := 0; i+4 <= len(r.Value); i += 4 {
		out = append(out, xproto.Atom(le32(r.Value[i:])))
	}
	return out
}

// WindowState is a window with what a window manager (or acu, without one)
// records about it.
type WindowState struct {
	Window
	PID       int // _NET_WM_PID; 0 when the client does not say
	Desktop   int // _NET_WM_DESKTOP; -1 when unknown or on all desktops
	Focused   bool
	Minimized bool
	Maximized bool
}

// iconicState is ICCCM's WM_STATE value for an iconified window.
const iconicState = 3

// WindowStates lists the top-level client windows (as Windows does) with
// their state. Without a window manager it also lists the windows acu
// minimized (unmapped, marked iconic in WM_STATE), so they can be restored.
func (c *Conn) WindowStates(ctx context.Context) ([]WindowState, error) {
	ws, err := c.Windows(ctx)
	if err != nil {
		return nil, err
	}
	wm, err := c.WindowManager(ctx)
	if err != nil {
		return nil, err
	}
	if !wm.Running {
		iconic, err := c.iconicTops()
		if err != nil {
			return nil, err
		}
		more, err := c.describe(iconic)
		if err != nil {
			return nil, err
		}
		for _, w := range more {
			if w.ID != 0 {
				ws = append(ws, w)
			}
		}
	}
	out := make([]WindowState, 0, len(ws))
	for _, w := range ws {
		out = append(out, c.state(wm, w))
	}
	return out, nil
}

// WindowState describes one window by id with its state.
func (c *Conn) WindowState(ctx context.Context, id uint32) (WindowState, error) {
	w, ok, err := c.Window(ctx, id)
	if err != nil {
		return WindowState{}, err
	}
	if !ok {
		return WindowState{}, fmt.Errorf("window %#x on %s: %w", id, c.Name, ErrNoWindow)
	}
	wm, err := c.WindowManager(ctx)
	if err != nil {
		return WindowState{}, err
	}
	return c.state(wm, w), nil
}

func (c *Conn) state(wm WM, w Window) WindowState {
	s := WindowState{Window: w, Desktop: -1}
	id := xproto.Window(w.ID)
	at, err := c.atoms4("_NET_WM_PID", "_NET_WM_DESKTOP", "_NET_WM_STATE", "_NET_WM_STATE_HIDDEN",
		"_NET_WM_STATE_MAXIMIZED_VERT", "_NET_WM_STATE_MAXIMIZED_HORZ", "_NET_ACTIVE_WINDOW", "WM_STATE")
	if err != nil {
		return s
	}
	if v, ok := c.windowProp(id, at[0]); ok {
		s.PID = int(v)
	}
	if v, ok := c.windowProp(id, at[1]); ok && v != 0xFFFFFFFF {
		s.Desktop = int(v)
	}
	if v, ok := c.windowProp(id, at[7]); ok && v == iconicState {
		s.Minimized = true
	}
	var vert, horz bool
	for _, a := range c.atomList(id, at[2]) {
		switch a {
		case at[3]:
			s.Minimized = true
		case at[4]:
			vert = true
		case at[5]:
			horz = true
		}
	}
	if wm.Running {
		s.Maximized = vert && horz
		if v, ok := c.windowProp(c.Screen.Root, at[6]); ok && v == w.ID {
			s.Focused = true
		}
	} else {
		s.Maximized = w.X == 0 && w.Y == 0 && w.W == c.Screen.Width && w.H == c.Screen.Height
		s.Minimized = s.Minimized && !w.Mapped
	}
	if !s.Focused && w.Mapped {
		if f, err := xproto.GetInputFocus(c.X).Reply(); err == nil && f.Focus == id {
			s.Focused = true
		}
	}
	return s
}

// iconicTops are unmapped children of the root marked iconic in WM_STATE:
// the windows acu minimized without a window manager.
func (c *Conn) iconicTops() ([]xproto.Window, error) {
	tree, err := xproto.QueryTree(c.X, c.Screen.Root).Reply()
	if err != nil {
		return nil, fmt.Errorf("list windows on %s: %w", c.Name, err)
	}
	wmState, err := c.Atom("WM_STATE")
	if err != nil {
		return nil, err
	}
	var out []xproto.Window
	for _, ch := range tree.Children {
		a, err := xproto.GetWindowAttributes(c.X, ch).Reply()
		if err != nil || a.MapState != xproto.MapStateUnmapped || a.OverrideRedirect {
			continue
		}
		if v, ok := c.windowProp(ch, wmState); ok && v == iconicState {
			out = append(out, ch)
		}
	}
	return out, nil
}

// OpResult says how a window operation was carried out.
type OpResult struct {
	// Method is the request acu sent: "_NET_ACTIVE_WINDOW",
	// "SetInputFocus", "_NET_CLOSE_WINDOW", "WM_DELETE_WINDOW", "KillClient",
	// "_NET_MOVERESIZE_WINDOW", "ConfigureWindow", "WM_CHANGE_STATE",
	// "UnmapWindow", "_NET_WM_STATE".
	Method string
	// WM is the window manager's name, "" when none runs.
	WM string
}

// exists returns ErrNoWindow (wrapped) unless id is a window.
func (c *Conn) exists(id uint32) error {
	if _, err := xproto.GetWindowAttributes(c.X, xproto.Window(id)).Reply(); err != nil {
		return fmt.Errorf("window %#x on %s: %w", id, c.Name, ErrNoWindow)
	}
	return nil
}

// clientMessage sends a client message about w to dest (EWMH: the root, as
// window managers expect (source indication 2: a pager or tool).
func (c *Conn) clientMessage(dest, w xproto.Window, typ string, data ...uint32) error {
	a, err := c.Atom(typ)
	if err != nil {
		return err
	}
	var d [5]uint32
	copy(d[:], data)
	ev := xproto.ClientMessageEvent{Format: 32, Window: w, Type: a, Data: xproto.ClientMessageDataUnionData32New(d[:])}
	mask := uint32(xproto.EventMaskSubstructureRedirect | xproto.EventMaskSubstructureNotify)
	if dest != c.Screen.Root {
		mask = xproto.EventMaskNoEvent
	}
	if err := xproto.SendEventChecked(c.X, false, dest, mask, string(ev.Bytes())).Check(); err != nil {
		return fmt.Errorf("send %s for window %#x on %s: %w", typ, w, c.Name, err)
	}
	return nil
}

func (c *Conn) prepare(ctx context.Context, id uint32) (WM, error) {
	if err := ctx.Err(); err != nil {
		return WM{}, err
	}
	if err := c.exists(id); err != nil {
		return WM{}, err
	}
	return c.WindowManager(ctx)
}

// FocusWindow activates the window: _NET_ACTIVE_WINDOW when a window manager
// supports it (it also restores a minimized window), else map (if acu
// minimized it), raise and SetInputFocus.
func (c *Conn) FocusWindow(ctx context.Context, id uint32) (OpResult, error) {
	wm, err := c.prepare(ctx, id)
	if err != nil {
		return OpResult{}, err
	}
	w := xproto.Window(id)
	if c.supports(wm, "_NET_ACTIVE_WINDOW") {
		if err := c.clientMessage(c.Screen.Root, w, "_NET_ACTIVE_WINDOW", 2, xproto.TimeCurrentTime, 0); err != nil {
			return OpResult{}, err
		}
		return OpResult{Method: "_NET_ACTIVE_WINDOW", WM: wm.Name}, c.Sync(ctx)
	}
	if err := c.restore(w); err != nil {
		return OpResult{}, err
	}
	if err := xproto.ConfigureWindowChecked(c.X, w, xproto.ConfigWindowStackMode, []uint32{xproto.StackModeAbove}).Check(); err != nil {
		return OpResult{}, fmt.Errorf("raise window %#x on %s: %w", id, c.Name, err)
	}
	if err := xproto.SetInputFocusChecked(c.X, xproto.InputFocusParent, w, xproto.TimeCurrentTime).Check(); err != nil {
		return OpResult{}, fmt.Errorf("focus window %#x on %s (is it mapped?): %w", id, c.Name, err)
	}
	return OpResult{Method: "SetInputFocus", WM: wm.Name}, nil
}

// restore maps a window acu minimized (no window manager) and marks it
// normal again.
func (c *Conn) restore(w xproto.Window) error {
	a, err := xproto.GetWindowAttributes(c.X, w).Reply()
	if err != nil {
		return fmt.Errorf("window %#x on %s: %w", w, c.Name, ErrNoWindow)
	}
	if a.MapState != xproto.MapStateUnmapped {
		return nil
	}
	if err := c.setWMState(w, 1); err != nil {
		return err
	}
	if err := xproto.MapWindowChecked(c.X, w).Check(); err != nil {
		return fmt.Errorf("map window %#x on %s: %w", w, c.Name, err)
	}
	return nil
}

func (c *Conn) setWMState(w xproto.Window, state uint32) error {
	a, err := c.Atom("WM_STATE")
	if err != nil {
		return err
	}
	buf := []byte{byte(state), byte(state >> 8), byte(state >> 16), byte(state >> 24), 0, 0, 0, 0}
	if err := xproto.ChangePropertyChecked(c.X, xproto.PropModeReplace, w, a, a, 32, 2, buf).Check(); err != nil {
		return fmt.Errorf("set WM_STATE of window %#x on %s: %w", w, c.Name, err)
	}
	return nil
}

// CloseOptions configure Close.
type CloseOptions struct {
	// Kill disconnects the window's client (KillClient) when it is still
	// there after Grace, or at once when it cannot be asked politely.
	Kill  bool
	Grace time.Duration // default 2s
}

// CloseWindow asks the window to close: _NET_CLOSE_WINDOW through a window
// manager, else WM_DELETE_WINDOW when the client speaks it. With Kill, a
// window still there after the grace period (or one that cannot be asked)
// has its client disconnected with KillClient.
func (c *Conn) CloseWindow(ctx context.Context, id uint32, opts CloseOptions) (OpResult, error) {
	wm, err := c.prepare(ctx, id)
	if err != nil {
		return OpResult{}, err
	}
	if opts.Grace <= 0 {
		opts.Grace = 2 * time.Second
	}
	w := xproto.Window(id)
	res := OpResult{WM: wm.Name}
	switch {
	case c.supports(wm, "_NET_CLOSE_WINDOW"):
		res.Method = "_NET_CLOSE_WINDOW"
		err = c.clientMessage(c.Screen.Root, w, "_NET_CLOSE_WINDOW", xproto.TimeCurrentTime, 2)
	case c.speaksDelete(w):
		res.Method = "WM_DELETE_WINDOW"
		var del xproto.Atom
		if del, err = c.Atom("WM_DELETE_WINDOW"); err == nil {
			err = c.clientMessage(w, w, "WM_PROTOCOLS", uint32(del), xproto.TimeCurrentTime)
		}
	case !opts.Kill:
		return OpResult{}, fmt.Errorf("close window %#x on %s: %w and no window manager runs: close it with kill", id, c.Name, ErrNoDelete)
	}
	if err != nil {
		return OpResult{}, err
	}
	if !opts.Kill {
		return res, c.Sync(ctx)
	}
	if res.Method != "" && c.waitGone(ctx, w, opts.Grace) {
		return res, nil
	}
	if err := xproto.KillClientChecked(c.X, uint32(id)).Check(); err != nil {
		if c.exists(id) != nil {
			return res, nil // it went away just now
		}
		return OpResult{}, fmt.Errorf("kill the client of window %#x on %s: %w", id, c.Name, err)
	}
	res.Method = "KillClient"
	return res, c.Sync(ctx)
}

func (c *Conn) speaksDelete(w xproto.Window) bool {
	at, err := c.atoms4("WM_PROTOCOLS", "WM_DELETE_WINDOW")
	if err != nil {
		return false
	}
	for _, a := range c.atomList(w, at[0]) {
		if a == at[1] {
			return true
		}
	}
	return false
}

// waitGone polls until w is destroyed or grace (or ctx) ends.
func (c *Conn) waitGone(ctx context.Context, w xproto.Window, grace time.Duration) bool {
	t := time.NewTimer(grace)
	defer t.Stop()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		if c.exists(uint32(w)) != nil {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return false
		case <-tick.C:
		}
	}
}

// Geometry changes a window's client area in root coordinates; a nil field
// is left as it is.
type Geometry struct {
	X, Y, W, H *int
}

// MoveResize moves and/or resizes the window's client area:
// _NET_MOVERESIZE_WINDOW (x, y are the client area's) when
// a window manager supports it, else ConfigureWindow.
func (c *Conn) MoveResize(ctx context.Context, id uint32, g Geometry) (OpResult, error) {
	wm, err := c.prepare(ctx, id)
	if err != nil {
		return OpResult{}, err
	}
	w := xproto.Window(id)
	// X positions a window by its border's outer corner; callers give the
	// client area's (as Windows reports it).
	if geo, err := xproto.GetGeometry(c.X, xproto.Drawable(w)).Reply(); err == nil && geo.BorderWidth > 0 {
		bw := int(geo.BorderWidth)
		if g.X != nil {
			x := *g.X - bw
			g.X = &x
		}
		if g.Y != nil {
			y := *g.Y - bw
			g.Y = &y
		}
	}
	if c.supports(wm, "_NET_MOVERESIZE_WINDOW") {
		// North-west gravity places the frame's corner at x, y: shift by the
		// frame's left and top extents so the client area lands there.
		if ext, err := c.Atom("_NET_FRAME_EXTENTS"); err == nil {
			if e := c.cardinals(w, ext); len(e) == 4 {
				if g.X != nil {
					x := *g.X - int(e[0])
					g.X = &x
				}
				if g.Y != nil {
					y := *g.Y - int(e[2])
					g.Y = &y
				}
			}
		}
		const northWestGravity, source = 1, 2
		flags := uint32(northWestGravity | source<<12)
		var d [4]uint32
		for i, v := range []*int{g.X, g.Y, g.W, g.H} {
			if v != nil {
				flags |= 1 << (8 + i)
				d[i] = uint32(int32(*v))
			}
		}
		if err := c.clientMessage(c.Screen.Root, w, "_NET_MOVERESIZE_WINDOW", flags, d[0], d[1], d[2], d[3]); err != nil {
			return OpResult{}, err
		}
		return OpResult{Method: "_NET_MOVERESIZE_WINDOW", WM: wm.Name}, c.Sync(ctx)
	}
	var mask uint16
	var vals []uint32
	for i, v := range []*int{g.X, g.Y, g.W, g.H} {
		if v != nil {
			mask |= []uint16{xproto.ConfigWindowX, xproto.ConfigWindowY, xproto.ConfigWindowWidth, xproto.ConfigWindowHeight}[i]
			vals = append(vals, uint32(int32(*v)))
		}
	}
	if err := xproto.ConfigureWindowChecked(c.X, w, mask, vals).Check(); err != nil {
		return OpResult{}, fmt.Errorf("configure window %#x on %s: %w", id, c.Name, err)
	}
	return OpResult{Method: "ConfigureWindow", WM: wm.Name}, nil
}

// Minimize iconifies the window: WM_CHANGE_STATE to the window manager, or
// without one, UnmapWindow with WM_STATE set to iconic (acu plays the
// window manager's part, so WindowStates still lists it and Focus restores
// it).
func (c *Conn) Minimize(ctx context.Context, id uint32) (OpResult, error) {
	wm, err := c.prepare(ctx, id)
	if err != nil {
		return OpResult{}, err
	}
	w := xproto.Window(id)
	if wm.Running {
		if err := c.clientMessage(c.Screen.Root, w, "WM_CHANGE_STATE", iconicState); err != nil {
			return OpResult{}, err
		}
		return OpResult{Method: "WM_CHANGE_STATE", WM: wm.Name}, c.Sync(ctx)
	}
	if err := c.setWMState(w, iconicState); err != nil {
		return OpResult{}, err
	}
	if err := xproto.UnmapWindowChecked(c.X, w).Check(); err != nil {
		return OpResult{}, fmt.Errorf("unmap window %#x on %s: %w", id, c.Name, err)
	}
	return OpResult{Method: "UnmapWindow"}, nil
}

// Maximize maximizes the window: _NET_WM_STATE add MAXIMIZED_VERT and
// MAXIMIZED_HORZ through a window manager, else configure it to cover the
// screen.
func (c *Conn) Maximize(ctx context.Context, id uint32) (OpResult, error) {
	wm, err := c.prepare(ctx, id)
	if err != nil {
		return OpResult{}, err
	}
	w := xproto.Window(id)
	if c.supports(wm, "_NET_WM_STATE") {
		at, err := c.atoms4("_NET_WM_STATE_MAXIMIZED_VERT", "_NET_WM_STATE_MAXIMIZED_HORZ")
		if err != nil {
			return OpResult{}, err
		}
		const add, source = 1, 2
		if err := c.clientMessage(c.Screen.Root, w, "_NET_WM_STATE", add, uint32(at[0]), uint32(at[1]), source); err != nil {
			return OpResult{}, err
		}
		return OpResult{Method: "_NET_WM_STATE", WM: wm.Name}, c.Sync(ctx)
	}
	if err := c.restore(w); err != nil {
		return OpResult{}, err
	}
	mask := uint16(xproto.ConfigWindowX | xproto.ConfigWindowY | xproto.ConfigWindowWidth | xproto.ConfigWindowHeight | xproto.ConfigWindowBorderWidth)
	if err := xproto.ConfigureWindowChecked(c.X, w, mask, []uint32{0, 0, uint32(c.Screen.Width), uint32(c.Screen.Height), 0}).Check(); err != nil {
		return OpResult{}, fmt.Errorf("configure window %#x on %s: %w", id, c.Name, err)
	}
	return OpResult{Method: "ConfigureWindow", WM: wm.Name}, nil
}

// Pointer is where the pointer is.
type Pointer struct {
	X, Y    int    // root coordinates, pixels
	Window  uint32 // the client window under it; 0 for the root
	Buttons []int  // buttons held, 1..5
}

// QueryPointer reads the pointer's position, the client window under it and
// the buttons held.
func (c *Conn) QueryPointer(ctx context.Context) (Pointer, error) {
	if err := ctx.Err(); err != nil {
		return Pointer{}, err
	}
	r, err := xproto.QueryPointer(c.X, c.Screen.Root).Reply()
	if err != nil {
		return Pointer{}, fmt.Errorf("query the pointer on %s: %w", c.Name, err)
	}
	p := Pointer{X: int(r.RootX), Y: int(r.RootY), Buttons: []int{}}
	for i := range 5 {
		if r.Mask&(xproto.KeyButMaskButton1<<i) != 0 {
			p.Buttons = append(p.Buttons, i+1)
		}
	}
	if r.Child != 0 {
		wmState, err := c.Atom("WM_STATE")
		if err != nil {
			return Pointer{}, err
		}
		if id := c.findClient(r.Child, wmState, 4); id != 0 {
			p.Window = uint32(id)
		} else {
			p.Window = uint32(r.Child)
		}
	}
	return p, nil
}
