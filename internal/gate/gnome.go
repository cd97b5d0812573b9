package gate

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/wayland"
	"github.com/acu-dev/acu/internal/wayland/portal"
	"github.com/acu-dev/acu/internal/wayland/virtual"
)

// gnomeConn is the GNOME backend of a Wayland display: mutter offers no
// wlroots input protocol, so input goes through a remote-desktop session
// of mutter's own D-Bus API on the session bus (internal/wayland/portal),
// opened on first use and shared by the display's devices (they drive
// one seat). mutter gives no window list or window operations to clients:
// those answer that they are not available on GNOME.
type gnomeConn struct {
	dpy string
	bus string // the session bus mutter's RemoteDesktop is on; "" none known

	mu   sync.Mutex
	sess *portal.Session

	ordMu sync.Mutex
	ord   *gnomeOrderer // the ordering proof's screen cast (gnome_order.go)
}

// IsMutter reports whether a compositor with these globals is GNOME's
// mutter as the gate tells it: no zwlr_virtual_pointer_manager_v1 (a
// compositor offering it is driven through wlroots' protocols), and
// gtk_shell1, which only mutter advertises.
func IsMutter(globals []wayland.Global) bool {
	gtk := false
	for _, g := range globals {
		switch g.Interface {
		case "zwlr_virtual_pointer_manager_v1":
			return false
		case "gtk_shell1":
			gtk = true
		}
	}
	return gtk
}

// gnomeOf returns the GNOME backend of display dpy when its compositor
// (by its globals) is mutter, else nil. The session bus is the daemon's
// DBUS_SESSION_BUS_ADDRESS (Options.Env).
func (s *Gate) gnomeOf(dpy string, globals []wayland.Global) *gnomeConn {
	if !IsMutter(globals) {
		return nil
	}
	g := &gnomeConn{dpy: dpy}
	for _, kv := range s.opts.Env {
		if v, ok := strings.CutPrefix(kv, "DBUS_SESSION_BUS_ADDRESS="); ok {
			g.bus = v
		}
	}
	return g
}

// session opens (once) the remote-desktop session on mutter.
func (g *gnomeConn) session(ctx context.Context) (*portal.Session, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.sess != nil {
		return g.sess, nil
	}
	if g.bus == "" {
		return nil, &Error{Kind: Unavailable, Field: "display",
			Message: fmt.Sprintf("%s is GNOME's mutter, which acu drives through mutter's RemoteDesktop on the GNOME session's D-Bus bus, and the daemon has no DBUS_SESSION_BUS_ADDRESS: start the daemon inside the GNOME session, or with DBUS_SESSION_BUS_ADDRESS set to that session's bus (docs/wayland.md, \"GNOME and KDE\")", g.dpy)}
	}
	octx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	sess, err := portal.Open(octx, g.bus, "")
	if err != nil {
		return nil, &Error{Kind: Unavailable, Field: "display", Err: err,
			Message: fmt.Sprintf("%s is GNOME's mutter, and its remote desktop on the bus %s cannot be opened: %v", g.dpy, g.bus, err)}
	}
	g.sess = sess
	return sess, nil
}

func (g *gnomeConn) close() {
	g.ordMu.Lock()
	if g.ord != nil {
		g.ord.close()
		g.ord = nil
	}
	g.ordMu.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.sess != nil {
		g.sess.Close()
		g.sess = nil
	}
}

// clipboard reads the clipboard's text through mutter's remote desktop
// (SelectionRead).
func (g *gnomeConn) clipboard(ctx context.Context) (string, error) {
	sess, err := g.session(ctx)
	if err != nil {
		return "", err
	}
	return sess.Clipboard(ctx)
}

// setClipboard makes acu's session the clipboard's owner with text
// (SetSelection; it serves each paste while it owns it).
func (g *gnomeConn) setClipboard(ctx context.Context, text string) error {
	sess, err := g.session(ctx)
	if err != nil {
		return err
	}
	return sess.SetClipboard(ctx, text)
}

// idleWatch is the user-first watch of a GNOME display: mutter's idle
// monitor, acu's own input bracketed on its remote-desktop session.
func (g *gnomeConn) idleWatch(ctx context.Context) (*portal.IdleWatch, error) {
	sess, err := g.session(ctx)
	if err != nil {
		return nil, err
	}
	return sess.IdleWatch(ctx)
}

// errGnomeWindows is the answer of window lists and operations on GNOME.
func errGnomeWindows(dpy string) error {
	return &Error{Kind: Unavailable, Field: "display",
		Message: fmt.Sprintf("window lists and window operations are not available on GNOME: %s is mutter, which gives no window list or window operations to other programs (org.gnome.Shell.Introspect is reserved to GNOME's own components); act by pixels, and use screenshots to find windows (docs/wayland.md, \"GNOME and KDE\")", dpy)}
}

// gnomeInput is mutter's remote-desktop session with the surface of the
// wlroots virtual devices that wlDevice drives (pixels of the monitor),
// so a GNOME display's device is a wlDevice: the same clamping, click
// counts, drag paths, held keys and seat (where acu last put the pointer).
type gnomeInput struct {
	s    *portal.Session
	w, h int
}

func (g *gnomeInput) Move(ctx context.Context, x, y int) error {
	return g.s.Move(ctx, float64(x), float64(y))
}

func (g *gnomeInput) Button(ctx context.Context, button int, down bool) error {
	return g.s.Button(ctx, button, down)
}

func (g *gnomeInput) pressOrRelease(ctx context.Context, x, y, button int, down bool) error {
	if err := g.Move(ctx, x, y); err != nil {
		return err
	}
	return g.s.Button(ctx, button, down)
}

func (g *gnomeInput) Press(ctx context.Context, x, y, button int) error {
	return g.pressOrRelease(ctx, x, y, button, true)
}

func (g *gnomeInput) Release(ctx context.Context, x, y, button int) error {
	return g.pressOrRelease(ctx, x, y, button, false)
}

func (g *gnomeInput) Scroll(ctx context.Context, dx, dy int) error { return g.s.Scroll(ctx, dx, dy) }

func (g *gnomeInput) Type(ctx context.Context, text string) error {
	if err := portal.CheckText(text); err != nil {
		return err
	}
	return g.s.Type(ctx, text)
}

func (g *gnomeInput) KeyHold(ctx context.Context, keys string, hold time.Duration) error {
	return g.s.KeyHold(ctx, keys, hold)
}

func (g *gnomeInput) ModsDown(ctx context.Context, mods string) error { return g.s.ModsDown(ctx, mods) }
func (g *gnomeInput) ModsUp(ctx context.Context) error                { return g.s.ModsUp(ctx) }
func (g *gnomeInput) Size() (int, int)                                { return g.w, g.h }
func (g *gnomeInput) Sync(ctx context.Context) error                  { return g.s.Settled(ctx) }

// CheckText: any character but a control one; what the session's layout
// lacks is pasted (portal.Session.Type).
func (g *gnomeInput) CheckText(text string) error { return portal.CheckText(text) }

// Close leaves the session open: it is the display's (gnomeConn), shared
// by its devices.
func (g *gnomeInput) Close() error { return nil }

// wlInput is what wlDevice drives: wlroots' virtual pointer and keyboard
// (*virtual.Device) or mutter's remote desktop (gnomeInput).
type wlInput interface {
	Move(ctx context.Context, x, y int) error
	Button(ctx context.Context, button int, down bool) error
	Press(ctx context.Context, x, y, button int) error
	Release(ctx context.Context, x, y, button int) error
	Scroll(ctx context.Context, dx, dy int) error
	Type(ctx context.Context, text string) error
	KeyHold(ctx context.Context, keys string, hold time.Duration) error
	ModsDown(ctx context.Context, mods string) error
	ModsUp(ctx context.Context) error
	Size() (int, int)
	Sync(ctx context.Context) error
	Close() error
}

// openInput opens the display's input: mutter's remote-desktop session on
// GNOME, else a wlroots virtual pointer and keyboard.
func (w *wlConn) openInput(ctx context.Context) (wlInput, error) {
	if w.gnome != nil {
		s, err := w.gnome.session(ctx)
		if err != nil {
			return nil, err
		}
		return &gnomeInput{s: s, w: w.w, h: w.h}, nil
	}
	v, err := virtual.Open(ctx, w.path, w.name)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// unknownWindow is the landing of input on GNOME, where mutter tells no
// client which window is where or has the focus: nothing to check without
// a deny-list; with one (ACU_ACT_DENY) the input is refused, since it could
// land in a denied window.
func (w *wlConn) unknownWindow(what string) error {
	if !w.deny {
		return nil
	}
	return &Refused{Code: api.CodeWindowDenied, Message: fmt.Sprintf(
		"acu cannot tell which window %s input would reach on %s: GNOME's mutter tells no client its windows, and a deny-list is set (ACU_ACT_DENY; its default lists password managers), so input is refused here rather than risk a denied window; to act on this display, set ACU_ACT_DENY= (empty) for the daemon, accepting that acu cannot keep input out of any window there (docs/wayland.md, \"GNOME and KDE\")",
		what, w.name)}
}
