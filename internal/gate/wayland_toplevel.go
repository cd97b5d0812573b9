package gate

import (
	"context"
	"errors"
	"fmt"
	"image"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/launch"
	"github.com/acu-dev/acu/internal/wayland/toplevel"
)

// A wlroots compositor without sway's IPC (phoc, wayfire, labwc, …) gives
// its windows through wlr-foreign-toplevel-management alone: titles, app
// ids and states, activate, close, maximize and minimize, and no
// geometry. This file is the gate's window backend there: the window
// list, window operations, where keyboard input lands (the activated
// toplevel) and launches' wait for a window. Where pointer input lands
// cannot be known; with a deny-list set, pointer effects are refused
// (windowAt), since acu cannot prove they miss a denied window.

// wmToplevel is the window list's wm on a compositor known only through
// the toplevel protocol.
const wmToplevel = "wlr-foreign-toplevel"

// noGeometryNote is the window list's note there.
const noGeometryNote = "this compositor gives no window geometry (wlr-foreign-toplevel-management has none and it offers no sway IPC): x, y, w and h are 0; focus, close and maximize or minimize (where the compositor honours them) work, move and resize do not, and window targets cannot be captured (docs/wayland.md)"

// topWindows lists the compositor's toplevels through the display's
// toplevel manager, opening it on first use.
func (w *wlConn) topWindows(ctx context.Context) ([]toplevel.Window, error) {
	w.topMu.Lock()
	defer w.topMu.Unlock()
	return w.topWindowsLocked(ctx)
}

func (w *wlConn) topWindowsLocked(ctx context.Context) ([]toplevel.Window, error) {
	if w.top == nil {
		m, err := toplevel.Open(ctx, w.path, w.name, w.ipc)
		if err != nil {
			return nil, &Error{Kind: Unavailable, Field: "display", Err: err,
				Message: fmt.Sprintf("Wayland display %s has no sway IPC and no window list acu can read: %v", w.name, err)}
		}
		w.top = m
	}
	return w.top.Windows(ctx)
}

// topWindow is a toplevel as the gate's window: the id is the toplevel
// handle's id on acu's connection, class and instance its app id, no
// rectangle.
func topWindow(t toplevel.Window) display.WindowState {
	return display.WindowState{Window: display.Window{ID: t.ID, Title: t.Title, Class: t.AppID, Instance: t.AppID, Mapped: !t.Minimized},
		Desktop: -1, Focused: t.Activated, Minimized: t.Minimized, Maximized: t.Maximized}
}

// topByID returns the toplevel whose handle id is id.
func (w *wlConn) topByID(ctx context.Context, id uint32) (toplevel.Window, bool, error) {
	ws, err := w.topWindows(ctx)
	if err != nil {
		return toplevel.Window{}, false, err
	}
	for _, t := range ws {
		if t.ID == id {
			return t, true, nil
		}
	}
	return toplevel.Window{}, false, nil
}

// topFocused is where keyboard input lands: the activated toplevel.
func (w *wlConn) topFocused(ctx context.Context) (*display.Window, error) {
	ws, err := w.topWindows(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range ws {
		if t.Activated {
			win := topWindow(t).Window
			return &win, nil
		}
	}
	return nil, nil
}

// topWindowAt is where pointer input lands, which the toplevel protocol
// cannot say: nil (no known window) when no deny-list is set; with one,
// a refusal, because acu cannot show the point misses every denied
// window.
func (w *wlConn) topWindowAt(p image.Point) (*display.Window, error) {
	if !w.deny {
		return nil, nil
	}
	return nil, &Refused{Code: api.CodeWindowDenied, Message: fmt.Sprintf(
		"acu cannot tell which window is at (%d,%d) on %s: this compositor gives no window geometry (no sway IPC), and a deny-list is set (ACU_ACT_DENY), so pointer input is refused here rather than risk a denied window (keyboard input, which lands in the activated window, is checked and allowed); to click on this display, set ACU_ACT_DENY= (empty) for the daemon, accepting that acu cannot keep pointer input out of any window there (docs/wayland.md)",
		p.X, p.Y, w.name)}
}

func (s *Gate) topWindowList(ctx context.Context, c *conn, dpy string) (api.WindowList, error) {
	ws, err := c.wl.topWindows(ctx)
	if err != nil {
		return api.WindowList{}, err
	}
	out := api.WindowList{Display: dpy, WM: wmToplevel, Note: noGeometryNote, Windows: make([]api.Window, 0, len(ws))}
	for _, t := range ws {
		if s.excl.Excludes(t.Title, t.AppID, t.AppID) {
			continue // ACU_EXCLUDE_WINDOWS: never listed
		}
		out.Windows = append(out.Windows, toAPI(topWindow(t)))
	}
	return out, nil
}

// topWindowOp runs a window operation through the toplevel protocol:
// focus (activate), close, maximize and minimize; move and resize are a
// 409 saying the compositor has no way to do it.
func (s *Gate) topWindowOp(ctx context.Context, c *conn, dpy, id string, wid uint32, op string) (api.WindowOpResult, error) {
	if op == api.WindowMove || op == api.WindowResize {
		return api.WindowOpResult{}, &Error{Kind: Conflict, Field: "op", Err: toplevel.ErrUnsupported,
			Message: fmt.Sprintf("%s is not available on %s: this compositor offers no protocol to place a window (wlr-foreign-toplevel-management has no geometry) and no sway IPC", op, dpy)}
	}
	start := s.opts.Now()
	err := func() error {
		c.wl.topMu.Lock()
		defer c.wl.topMu.Unlock()
		ws, err := c.wl.topWindowsLocked(ctx)
		if err != nil {
			return err
		}
		for _, t := range ws {
			if t.ID != wid {
				continue
			}
			switch op {
			case api.WindowFocus:
				return c.wl.top.Activate(ctx, t)
			case api.WindowClose:
				return c.wl.top.CloseWindow(ctx, t)
			case api.WindowMaximize:
				return c.wl.top.Maximize(ctx, t)
			case api.WindowMinimize:
				return c.wl.top.Minimize(ctx, t)
			}
			return invalid("op", "unknown window operation %q", op)
		}
		return display.ErrNoWindow
	}()
	if errors.Is(err, display.ErrNoWindow) || errors.Is(err, toplevel.ErrClosed) {
		return api.WindowOpResult{}, &Error{Kind: NotFound, Field: "id", Err: err,
			Message: fmt.Sprintf("no window %s on %s: list windows with GET /v1/windows (on this compositor a window's id is its toplevel handle's)", id, dpy)}
	}
	if errors.Is(err, toplevel.ErrUnsupported) {
		return api.WindowOpResult{}, &Error{Kind: Conflict, Field: "op", Err: err,
			Message: fmt.Sprintf("%v: %s is not available on this compositor", err, op)}
	}
	if err != nil {
		return api.WindowOpResult{}, fmt.Errorf("%s window %s on %s: %w", op, id, dpy, err)
	}
	s.audit(ctx, AuditEvent{Display: dpy, Effect: "window:" + op, Window: id, Took: s.opts.Now().Sub(start)})
	method := map[string]string{api.WindowFocus: "activate", api.WindowClose: "close",
		api.WindowMaximize: "set_maximized", api.WindowMinimize: "set_minimized"}[op]
	out := api.WindowOpResult{Op: op, Method: "wlr-foreign-toplevel:" + method, WM: wmToplevel}
	if t, ok, err := c.wl.topByID(ctx, wid); err == nil && ok && !s.excl.Excludes(t.Title, t.AppID, t.AppID) {
		w := toAPI(topWindow(t))
		out.Window = &w
	}
	return out, nil
}

// topIDs are the handle ids of the toplevels listed now.
func (w *wlConn) topIDs(ctx context.Context) (map[int64]bool, error) {
	ws, err := w.topWindows(ctx)
	if err != nil {
		return nil, err
	}
	ids := map[int64]bool{}
	for _, t := range ws {
		ids[int64(t.ID)] = true
	}
	return ids, nil
}

// topWaitWindow polls the toplevel list for a new window: the protocol
// gives no process id, so it is the first new one.
func topWaitWindow(ctx context.Context, w *wlConn, before map[int64]bool, p *launch.Process, timeout time.Duration) (*api.Window, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ws, err := w.topWindows(ctx)
		if err != nil && ctx.Err() == nil {
			return nil, err
		}
		for _, t := range ws {
			if !before[int64(t.ID)] {
				a := toAPI(topWindow(t))
				return &a, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("process %d started but no new window appeared within %s: list windows later, or raise timeout", p.PID, timeout)
		case <-tick.C:
		}
	}
}

// toplevelOnly reports whether w's windows come from the toplevel
// protocol alone: a wlroots compositor without sway's IPC (GNOME's mutter
// offers neither, and answers errGnomeWindows).
func (w *wlConn) toplevelOnly() bool { return w.ipc == "" && w.gnome == nil }
