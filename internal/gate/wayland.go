package gate

import (
	"context"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/clipboard"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/launch"
	"github.com/acu-dev/acu/internal/wayland"
	"github.com/acu-dev/acu/internal/wayland/datacontrol"
	"github.com/acu-dev/acu/internal/wayland/idle"
	"github.com/acu-dev/acu/internal/wayland/portal"
	"github.com/acu-dev/acu/internal/wayland/sway"
	"github.com/acu-dev/acu/internal/wayland/toplevel"
)

// IsWayland reports whether dpy names a Wayland display (a socket path
// or wayland-N) rather than an X11 one (sway.IsName draws the line).
func IsWayland(dpy string) bool { return sway.IsName(dpy) }

// errNoX is the error of an X11-only part asked of a Wayland display.
func errNoX(dpy, what string) error {
	return &Error{Kind: Unavailable, Field: "display",
		Message: fmt.Sprintf("%s is a Wayland display and %s needs X11: acu does not offer it on Wayland yet (docs/wayland.md)", dpy, what)}
}

// wlConn is the gate's state of one Wayland display: where its sockets
// are and the parts opened on first use (the input device is conn.dev,
// as on X11). Each part owns its own Wayland connection.
type wlConn struct {
	name, path string
	ipc        string // sway's IPC socket (SWAYSOCK) beside the Wayland socket; "" none: windows from the toplevel protocol (wayland_toplevel.go)
	deny       bool   // a deny-list is set: pointer input where no window can be found is refused
	w, h       int    // the output's size in pixels
	log        *slog.Logger
	seat       wlSeat // the cursor, as acu's devices left it

	clipMu sync.Mutex
	clip   *datacontrol.Clipboard

	topMu sync.Mutex
	top   *toplevel.Manager

	ordMu sync.Mutex
	ord   *wlOrderer

	gnome *gnomeConn // GNOME's mutter (gnome.go); nil on a wlroots compositor
}

// wlConnect returns the state of Wayland display dpy, opening it (and
// reading its output's size) on first use or after its socket went away.
func (s *Gate) wlConnect(ctx context.Context, dpy string) (*conn, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.conns[dpy]; ok {
		if c.wl.alive() {
			return c, dpy, nil
		}
		c.close()
		delete(s.conns, dpy)
	}
	path, err := wayland.SocketPath(dpy, s.opts.RuntimeDir)
	if err != nil {
		return nil, "", invalid("display", "%s", err.Error())
	}
	wc, err := wayland.Dial(ctx, path)
	if err != nil {
		return nil, "", &Error{Kind: Unavailable, Field: "display", Err: err,
			Message: fmt.Sprintf("Wayland display %s cannot be reached: %v: is its compositor running (acu display list)?", dpy, err)}
	}
	outs, err := wayland.BindOutputs(ctx, wc)
	wc.Close()
	if err == nil && len(outs) == 0 {
		err = errors.New("the compositor has no output")
	}
	if err != nil {
		return nil, "", &Error{Kind: Unavailable, Field: "display", Err: err, Message: fmt.Sprintf("Wayland display %s: %v", dpy, err)}
	}
	wl := &wlConn{name: dpy, path: path, w: outs[0].Width, h: outs[0].Height, log: s.log.With("display", dpy), deny: len(s.opts.Policy.Deny) > 0}
	wl.gnome = s.gnomeOf(dpy, wc.Globals())
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "sway-ipc.*.sock")); len(m) > 0 {
		wl.ipc = m[0]
	}
	c := &conn{wl: wl}
	s.conns[dpy] = c
	s.log.Info("wayland display opened for acting", "display", dpy, "socket", path, "sway_ipc", wl.ipc)
	return c, dpy, nil
}

func (w *wlConn) alive() bool {
	_, err := os.Stat(w.path)
	return err == nil
}

func (w *wlConn) close() {
	if w.gnome != nil {
		w.gnome.close()
	}
	w.clipMu.Lock()
	if w.clip != nil {
		w.clip.Close()
		w.clip = nil
	}
	w.clipMu.Unlock()
	w.topMu.Lock()
	if w.top != nil {
		w.top.Close()
		w.top = nil
	}
	w.topMu.Unlock()
	w.ordMu.Lock()
	if w.ord != nil {
		w.ord.close()
		w.ord = nil
	}
	w.ordMu.Unlock()
}

// screen is the display's size in pixels.
func (c *conn) screen() (int, int) {
	if c.wl != nil {
		return c.wl.w, c.wl.h
	}
	return c.c.Screen.Width, c.c.Screen.Height
}

// ScreenSize returns the size in pixels of dpy's screen (the default
// display when empty): X11's root window, a Wayland compositor's first
// output.
func (s *Gate) ScreenSize(ctx context.Context, dpy string) (int, int, error) {
	c, _, err := s.conn(ctx, dpy)
	if err != nil {
		return 0, 0, err
	}
	w, h := c.screen()
	return w, h, nil
}

// WindowAt returns the top-level window at screen pixel p on the hands'
// display, or nil: the X server's answer on X11, sway's tree on Wayland.
func (h *Hands) WindowAt(ctx context.Context, p image.Point) (*display.Window, error) {
	return h.c.windowAt(ctx, p)
}

func (c *conn) windowAt(ctx context.Context, p image.Point) (*display.Window, error) {
	if c.wl == nil {
		return WindowAt(ctx, c.c, p)
	}
	if c.wl.gnome != nil {
		return nil, c.wl.unknownWindow("pointer") // mutter tells no client its windows (gnome.go)
	}
	if c.wl.ipc == "" {
		return c.wl.topWindowAt(p)
	}
	ns, err := c.wl.nodes(ctx)
	if err != nil {
		return nil, err
	}
	// Tiled windows come first in sway's tree and floating ones after, so
	// the last one containing p is the one on top.
	for i := len(ns) - 1; i >= 0; i-- {
		if ns[i].Visible && p.In(ns[i].Rect) {
			w := nodeWindow(ns[i]).Window
			return &w, nil
		}
	}
	return nil, nil
}

func (c *conn) focused(ctx context.Context) (*display.Window, error) {
	if c.wl == nil {
		return FocusedWindow(ctx, c.c)
	}
	if c.wl.gnome != nil {
		return nil, c.wl.unknownWindow("keyboard")
	}
	if c.wl.ipc == "" {
		return c.wl.topFocused(ctx)
	}
	ns, err := c.wl.nodes(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range ns {
		if n.Focused {
			w := nodeWindow(n).Window
			return &w, nil
		}
	}
	return nil, nil
}

// window returns window id: an X window, or on Wayland a sway con_id.
func (c *conn) window(ctx context.Context, id uint32) (display.Window, bool, error) {
	if c.wl == nil {
		return c.c.Window(ctx, id)
	}
	if c.wl.toplevelOnly() {
		t, ok, err := c.wl.topByID(ctx, id)
		return topWindow(t).Window, ok, err
	}
	n, ok, err := c.wl.node(ctx, id)
	return nodeWindow(n).Window, ok, err
}

// nodes are the windows of sway's tree.
func (w *wlConn) nodes(ctx context.Context) ([]sway.Node, error) {
	if w.gnome != nil {
		return nil, errGnomeWindows(w.name)
	}
	if w.ipc == "" {
		return nil, &Error{Kind: Unavailable, Field: "display",
			Message: fmt.Sprintf("Wayland display %s has no sway IPC socket beside its Wayland socket: acu finds windows (where input lands, window operations) through sway's IPC, which this compositor does not offer", w.name)}
	}
	ns, err := sway.Windows(ctx, w.ipc)
	if err != nil {
		return nil, fmt.Errorf("windows on %s: %w", w.name, err)
	}
	return ns, nil
}

func (w *wlConn) node(ctx context.Context, id uint32) (sway.Node, bool, error) {
	ns, err := w.nodes(ctx)
	if err != nil {
		return sway.Node{}, false, err
	}
	for _, n := range ns {
		if n.ID == int64(id) {
			return n, true, nil
		}
	}
	return sway.Node{}, false, nil
}

// nodeWindow is sway's window as the gate's: the id is sway's con_id,
// the class and instance its app_id, the rectangle its client area.
func nodeWindow(n sway.Node) display.WindowState {
	return display.WindowState{Window: display.Window{ID: uint32(n.ID), Title: n.Name, Class: n.AppID, Instance: n.AppID,
		X: n.Content.Min.X, Y: n.Content.Min.Y, W: n.Content.Dx(), H: n.Content.Dy(), Mapped: n.Visible},
		PID: n.PID, Desktop: -1, Focused: n.Focused}
}

func (s *Gate) wlWindows(ctx context.Context, c *conn, dpy string) (api.WindowList, error) {
	if c.wl.toplevelOnly() {
		return s.topWindowList(ctx, c, dpy)
	}
	ns, err := c.wl.nodes(ctx)
	if err != nil {
		return api.WindowList{}, err
	}
	out := api.WindowList{Display: dpy, WM: "sway", Windows: make([]api.Window, 0, len(ns))}
	for _, n := range ns {
		if s.excl.Excludes(n.Name, n.AppID, n.AppID) {
			continue // ACU_EXCLUDE_WINDOWS: never listed
		}
		out.Windows = append(out.Windows, toAPI(nodeWindow(n)))
	}
	return out, nil
}

// wlWindowOp runs a window operation on Wayland: focus, close, move and
// resize through sway's IPC, maximize and minimize through
// wlr-foreign-toplevel-management.
func (s *Gate) wlWindowOp(ctx context.Context, c *conn, dpy, id string, wid uint32, op string, req api.WindowOp) (api.WindowOpResult, error) {
	if req.Kill || req.Grace != nil {
		field := "kill"
		if !req.Kill {
			field = "grace"
		}
		return api.WindowOpResult{}, invalid(field, "%s is X11's: on Wayland close asks the app through the compositor (it may ask the user first); send close without kill and grace", field)
	}
	if c.wl.toplevelOnly() {
		return s.topWindowOp(ctx, c, dpy, id, wid, op)
	}
	n, ok, err := c.wl.node(ctx, wid)
	if err != nil {
		return api.WindowOpResult{}, err
	}
	if !ok {
		return api.WindowOpResult{}, &Error{Kind: NotFound, Field: "id", Err: display.ErrNoWindow,
			Message: fmt.Sprintf("no window %s on %s: list windows with GET /v1/windows (on Wayland a window's id is sway's con_id)", id, dpy)}
	}
	start := s.opts.Now()
	method := "sway:" + op
	switch op {
	case api.WindowFocus:
		err = sway.Command(ctx, c.wl.ipc, fmt.Sprintf("[con_id=%d] focus", n.ID))
	case api.WindowClose:
		method = "sway:kill"
		err = sway.Command(ctx, c.wl.ipc, fmt.Sprintf("[con_id=%d] kill", n.ID))
	case api.WindowMove, api.WindowResize:
		err = c.wl.place(ctx, n, op, req)
	case api.WindowMaximize, api.WindowMinimize:
		method = "wlr-foreign-toplevel:set_" + op + "d"
		err = c.wl.toplevelState(ctx, n, op)
	}
	if errors.Is(err, display.ErrNoWindow) || errors.Is(err, toplevel.ErrClosed) {
		return api.WindowOpResult{}, &Error{Kind: NotFound, Field: "id", Err: err,
			Message: fmt.Sprintf("window %s on %s has closed: list windows with GET /v1/windows", id, dpy)}
	}
	if errors.Is(err, toplevel.ErrUnsupported) {
		return api.WindowOpResult{}, &Error{Kind: Conflict, Field: "op", Err: err,
			Message: fmt.Sprintf("%v: %s is not available on this compositor", err, op)}
	}
	if err != nil {
		return api.WindowOpResult{}, fmt.Errorf("%s window %s on %s: %w", op, id, dpy, err)
	}
	s.audit(ctx, AuditEvent{Display: dpy, Effect: "window:" + op, Window: id, Took: s.opts.Now().Sub(start)})
	out := api.WindowOpResult{Op: op, Method: method, WM: "sway"}
	if n, ok, err := c.wl.node(ctx, wid); err == nil && ok && !s.excl.Excludes(n.Name, n.AppID, n.AppID) {
		w := toAPI(nodeWindow(n))
		out.Window = &w
	}
	return out, nil
}

// place moves (the client area's top-left to x, y) or resizes (the client
// area to w x h) window n: sway floats it first (a tiling compositor
// places only floating windows), then places it, decorations included,
// so that its client area is where asked.
func (w *wlConn) place(ctx context.Context, n sway.Node, op string, req api.WindowOp) error {
	if err := sway.Command(ctx, w.ipc, fmt.Sprintf("[con_id=%d] floating enable", n.ID)); err != nil {
		return err
	}
	n, ok, err := w.node(ctx, uint32(n.ID)) // floating changes its decorations
	if err != nil {
		return err
	}
	if !ok {
		return display.ErrNoWindow
	}
	r := n.Rect
	if op == api.WindowMove {
		r = r.Add(image.Pt(*req.X-n.Content.Min.X, *req.Y-n.Content.Min.Y))
	} else {
		r.Max = r.Min.Add(image.Pt(*req.W+n.Rect.Dx()-n.Content.Dx(), *req.H+n.Rect.Dy()-n.Content.Dy()))
	}
	// sway's tree says the new place at once, but the window is shown (and
	// takes input) there only once its app has drawn at the new size and
	// sway applied the change: wait for the repaint there, so input sent
	// next lands where the window list says it is.
	o, oErr := w.orderer(ctx)
	since := time.Now()
	if err := sway.MoveResize(ctx, w.ipc, n.ID, r); err != nil {
		return err
	}
	if oErr != nil {
		w.log.Debug("no screencopy to wait for the moved window's repaint", "err", oErr)
		return nil
	}
	if !o.waitRepaint(ctx, r, since, placeRepaint) {
		w.log.Debug("the moved window did not repaint at its new place", "window", n.Name, "within", placeRepaint)
	}
	return ctx.Err()
}

// placeRepaint bounds the wait for a moved or resized window's repaint
// (sway applies a change its client does not answer after 200 ms).
const placeRepaint = time.Second

// toplevelState maximizes or minimizes n through the toplevel protocol.
func (w *wlConn) toplevelState(ctx context.Context, n sway.Node, op string) error {
	w.topMu.Lock()
	defer w.topMu.Unlock()
	if w.top == nil {
		m, err := toplevel.Open(ctx, w.path, w.name, w.ipc)
		if err != nil {
			return err
		}
		w.top = m
	}
	ws, err := w.top.Windows(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(ws, func(t toplevel.Window) bool { return t.SwayID() == n.ID })
	if i < 0 {
		return fmt.Errorf("the compositor lists no toplevel for sway's window %d (%q)", n.ID, n.Name)
	}
	if op == api.WindowMaximize {
		return w.top.Maximize(ctx, ws[i])
	}
	return w.top.Minimize(ctx, ws[i])
}

func (s *Gate) wlPointer(ctx context.Context, c *conn, dpy string) (api.Pointer, error) {
	if err := s.input(ctx, c); err != nil {
		return api.Pointer{}, err
	}
	p, err := c.dev.Pointer(ctx)
	if err != nil {
		return api.Pointer{}, err
	}
	area := Area{W: c.wl.w, H: c.wl.h}
	nx, ny := area.ToNorm(p.X, p.Y)
	out := api.Pointer{Display: dpy, X: p.X, Y: p.Y, NX: nx, NY: ny, Buttons: []int{}}
	mask := c.dev.ButtonsDown()
	for b := 1; b <= 9; b++ {
		if mask&(1<<(7+b)) != 0 {
			out.Buttons = append(out.Buttons, b)
		}
	}
	if w, err := c.windowAt(ctx, p); err == nil && w != nil {
		out.Window = w.IDString()
	}
	return out, nil
}

// wlClipboard returns the display's clipboard, opening it on first use.
func (s *Gate) wlClipboard(ctx context.Context, dpy, sel, mime string) (*conn, *datacontrol.Clipboard, string, error) {
	c, dpy, err := s.conn(ctx, dpy)
	if err != nil {
		return nil, nil, "", err
	}
	if sel != api.SelectionClipboard {
		return nil, nil, "", invalid("selection", "on Wayland acu reads and writes the clipboard selection only, not %s", sel)
	}
	if mime != clipboard.Text {
		return nil, nil, "", invalid("type", "on Wayland acu reads and writes text only, not %s", mime)
	}
	if c.wl.gnome != nil {
		return c, nil, dpy, nil // mutter's remote-desktop clipboard (gnome.go)
	}
	c.wl.clipMu.Lock()
	defer c.wl.clipMu.Unlock()
	if c.wl.clip == nil {
		cb, err := datacontrol.Open(ctx, c.wl.path, dpy)
		if err != nil {
			return nil, nil, "", &Error{Kind: Unavailable, Field: "display", Err: err, Message: err.Error()}
		}
		c.wl.clip = cb
	}
	return c, c.wl.clip, dpy, nil
}

func (s *Gate) wlGetClipboard(ctx context.Context, dpy, sel, mime string) (api.Clipboard, error) {
	c, cb, dpy, err := s.wlClipboard(ctx, dpy, sel, mime)
	if err != nil {
		return api.Clipboard{}, err
	}
	var text string
	if c.wl.gnome != nil {
		text, err = c.wl.gnome.clipboard(ctx)
	} else {
		text, err = cb.Read(ctx)
	}
	if errors.Is(err, datacontrol.ErrEmpty) || errors.Is(err, portal.ErrNoText) {
		return api.Clipboard{}, &Error{Kind: NotFound, Field: "type", Err: err,
			Message: fmt.Sprintf("the clipboard on %s holds no text: it is empty or holds another type", dpy)}
	}
	if err != nil {
		return api.Clipboard{}, err
	}
	return api.Clipboard{Display: dpy, Selection: sel, Text: text}, nil
}

func (s *Gate) wlSetClipboard(ctx context.Context, dpy, sel string, content clipboard.Content) (api.Clipboard, error) {
	c, cb, dpy, err := s.wlClipboard(ctx, dpy, sel, content.MIME)
	if err != nil {
		return api.Clipboard{}, err
	}
	if err := s.allowEffect(ctx, dpy, "clipboard"); err != nil {
		return api.Clipboard{}, err
	}
	if c.wl.gnome != nil {
		err = c.wl.gnome.setClipboard(ctx, string(content.Data))
	} else {
		err = cb.Write(ctx, string(content.Data))
	}
	if err != nil {
		return api.Clipboard{}, err
	}
	s.audit(ctx, AuditEvent{Display: dpy, Effect: "clipboard", Window: sel})
	return api.Clipboard{Display: dpy, Selection: sel}, nil
}

// wlLaunch starts a program on a Wayland display: WAYLAND_DISPLAY is the
// socket's path, XDG_RUNTIME_DIR the directory holding it (and SWAYSOCK
// sway's IPC socket), DISPLAY is unset so toolkits pick Wayland; with
// wait_window it waits for the program's new toplevel in sway's tree.
func (s *Gate) wlLaunch(ctx context.Context, c *conn, dpy string, req api.LaunchRequest, out api.LaunchResult) (api.LaunchResult, error) {
	var before map[int64]bool
	if req.WaitWindow && c.wl.toplevelOnly() {
		ids, err := c.wl.topIDs(ctx)
		if err != nil {
			return api.LaunchResult{}, err
		}
		before = ids
	} else if req.WaitWindow {
		ns, err := c.wl.nodes(ctx)
		if err != nil {
			return api.LaunchResult{}, err
		}
		before = map[int64]bool{}
		for _, n := range ns {
			before[n.ID] = true
		}
	}
	var env []string
	for _, kv := range launch.Env(s.opts.Env, dpy, "", s.opts.EnvAllow) {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "DISPLAY", "XDG_RUNTIME_DIR", "SWAYSOCK":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "WAYLAND_DISPLAY="+c.wl.path, "XDG_RUNTIME_DIR="+filepath.Dir(c.wl.path))
	if c.wl.ipc != "" {
		env = append(env, "SWAYSOCK="+c.wl.ipc)
	}
	wait := wlWaitWindow
	if c.wl.toplevelOnly() {
		wait = topWaitWindow
	}
	return s.startLaunch(ctx, dpy, req, out, env, func(ctx context.Context, p *launch.Process, timeout time.Duration) (*api.Window, error) {
		return wait(ctx, c.wl, before, p, timeout)
	})
}

// wlWaitWindow polls sway's tree for a new window: the process's own, or
// else the first new one (a launcher may hand over to another process).
func wlWaitWindow(ctx context.Context, w *wlConn, before map[int64]bool, p *launch.Process, timeout time.Duration) (*api.Window, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ns, err := w.nodes(ctx)
		if err != nil && ctx.Err() == nil {
			return nil, err
		}
		var first *api.Window
		for _, n := range ns {
			if before[n.ID] {
				continue
			}
			a := toAPI(nodeWindow(n))
			if n.PID == p.PID {
				return &a, nil
			}
			if first == nil {
				first = &a
			}
		}
		if first != nil {
			return first, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("process %d started but opened no window within %s: list windows later, or raise timeout", p.PID, timeout)
		case <-p.Done():
			p = &launch.Process{PID: p.PID}
		case <-tick.C:
		}
	}
}

// wlInput opens the display's virtual pointer and keyboard on first use,
// and its user-first check.
func (g *Gate) wlInput(ctx context.Context, c *conn) error {
	io := g.opts.Input
	io.Logger = g.log.With("component", "input")
	dev, err := c.wl.device(ctx, Area{W: c.wl.w, H: c.wl.h}, io)
	if err != nil {
		return err
	}
	c.dev = dev
	u := &wlUser{dpy: c.wl.name, log: g.log, pause: g.opts.Policy.PauseOnUser, now: g.opts.Now,
		hold: &holdReader{path: HoldFile(c.wl.path)}}
	if u.pause {
		// The user's input as the compositor's idle protocol reports it,
		// acu's own bracketed out; a compositor without one leaves the
		// check unavailable (logged once by check).
		var w idleWatch
		var err error
		if c.wl.gnome != nil {
			w, err = c.wl.gnome.idleWatch(ctx)
		} else {
			w, err = idle.OpenWithLogger(ctx, c.wl.path, c.wl.name, g.log.With("component", "idle"))
		}
		if err != nil {
			g.log.Info("no user watch on this Wayland display", "display", c.wl.name, "err", err)
		} else {
			u.watch = w
		}
	}
	c.user = u
	return nil
}

// idleWatch is the compositor's record of the user's input
// (internal/wayland/idle's Watch, from the idle-notify protocol): acu's
// own input is bracketed by Begin and End so it is not the user's.
// BeginFlushed opens the bracket and brings LastUser up to date in one
// round trip to the compositor, returning it; its cancel ends a bracket
// in which nothing was sent.
type idleWatch interface {
	Begin()
	BeginFlushed(ctx context.Context) (last time.Time, cancel func(), err error)
	End()
	LastUser() time.Time
	Close() error
}

// wlUser is the user-first check of a Wayland display: a take-over's
// hold (HoldFile) refuses while it is in force, as on X11; then the
// compositor's idle watch when one is open; without it, the check is not
// available on the display, which is logged once, and nothing else is
// refused.
type wlUser struct {
	dpy   string
	log   *slog.Logger
	pause bool
	hold  *holdReader
	watch idleWatch // nil: none
	now   func() time.Time
	once  sync.Once
}

func (u *wlUser) check(ctx context.Context, quiet time.Duration) error {
	if err := u.precheck(quiet); err != nil || u.watch == nil {
		return err
	}
	// A watch that can says when it has read every input the compositor
	// took so far, so LastUser is up to date.
	if f, ok := u.watch.(interface{ Flush(context.Context) error }); ok {
		if err := f.Flush(ctx); err != nil {
			return err
		}
	}
	return u.quiet(u.watch.LastUser(), quiet)
}

// checkBegin is check, then begin when it passes, in the one round trip
// of the watch's BeginFlushed: the marker that opens the bracket of
// acu's input also tells that every input the compositor took before has
// been read. A refusal ends the bracket at once (nothing was sent in it).
func (u *wlUser) checkBegin(ctx context.Context, quiet time.Duration) error {
	if err := u.precheck(quiet); err != nil || u.watch == nil {
		return err
	}
	last, cancel, err := u.watch.BeginFlushed(ctx)
	if err != nil {
		return err
	}
	if err := u.quiet(last, quiet); err != nil {
		cancel()
		return err
	}
	return nil
}

// precheck is what check decides before the watch: a take-over's hold
// refuses; without a watch nothing does (logged once).
func (u *wlUser) precheck(quiet time.Duration) error {
	if u.hold != nil {
		now := u.clock()
		if h, held, err := u.hold.read(now); err != nil {
			return err
		} else if held {
			return &Refused{Code: api.CodeUserActive, ActiveFor: now.Sub(h.Since), RetryAfter: quiet,
				Message: fmt.Sprintf("the user has taken this display over (%s): acu waits until the take-over ends", HoldDetail(h))}
		}
	}
	if u.watch == nil && u.pause {
		u.once.Do(func() {
			u.log.Warn("the user-first check is not available on this Wayland display: acu acts without pausing for the user's input (ACU_ACT_PAUSE_ON_INPUT)", "display", u.dpy)
		})
	}
	return nil
}

// quiet refuses when last, the user's last input (zero: none), is within
// quiet of now.
func (u *wlUser) quiet(last time.Time, quiet time.Duration) error {
	now := u.clock()
	if last.IsZero() {
		return nil
	}
	if still := now.Sub(last); still < quiet {
		return &Refused{Code: api.CodeUserActive, RetryAfter: quiet - still,
			Message: fmt.Sprintf("the user is using this display (input %s ago): acu does not fight the human for the pointer; retry after the user has been still for %s",
				still.Round(time.Millisecond), quiet)}
	}
	return nil
}

func (u *wlUser) clock() time.Time {
	if u.now != nil {
		return u.now()
	}
	return time.Now()
}

func (u *wlUser) begin() {
	if u.watch != nil {
		u.watch.Begin()
	}
}

func (u *wlUser) end(context.Context, uint16) error {
	if u.watch != nil {
		u.watch.End()
	}
	return nil
}

func (u *wlUser) close() {
	if u.watch != nil {
		u.watch.Close()
	}
}
