package display

import (
	"context"
	"fmt"
	"image"
	"strings"
	"unicode/utf8"

	"github.com/jezek/xgb/xproto"
)

// Window is a top-level client window.
type Window struct {
	ID       uint32
	Title    string // _NET_WM_NAME (UTF-8), else WM_NAME
	Class    string // WM_CLASS class ("XTerm")
	Instance string // WM_CLASS instance ("xterm")
	// X, Y, W, H is the client area in root coordinates.
	X, Y, W, H int
	Mapped     bool
}

// Rect returns the window's rectangle in root coordinates.
func (w Window) Rect() image.Rectangle { return image.Rect(w.X, w.Y, w.X+w.W, w.Y+w.H) }

// IDString formats the id as X tools do, "0x1a00003".
func (w Window) IDString() string { return fmt.Sprintf("%#x", w.ID) }

// Windows lists the top-level client windows, bottom to top where the
// stacking order is known. It uses _NET_CLIENT_LIST when a window manager
// sets it, and otherwise walks the window tree: mapped children of the root
// and, for reparented clients, the descendant carrying WM_STATE, WM_NAME or
// WM_CLASS. Windows without a title and class are left out.
func (c *Conn) Windows(ctx context.Context) ([]Window, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ids, err := c.clientList()
	if err != nil {
		return nil, err
	}
	walked := false
	if len(ids) == 0 {
		walked = true
		if ids, err = c.walk(); err != nil {
			return nil, err
		}
	}
	ws, err := c.describe(ids)
	if err != nil {
		return nil, err
	}
	out := ws[:0]
	for _, w := range ws {
		if w.ID == 0 || (w.Title == "" && w.Class == "") || (walked && !w.Mapped) {
			continue
		}
		out = append(out, w)
	}
	return out, nil
}

// Window describes one window by id; ok is false when it no longer exists.
// Capture uses it to follow a window that moves.
func (c *Conn) Window(ctx context.Context, id uint32) (w Window, ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return Window{}, false, err
	}
	ws, err := c.describe([]xproto.Window{xproto.Window(id)})
	if err != nil {
		return Window{}, false, err
	}
	return ws[0], ws[0].ID != 0, nil
}

func (c *Conn) clientList() ([]xproto.Window, error) {
	for _, name := range []string{"_NET_CLIENT_LIST_STACKING", "_NET_CLIENT_LIST"} {
		a, err := c.Atom(name)
		if err != nil {
			return nil, err
		}
		r, err := xproto.GetProperty(c.X, false, c.Screen.Root, a, xproto.AtomWindow, 0, 1<<16).Reply()
		if err != nil {
			return nil, fmt.Errorf("read %s on %s: %w", name, c.Name, err)
		}
		if r.Format == 32 && r.ValueLen > 0 {
			ids := make([]xproto.Window, r.ValueLen)
			for i := range ids {
				ids[i] = xproto.Window(le32(r.Value[i*4:]))
			}
			return ids, nil
		}
	}
	return nil, nil
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// walk finds client windows under the root where no window manager keeps
// _NET_CLIENT_LIST.
func (c *Conn) walk() ([]xproto.Window, error) {
	tree, err := xproto.QueryTree(c.X, c.Screen.Root).Reply()
	if err != nil {
		return nil, fmt.Errorf("list windows on %s: %w", c.Name, err)
	}
	attrs := make([]xproto.GetWindowAttributesCookie, len(tree.Children))
	for i, ch := range tree.Children {
		attrs[i] = xproto.GetWindowAttributes(c.X, ch)
	}
	var tops []xproto.Window
	for i, ck := range attrs {
		a, err := ck.Reply()
		if err != nil || a.MapState != xproto.MapStateViewable || a.OverrideRedirect || a.Class != xproto.WindowClassInputOutput {
			continue
		}
		tops = append(tops, tree.Children[i])
	}
	wmState, err := c.Atom("WM_STATE")
	if err != nil {
		return nil, err
	}
	// Most top-level windows are clients themselves (no window manager):
	// check them all in one pipelined batch, descend only into the rest.
	props := make([]xproto.ListPropertiesCookie, len(tops))
	for i, top := range tops {
		props[i] = xproto.ListProperties(c.X, top)
	}
	out := make([]xproto.Window, 0, len(tops))
	for i, top := range tops {
		r, err := props[i].Reply()
		if err != nil {
			continue
		}
		if isClient(r.Atoms, wmState) {
			out = append(out, top)
		} else if id := c.findClient(top, wmState, 3); id != 0 {
			out = append(out, id)
		}
	}
	return out, nil
}

func isClient(atoms []xproto.Atom, wmState xproto.Atom) bool {
	for _, a := range atoms {
		if a == wmState || a == xproto.AtomWmName || a == xproto.AtomWmClass {
			return true
		}
	}
	return false
}

// findClient returns w when it carries client properties, else the first
// descendant (to depth) that does.
func (c *Conn) findClient(w xproto.Window, wmState xproto.Atom, depth int) xproto.Window {
	props, err := xproto.ListProperties(c.X, w).Reply()
	if err != nil {
		return 0
	}
	if isClient(props.Atoms, wmState) {
		return w
	}
	if depth <= 1 {
		return 0
	}
	tree, err := xproto.QueryTree(c.X, w).Reply()
	if err != nil {
		return 0
	}
	for i := len(tree.Children) - 1; i >= 0; i-- {
		if id := c.findClient(tree.Children[i], wmState, depth-1); id != 0 {
			return id
		}
	}
	return 0
}

// describe reads title, class, geometry and map state of each window in one
// pipelined batch. A window that is gone comes back with ID 0.
func (c *Conn) describe(ids []xproto.Window) ([]Window, error) {
	at, err := c.atoms4("_NET_WM_NAME", "UTF8_STRING")
	if err != nil {
		return nil, err
	}
	netName, utf8String := at[0], at[1]
	type cookies struct {
		net, name, class xproto.GetPropertyCookie
		geom             xproto.GetGeometryCookie
		tr               xproto.TranslateCoordinatesCookie
		attr             xproto.GetWindowAttributesCookie
	}
	cs := make([]cookies, len(ids))
	for i, id := range ids {
		cs[i] = cookies{
			net:   xproto.GetProperty(c.X, false, id, netName, utf8String, 0, 1024),
			name:  xproto.GetProperty(c.X, false, id, xproto.AtomWmName, xproto.GetPropertyTypeAny, 0, 1024),
			class: xproto.GetProperty(c.X, false, id, xproto.AtomWmClass, xproto.AtomString, 0, 1024),
			geom:  xproto.GetGeometry(c.X, xproto.Drawable(id)),
			tr:    xproto.TranslateCoordinates(c.X, id, c.Screen.Root, 0, 0),
			attr:  xproto.GetWindowAttributes(c.X, id),
		}
	}
	out := make([]Window, len(ids))
	for i, id := range ids {
		w := Window{ID: uint32(id)}
		ok := true
		if r, err := cs[i].net.Reply(); err == nil && len(r.Value) > 0 {
			w.Title = strings.ToValidUTF8(string(r.Value), "\uFFFD")
		}
		if r, err := cs[i].name.Reply(); err == nil && len(r.Value) > 0 && w.Title == "" {
			w.Title = latin1(r.Value)
		}
		if r, err := cs[i].class.Reply(); err == nil && len(r.Value) > 0 {
			parts := strings.Split(strings.TrimRight(string(r.Value), "\x00"), "\x00")
			w.Instance = parts[0]
			if len(parts) > 1 {
				w.Class = parts[1]
			}
		}
		if g, err := cs[i].geom.Reply(); err == nil {
			w.W, w.H = int(g.Width), int(g.Height)
		} else {
			ok = false
		}
		if t, err := cs[i].tr.Reply(); err == nil {
			w.X, w.Y = int(t.DstX), int(t.DstY)
		} else {
			ok = false
		}
		if a, err := cs[i].attr.Reply(); err == nil {
			w.Mapped = a.MapState == xproto.MapStateViewable
		} else {
			ok = false
		}
		if ok {
			out[i] = w
		}
	}
	return out, nil
}

// latin1 decodes WM_NAME's STRING type; valid UTF-8 (as many clients
// actually write) is kept as is.
func latin1(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	rs := make([]rune, len(b))
	for i, c := range b {
		rs[i] = rune(c)
	}
	return string(rs)
}

// TopLevelAt describes the top-level client window on top at p (root
// coordinates), asking the server which child of the root holds p (one
// round trip, then the client's properties) instead of listing every
// window. ok is false when no client window is found there: the root, or
// a window that carries no client properties (an override-redirect menu
// or tooltip); callers that must know then list the windows.
func (c *Conn) TopLevelAt(ctx context.Context, p image.Point) (w Window, ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return Window{}, false, err
	}
	r, err := xproto.TranslateCoordinates(c.X, c.Screen.Root, c.Screen.Root, int16(p.X), int16(p.Y)).Reply()
	if err != nil {
		return Window{}, false, fmt.Errorf("find the window at %d,%d on %s: %w", p.X, p.Y, c.Name, err)
	}
	if r.Child == 0 {
		return Window{}, false, nil
	}
	wmState, err := c.Atom("WM_STATE")
	if err != nil {
		return Window{}, false, err
	}
	client := c.findClient(r.Child, wmState, 3)
	if client == 0 {
		return Window{}, false, nil
	}
	ws, err := c.describe([]xproto.Window{client})
	if err != nil || ws[0].ID == 0 || !ws[0].Mapped {
		return Window{}, false, err
	}
	return ws[0], true, nil
}
