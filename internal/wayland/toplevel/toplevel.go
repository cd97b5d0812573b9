// Package toplevel lists and operates a wlroots compositor's windows
// through wlr-foreign-toplevel-management-unstable-v1: titles, app ids and
// states, activate, close, maximize and minimize. The protocol gives no
// geometry; on sway, each window's rectangle comes from sway's IPC tree,
// matched by title and app id, and moving and resizing goes through it.
//
// A Manager owns its own connection and is used by one goroutine at a
// time. It does not apply the deny-list or audit: the gate does, above it.
package toplevel

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"strings"

	"github.com/acu-dev/acu/internal/wayland"
	"github.com/acu-dev/acu/internal/wayland/sway"
)

// Window is one toplevel as the compositor last described it.
type Window struct {
	ID         uint32 // the handle's object id on this Manager's connection
	Title      string
	AppID      string
	Activated  bool
	Maximized  bool
	Minimized  bool
	Fullscreen bool
	// Rect is the window on screen with its decorations, from sway's IPC;
	// empty when the compositor gives none.
	Rect image.Rectangle

	swayID int64 // sway's con_id, 0 when not matched
}

// ErrUnsupported is returned for an operation the compositor has no
// protocol for (move and resize without sway's IPC).
var ErrUnsupported = errors.New("the compositor offers no way to do this")

// Manager watches one compositor's toplevels.
type Manager struct {
	conn    *wayland.Conn
	display string
	ipc     string
	seat    uint32
	handles map[uint32]*handle
	order   []uint32 // handles in the order the compositor announced them
}

type handle struct {
	cur, next Window
	done      bool // described at least once
}

// ErrClosed is returned for a window that has closed.
var ErrClosed = errors.New("the window has closed")

// Open connects to the compositor whose socket is at path. ipc is sway's
// IPC socket (SWAYSOCK) for window rectangles, empty for none. display
// names the display in errors (path when empty).
func Open(ctx context.Context, path, display, ipc string) (*Manager, error) {
	if display == "" {
		display = path
	}
	conn, err := wayland.Dial(ctx, path)
	if err != nil {
		return nil, err
	}
	m := &Manager{conn: conn, display: display, ipc: ipc, handles: map[uint32]*handle{}}
	if err := m.setup(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("windows on %s: %w", display, err)
	}
	return m, nil
}

func (m *Manager) setup(ctx context.Context) error {
	g, ok := m.conn.Global("zwlr_foreign_toplevel_manager_v1")
	if !ok {
		return fmt.Errorf("the compositor offers no zwlr_foreign_toplevel_manager_v1 (see docs/wayland.md)")
	}
	seat, err := wayland.BindSeat(m.conn)
	if err != nil {
		return err
	}
	m.seat = seat
	if _, _, err := m.conn.Bind(g, 3, m.onManager); err != nil {
		return err
	}
	return m.conn.Roundtrip(ctx)
}

func (m *Manager) onManager(ev *wayland.Event) {
	if ev.Opcode != wayland.ToplevelManagerEvToplevel {
		return
	}
	id := ev.Uint()
	h := &handle{}
	m.handles[id] = h
	m.order = append(m.order, id)
	m.conn.Adopt(id, "zwlr_foreign_toplevel_handle_v1", func(ev *wayland.Event) { m.onHandle(id, h, ev) })
}

func (m *Manager) onHandle(id uint32, h *handle, ev *wayland.Event) {
	switch ev.Opcode {
	case wayland.ToplevelEvTitle:
		h.next.Title = ev.String()
	case wayland.ToplevelEvAppID:
		h.next.AppID = ev.String()
	case wayland.ToplevelEvState:
		b := ev.Array()
		h.next.Activated, h.next.Maximized, h.next.Minimized, h.next.Fullscreen = false, false, false, false
		for i := 0; i+4 <= len(b); i += 4 {
			switch binary.LittleEndian.Uint32(b[i:]) {
			case wayland.ToplevelStateActivated:
				h.next.Activated = true
			case wayland.ToplevelStateMaximized:
				h.next.Maximized = true
			case wayland.ToplevelStateMinimized:
				h.next.Minimized = true
			case wayland.ToplevelStateFullscreen:
				h.next.Fullscreen = true
			}
		}
	case wayland.ToplevelEvDone:
		h.cur, h.done = h.next, true
		h.cur.ID = id
	case wayland.ToplevelEvClosed:
		_ = m.conn.Request(id, wayland.ToplevelReqDestroy)
		m.conn.Forget(id)
		delete(m.handles, id)
		for i, o := range m.order {
			if o == id {
				m.order = append(m.order[:i], m.order[i+1:]...)
				break
			}
		}
	}
}

// Close closes the connection.
func (m *Manager) Close() error { return m.conn.Close() }

// Windows returns the compositor's toplevels as they are now, with their
// rectangles where sway's IPC gives them.
func (m *Manager) Windows(ctx context.Context) ([]Window, error) {
	if err := m.conn.Roundtrip(ctx); err != nil {
		return nil, fmt.Errorf("windows on %s: %w", m.display, err)
	}
	var out []Window
	for _, id := range m.order {
		if h := m.handles[id]; h.done {
			out = append(out, h.cur)
		}
	}
	if m.ipc != "" {
		nodes, err := sway.Windows(ctx, m.ipc)
		if err != nil {
			return nil, fmt.Errorf("windows on %s: %w", m.display, err)
		}
		used := make([]bool, len(nodes))
		for i := range out {
			for j, n := range nodes {
				if !used[j] && n.Name == out[i].Title && n.AppID == out[i].AppID {
					out[i].Rect, out[i].swayID, used[j] = n.Rect, n.ID, true
					break
				}
			}
		}
	}
	return out, nil
}

func (m *Manager) request(ctx context.Context, w Window, what string, op uint16, args ...any) error {
	if _, ok := m.handles[w.ID]; !ok {
		return fmt.Errorf("%s window %q on %s: %w", what, w.Title, m.display, ErrClosed)
	}
	if err := m.conn.Request(w.ID, op, args...); err != nil {
		return fmt.Errorf("%s window %q on %s: %w", what, w.Title, m.display, err)
	}
	if err := m.conn.Roundtrip(ctx); err != nil {
		return fmt.Errorf("%s window %q on %s: %w", what, w.Title, m.display, err)
	}
	return nil
}

// Activate raises and focuses w on the seat.
func (m *Manager) Activate(ctx context.Context, w Window) error {
	return m.request(ctx, w, "activate", wayland.ToplevelReqActivate, m.seat)
}

// CloseWindow asks w to close (the app may ask the user first).
func (m *Manager) CloseWindow(ctx context.Context, w Window) error {
	return m.request(ctx, w, "close", wayland.ToplevelReqClose)
}

// MoveResize places w, decorations included, at r (floating it on sway,
// a tiling compositor). It needs sway's IPC: the toplevel protocol has no
// geometry, so elsewhere it is ErrUnsupported.
func (m *Manager) MoveResize(ctx context.Context, w Window, r image.Rectangle) error {
	if m.ipc == "" {
		return fmt.Errorf("move window %q on %s: %w (moving and resizing needs sway's IPC)", w.Title, m.display, ErrUnsupported)
	}
	if w.swayID == 0 {
		return fmt.Errorf("move window %q on %s: sway's tree has no window of that title and app id", w.Title, m.display)
	}
	if err := sway.MoveResize(ctx, m.ipc, w.swayID, r); err != nil {
		return fmt.Errorf("move window %q on %s: %w", w.Title, m.display, err)
	}
	return nil
}

// Find picks the one window q names: titles containing q
// (case-insensitively), the exact title first; else an app id equal to q.
// When q names several, they are returned as ambiguous; when it names
// none, ok is false and ambiguous empty.
func Find(ws []Window, q string) (match Window, ambiguous []Window, ok bool) {
	lq := strings.ToLower(q)
	var subs, exact, apps []Window
	for _, w := range ws {
		title := strings.ToLower(w.Title)
		if strings.Contains(title, lq) {
			subs = append(subs, w)
			if title == lq {
				exact = append(exact, w)
			}
		}
		if strings.EqualFold(w.AppID, q) {
			apps = append(apps, w)
		}
	}
	for _, set := range [][]Window{exact, subs, apps} {
		switch {
		case len(set) == 1:
			return set[0], nil, true
		case len(set) > 1:
			return Window{}, set, false
		}
	}
	return Window{}, nil, false
}
