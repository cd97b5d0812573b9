// Package gate is the one place every effect on the desktop passes: input
// (one XTest device per display), window operations, launches and
// clipboard writes, from every surface and engine. Each effect is checked
// against the policy in one place (ACU_ACT_ENABLED, ACU_ACT_DISPLAYS, the
// deny-list by the window it lands in, the user-first pause, which the
// human at a take-over is exempt from) and audited with its caller, which
// the context carries (WithCaller). It also serves the desktop's reads
// that need no pixels: window lists, the pointer, the clipboard.
//
// It keeps one X connection (and one clipboard owner, one input device)
// per display, opened on first use and reopened when the server restarts,
// and speaks the wire types of internal/api. It sits on internal/display,
// internal/input, internal/clipboard and internal/launch: nothing above it
// imports those (cmd/acu's layering test enforces it).
//
// A Wayland display (IsWayland: a socket path or wayland-N) has no X
// connection: its state (wayland*.go) holds a virtual pointer and
// keyboard behind the same device interface, finds windows in sway's IPC
// tree, and runs window operations through sway and the toplevel
// protocol, the clipboard through data-control, and keeps a take-over's
// hold in a file beside the compositor's socket (hold.go; docs/wayland.md).
package gate

import (
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/clipboard"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/input"
	"github.com/acu-dev/acu/internal/launch"
	"github.com/acu-dev/acu/internal/privacy"
)

// Kind classifies an Error for the HTTP boundary.
type Kind int

// Error kinds.
const (
	Invalid     Kind = iota + 1 // the request is wrong: 400
	NotFound                    // no such window, entry, or clipboard content: 404
	Conflict                    // the window cannot do that now: 409
	TooLarge                    // 413
	Unavailable                 // the display cannot be reached: 503
)

// Error is a failure the client can act on: Message says what to do; Field
// names the request field at fault.
type Error struct {
	Kind    Kind
	Field   string
	Message string
	Err     error
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }

func invalid(field, format string, args ...any) error {
	return &Error{Kind: Invalid, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Options configure a Service.
type Options struct {
	DefaultDisplay string   // for requests naming none
	AppDirs        []string // where desktop entries live (launch.AppDirs)
	Env            []string // the base environment of launched programs; secrets are scrubbed (launch.Env)
	EnvAllow       []string // secret-looking variables passed on all the same (ACU_LAUNCH_ENV_ALLOW)
	AllowRemote    bool     // HOST:N display names (ACU_ALLOW_REMOTE_X)
	// RuntimeDir resolves Wayland names such as "wayland-1"
	// (XDG_RUNTIME_DIR); empty: Wayland displays are named by their
	// socket's absolute path.
	RuntimeDir string
	// Policy says where acu may act; its zero value allows everything.
	Policy Policy
	// Exclude are the windows never shown (ACU_EXCLUDE_WINDOWS): left out
	// of window lists and of what effects answer (privacy's rule).
	Exclude []string
	// Input configures each display's XTest device.
	Input input.Options
	// Audit receives every effect and refusal (besides the log).
	Audit  func(context.Context, AuditEvent)
	Logger *slog.Logger
	Now    func() time.Time
}

// Gate holds each display's connection, device and clipboard owner. It is
// safe for concurrent use; Close it to drop its connections.
type Gate struct {
	opts Options
	log  *slog.Logger
	excl *privacy.Filter

	mu    sync.Mutex
	conns map[string]*conn
}

type conn struct {
	c    *display.Conn // X11; nil on a Wayland display
	wl   *wlConn       // Wayland; nil on an X11 display
	clip *clipboard.Clipboard

	mu   sync.Mutex // one effect at a time on the display
	dev  device
	devs map[DeviceOptions]device // engines' own (HandsFor)
	user userCheck

	ordMu sync.Mutex
	ord   *orderer // opened on the first Order
}

// New returns a Gate; it connects to displays on first use.
func New(opts Options) *Gate {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Policy.Quiet <= 0 {
		opts.Policy.Quiet = DefaultQuiet
	}
	return &Gate{opts: opts, log: opts.Logger, excl: privacy.New(opts.Exclude), conns: map[string]*conn{}}
}

// Policy is the policy the gate applies.
func (s *Gate) Policy() Policy { return s.opts.Policy }

// Close closes every display connection (giving up owned selections).
func (s *Gate) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, c := range s.conns {
		c.close()
		delete(s.conns, name)
	}
}

func (c *conn) close() {
	if c.dev != nil {
		c.dev.Close()
	}
	if c.user != nil {
		c.user.close()
	}
	c.ordMu.Lock()
	if c.ord != nil {
		c.ord.close()
		c.ord = nil
	}
	c.ordMu.Unlock()
	for _, d := range c.devs {
		d.Close()
	}
	if c.clip != nil {
		c.clip.Close()
	}
	if c.wl != nil {
		c.wl.close()
		return
	}
	c.c.Close()
}

// conn returns the live connection to dpy (the default when empty).
func (s *Gate) conn(ctx context.Context, dpy string) (*conn, string, error) {
	if dpy == "" {
		dpy = s.opts.DefaultDisplay
	}
	if dpy == "" {
		return nil, "", invalid("display", "display is required: no default display is configured (DISPLAY)")
	}
	if IsWayland(dpy) {
		return s.wlConnect(ctx, dpy)
	}
	// The one check of display names acu has (the capture hub and
	// display.Open use it too), with its message.
	if _, err := display.ParseName(dpy, s.opts.AllowRemote); err != nil {
		return nil, "", invalid("display", "%s", err.Error())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.conns[dpy]; ok {
		if c.c.Alive() {
			return c, dpy, nil
		}
		c.close()
		delete(s.conns, dpy)
	}
	dc, err := display.Open(ctx, dpy, display.Options{Logger: s.log})
	if err != nil {
		return nil, "", &Error{Kind: Unavailable, Field: "display", Message: err.Error(), Err: err}
	}
	c := &conn{c: dc}
	s.conns[dpy] = c
	return c, dpy, nil
}

// DesktopEntry is a parsed desktop file.
type DesktopEntry = launch.Entry

// ParseDesktopEntry reads a desktop file's [Desktop Entry] group.
func ParseDesktopEntry(r io.Reader, path string) (DesktopEntry, error) { return launch.Parse(r, path) }

// AppDirs are where desktop entries live (launch.AppDirs).
func AppDirs(getenv func(string) string) []string { return launch.AppDirs(getenv) }

// Conn is the live connection to dpy (the default when empty), for reads:
// window lists, geometry, the accessibility bus's address. It is the
// gate's: callers do not close it.
func (s *Gate) Conn(ctx context.Context, dpy string) (*display.Conn, error) {
	c, dpy, err := s.conn(ctx, dpy)
	if err != nil {
		return nil, err
	}
	if c.wl != nil {
		return nil, errNoX(dpy, "this reads the X connection")
	}
	return c.c, nil
}

// recoverX turns a panic in an X call (xgb panics on some malformed
// replies and closed connections) into an error and logs it.
func (s *Gate) recoverX(op string, err *error) {
	if r := recover(); r != nil {
		s.log.Error("desktop operation panicked", "op", op, "panic", fmt.Sprint(r))
		*err = fmt.Errorf("%s: the X connection failed; retry", op)
	}
}

// ParseWindowID reads a window id as X tools print it ("0x1a00003") or in
// decimal.
func ParseWindowID(s string) (uint32, error) {
	v, err := strconv.ParseUint(s, 0, 32)
	if err != nil || v == 0 {
		return 0, invalid("id", "window id must be a number such as 0x1a00003 (see GET /v1/windows), got %q", s)
	}
	return uint32(v), nil
}

func toAPI(w display.WindowState) api.Window {
	return api.Window{ID: w.IDString(), Title: w.Title, Class: w.Class, Instance: w.Instance, PID: w.PID,
		X: w.X, Y: w.Y, W: w.W, H: w.H, Desktop: w.Desktop, Mapped: w.Mapped, Focused: w.Focused,
		Minimized: w.Minimized, Maximized: w.Maximized}
}

// Windows lists the display's top-level windows with their state.
func (s *Gate) Windows(ctx context.Context, dpy string) (_ api.WindowList, err error) {
	defer s.recoverX("Windows", &err)
	c, dpy, err := s.conn(ctx, dpy)
	if err != nil {
		return api.WindowList{}, err
	}
	if c.wl != nil {
		return s.wlWindows(ctx, c, dpy)
	}
	ws, err := c.c.WindowStates(ctx)
	if err != nil {
		return api.WindowList{}, err
	}
	wm, err := c.c.WindowManager(ctx)
	if err != nil {
		return api.WindowList{}, err
	}
	out := api.WindowList{Display: dpy, WM: wm.Name, Windows: make([]api.Window, 0, len(ws))}
	if wm.Running && wm.Name == "" {
		out.WM = "unnamed"
	}
	for _, w := range ws {
		if s.excl.Excludes(w.Title, w.Class, w.Instance) {
			continue // ACU_EXCLUDE_WINDOWS: never listed
		}
		out.Windows = append(out.Windows, toAPI(w))
	}
	return out, nil
}

// WindowOp runs one operation (api.WindowFocus, ...) on window id.
func (s *Gate) WindowOp(ctx context.Context, id, op string, req api.WindowOp) (_ api.WindowOpResult, err error) {
	defer s.recoverX("WindowOp", &err)
	wid, err := ParseWindowID(id)
	if err != nil {
		return api.WindowOpResult{}, err
	}
	if err := checkOpFields(op, req); err != nil {
		return api.WindowOpResult{}, err
	}
	c, dpy, err := s.conn(ctx, req.Display)
	if err != nil {
		return api.WindowOpResult{}, err
	}
	if err := s.allowWindowOp(ctx, c, dpy, wid, op); err != nil {
		return api.WindowOpResult{}, err
	}
	if c.wl != nil {
		return s.wlWindowOp(ctx, c, dpy, id, wid, op, req)
	}
	start := s.opts.Now()
	var res display.OpResult
	switch op {
	case api.WindowFocus:
		res, err = c.c.FocusWindow(ctx, wid)
	case api.WindowClose:
		o := display.CloseOptions{Kill: req.Kill}
		if req.Grace != nil {
			o.Grace = time.Duration(*req.Grace * float64(time.Second))
		}
		res, err = c.c.CloseWindow(ctx, wid, o)
	case api.WindowMove:
		res, err = c.c.MoveResize(ctx, wid, display.Geometry{X: req.X, Y: req.Y})
	case api.WindowResize:
		res, err = c.c.MoveResize(ctx, wid, display.Geometry{W: req.W, H: req.H})
	case api.WindowMinimize:
		res, err = c.c.Minimize(ctx, wid)
	case api.WindowMaximize:
		res, err = c.c.Maximize(ctx, wid)
	}
	switch {
	case errors.Is(err, display.ErrNoWindow):
		return api.WindowOpResult{}, &Error{Kind: NotFound, Field: "id", Err: err,
			Message: fmt.Sprintf("no window %s on %s: list windows with GET /v1/windows", id, c.c.Name)}
	case errors.Is(err, display.ErrNoDelete):
		return api.WindowOpResult{}, &Error{Kind: Conflict, Field: "kill", Err: err,
			Message: fmt.Sprintf("window %s cannot be asked to close (no window manager, no WM_DELETE_WINDOW): send kill: true to disconnect its client", id)}
	case err != nil:
		return api.WindowOpResult{}, err
	}
	s.audit(ctx, AuditEvent{Display: dpy, Effect: "window:" + op, Window: id, Took: s.opts.Now().Sub(start)})
	out := api.WindowOpResult{Op: op, Method: res.Method, WM: res.WM}
	if st, err := c.c.WindowState(ctx, wid); err == nil && !s.excl.Excludes(st.Title, st.Class, st.Instance) {
		w := toAPI(st)
		out.Window = &w
	}
	return out, nil
}

func checkOpFields(op string, r api.WindowOp) error {
	allowed := map[string]bool{}
	switch op {
	case api.WindowFocus, api.WindowMinimize, api.WindowMaximize:
	case api.WindowClose:
		allowed["kill"], allowed["grace"] = true, true
	case api.WindowMove:
		allowed["x"], allowed["y"] = true, true
		if r.X == nil || r.Y == nil {
			return invalid(missing(r.X == nil, "x", "y"), "move needs x and y (pixels of the client area's top-left corner)")
		}
	case api.WindowResize:
		allowed["w"], allowed["h"] = true, true
		if r.W == nil || r.H == nil {
			return invalid(missing(r.W == nil, "w", "h"), "resize needs w and h (pixels)")
		}
		if *r.W < 1 || *r.H < 1 || *r.W > 32767 || *r.H > 32767 {
			return invalid("w", "w and h must be 1..32767 pixels, got %dx%d", *r.W, *r.H)
		}
	default:
		return invalid("op", "op must be one of focus, close, move, resize, minimize, maximize, got %q", op)
	}
	if r.X != nil && (*r.X < -32768 || *r.X > 32767) || r.Y != nil && (*r.Y < -32768 || *r.Y > 32767) {
		return invalid("x", "x and y must be -32768..32767 pixels")
	}
	set := map[string]bool{"x": r.X != nil, "y": r.Y != nil, "w": r.W != nil, "h": r.H != nil, "kill": r.Kill, "grace": r.Grace != nil}
	for _, f := range []string{"x", "y", "w", "h", "kill", "grace"} {
		if set[f] && !allowed[f] {
			return invalid(f, "%s does not take %s", op, f)
		}
	}
	if r.Grace != nil && (*r.Grace <= 0 || *r.Grace > 60 || math.IsNaN(*r.Grace)) {
		return invalid("grace", "grace must be 0..60 seconds, got %v", *r.Grace)
	}
	return nil
}

func missing(first bool, a, b string) string {
	if first {
		return a
	}
	return b
}

// Pointer reads the pointer.
func (s *Gate) Pointer(ctx context.Context, dpy string) (_ api.Pointer, err error) {
	defer s.recoverX("Pointer", &err)
	c, dpy, err := s.conn(ctx, dpy)
	if err != nil {
		return api.Pointer{}, err
	}
	if c.wl != nil {
		return s.wlPointer(ctx, c, dpy)
	}
	p, err := c.c.QueryPointer(ctx)
	if err != nil {
		return api.Pointer{}, err
	}
	area := input.Area{W: c.c.Screen.Width, H: c.c.Screen.Height}
	nx, ny := area.ToNorm(p.X, p.Y)
	out := api.Pointer{Display: dpy, X: p.X, Y: p.Y, NX: nx, NY: ny, Buttons: p.Buttons}
	if p.Window != 0 {
		out.Window = fmt.Sprintf("%#x", p.Window)
	}
	return out, nil
}

func (s *Gate) clip(ctx context.Context, dpy string) (*clipboard.Clipboard, string, error) {
	c, dpy, err := s.conn(ctx, dpy)
	if err != nil {
		return nil, "", err
	}
	if c.wl != nil {
		return nil, "", errNoX(dpy, "the X clipboard")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.clip == nil {
		if c.clip, err = clipboard.New(c.c, s.log); err != nil {
			return nil, "", err
		}
	}
	return c.clip, dpy, nil
}

func selection(v string) (string, error) {
	switch v {
	case "", api.SelectionClipboard:
		return api.SelectionClipboard, nil
	case api.SelectionPrimary:
		return v, nil
	}
	return "", invalid("selection", "selection must be clipboard or primary, got %q", v)
}

// GetClipboard reads a selection as text or image/png.
func (s *Gate) GetClipboard(ctx context.Context, dpy, sel, typ string) (_ api.Clipboard, err error) {
	defer s.recoverX("GetClipboard", &err)
	sel, err = selection(sel)
	if err != nil {
		return api.Clipboard{}, err
	}
	mime := clipboard.Text
	switch typ {
	case "", api.ClipText:
	case api.ClipPNG:
		mime = clipboard.PNG
	default:
		return api.Clipboard{}, invalid("type", "type must be text or image/png, got %q", typ)
	}
	if IsWayland(s.name(dpy)) {
		return s.wlGetClipboard(ctx, dpy, sel, mime)
	}
	cb, dpy, err := s.clip(ctx, dpy)
	if err != nil {
		return api.Clipboard{}, err
	}
	c, err := cb.Get(ctx, sel, mime)
	if errors.Is(err, clipboard.ErrEmpty) {
		return api.Clipboard{}, &Error{Kind: NotFound, Field: "type", Err: err,
			Message: fmt.Sprintf("the %s selection on %s holds no %s: it is empty or holds another type", sel, dpy, mime)}
	}
	if err != nil {
		return api.Clipboard{}, err
	}
	out := api.Clipboard{Display: dpy, Selection: sel}
	if mime == clipboard.PNG {
		out.ImagePNG = c.Data
	} else {
		out.Text = string(c.Data)
	}
	return out, nil
}

var pngMagic = "\x89PNG\r\n\x1a\n"

// SetClipboard makes acu own the selection with the text or PNG image.
func (s *Gate) SetClipboard(ctx context.Context, req api.Clipboard) (_ api.Clipboard, err error) {
	defer s.recoverX("SetClipboard", &err)
	sel, err := selection(req.Selection)
	if err != nil {
		return api.Clipboard{}, err
	}
	var c clipboard.Content
	switch {
	case req.Text != "" && req.ImagePNG != nil:
		return api.Clipboard{}, invalid("image_png", "send text or image_png, not both")
	case req.ImagePNG != nil:
		if !strings.HasPrefix(string(req.ImagePNG), pngMagic) {
			return api.Clipboard{}, invalid("image_png", "image_png must be a base64 PNG file")
		}
		c = clipboard.Content{MIME: clipboard.PNG, Data: req.ImagePNG}
	default:
		c = clipboard.Content{MIME: clipboard.Text, Data: []byte(req.Text)}
	}
	if IsWayland(s.name(req.Display)) {
		return s.wlSetClipboard(ctx, req.Display, sel, c)
	}
	cb, dpy, err := s.clip(ctx, req.Display)
	if err != nil {
		return api.Clipboard{}, err
	}
	if err := s.allowEffect(ctx, dpy, "clipboard"); err != nil {
		return api.Clipboard{}, err
	}
	if err := cb.Set(ctx, sel, c); err != nil {
		if errors.Is(err, clipboard.ErrTooLarge) {
			return api.Clipboard{}, &Error{Kind: TooLarge, Field: "image_png", Message: err.Error(), Err: err}
		}
		if c.MIME == clipboard.Text && strings.Contains(err.Error(), "UTF-8") {
			return api.Clipboard{}, invalid("text", "%s", err.Error())
		}
		return api.Clipboard{}, err
	}
	s.audit(ctx, AuditEvent{Display: dpy, Effect: "clipboard", Window: sel})
	return api.Clipboard{Display: dpy, Selection: sel}, nil
}

// maxWaitWindow bounds wait_window.
const maxWaitWindow = 120.0

// Launch starts a desktop entry or an argv on the display, detached, and
// optionally waits for its first new window.
func (s *Gate) Launch(ctx context.Context, req api.LaunchRequest) (api.LaunchResult, error) {
	return s.LaunchFrom(ctx, s.opts.AppDirs, req)
}

// LaunchFrom is Launch with desktop entries looked up in dirs (an
// engine's own list) instead of Options.AppDirs.
func (s *Gate) LaunchFrom(ctx context.Context, dirs []string, req api.LaunchRequest) (_ api.LaunchResult, err error) {
	defer s.recoverX("Launch", &err)
	if (req.DesktopEntry == "") == (len(req.Argv) == 0) {
		return api.LaunchResult{}, invalid("desktop_entry", "send desktop_entry (a desktop file id or Name) or argv, exactly one")
	}
	if req.Timeout != 0 && (req.Timeout < 0 || req.Timeout > maxWaitWindow || math.IsNaN(req.Timeout)) {
		return api.LaunchResult{}, invalid("timeout", "timeout must be 0..%v seconds, got %v", maxWaitWindow, req.Timeout)
	}
	out := api.LaunchResult{Argv: req.Argv}
	if req.DesktopEntry != "" {
		e, err := launch.Find(dirs, req.DesktopEntry)
		if errors.Is(err, launch.ErrNotFound) {
			return api.LaunchResult{}, &Error{Kind: NotFound, Field: "desktop_entry", Message: err.Error(), Err: err}
		}
		if err != nil {
			return api.LaunchResult{}, err
		}
		if out.Argv, err = e.Argv(); err != nil {
			return api.LaunchResult{}, invalid("desktop_entry", "%s", err.Error())
		}
		out.Entry = e.Path
	} else if req.Argv[0] == "" {
		return api.LaunchResult{}, invalid("argv", "argv[0] must name a program")
	}
	if err := launch.CheckEnv(req.Env); err != nil {
		return api.LaunchResult{}, invalid("env", "%s", err.Error())
	}
	if _, ok := req.Env["DISPLAY"]; ok {
		return api.LaunchResult{}, invalid("env", "env: DISPLAY is set from the display field: send display instead")
	}
	c, dpy, err := s.conn(ctx, req.Display)
	if err != nil {
		return api.LaunchResult{}, err
	}
	out.Display = dpy
	if err := s.allowEffect(ctx, dpy, "launch"); err != nil {
		return api.LaunchResult{}, err
	}
	if c.wl != nil {
		return s.wlLaunch(ctx, c, dpy, req, out)
	}
	bus, _ := atspi.DisplayBusAddress(ctx, c.c) // none: apps find the session bus themselves
	var before map[uint32]bool
	if req.WaitWindow {
		ws, err := c.c.Windows(ctx)
		if err != nil {
			return api.LaunchResult{}, err
		}
		before = map[uint32]bool{}
		for _, w := range ws {
			before[w.ID] = true
		}
	}
	env := launch.Env(s.opts.Env, dpy, bus, s.opts.EnvAllow)
	return s.startLaunch(ctx, dpy, req, out, env, func(ctx context.Context, p *launch.Process, timeout time.Duration) (*api.Window, error) {
		return waitWindow(ctx, c.c, before, p, timeout)
	})
}

// startLaunch starts out.Argv with env and req.Env (which wins), audits
// the launch, and with wait_window waits for the program's window with
// wait (X11's or the compositor's list); an excluded window is not shown.
func (s *Gate) startLaunch(ctx context.Context, dpy string, req api.LaunchRequest, out api.LaunchResult, env []string,
	wait func(context.Context, *launch.Process, time.Duration) (*api.Window, error)) (api.LaunchResult, error) {
	for _, k := range slices.Sorted(maps.Keys(req.Env)) {
		env = append(env, k+"="+req.Env[k]) // later entries win
	}
	p, err := launch.Start(launch.Spec{Argv: out.Argv, Env: env}, s.log)
	if err != nil {
		return api.LaunchResult{}, invalid("argv", "%s", err.Error())
	}
	out.PID = p.PID
	s.audit(ctx, AuditEvent{Display: dpy, Effect: "launch", Window: out.Argv[0]})
	s.log.Info("launched", "display", dpy, "pid", p.PID, "argv0", out.Argv[0], "caller", CallerOf(ctx).String())
	if !req.WaitWindow {
		return out, nil
	}
	timeout := 10 * time.Second
	if req.Timeout > 0 {
		timeout = time.Duration(req.Timeout * float64(time.Second))
	}
	w, err := wait(ctx, p, timeout)
	if err != nil {
		out.Note = err.Error()
		return out, nil
	}
	if w != nil && s.excl.Excludes(w.Title, w.Class, w.Instance) {
		w = nil // ACU_EXCLUDE_WINDOWS: the program runs, its window is not shown
	}
	out.Window = w
	return out, nil
}

// waitWindow polls for a newly mapped window: one whose _NET_WM_PID is the
// process's, or else the first new one (many programs set no pid, and
// launchers such as gapplication hand over to another process).
func waitWindow(ctx context.Context, c *display.Conn, before map[uint32]bool, p *launch.Process, timeout time.Duration) (*api.Window, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ws, err := c.WindowStates(ctx)
		if err != nil && ctx.Err() == nil {
			return nil, err
		}
		var first *api.Window
		for _, w := range ws {
			if before[w.ID] || !w.Mapped {
				continue
			}
			a := toAPI(w)
			if w.PID == p.PID {
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
			return nil, fmt.Errorf("process %d started but mapped no window within %s: list windows later, or raise timeout", p.PID, timeout)
		case <-p.Done():
			p = &launch.Process{PID: p.PID} // exited (maybe handed over): keep looking for any new window
		case <-tick.C:
		}
	}
}

// allowEffect applies the policy to an effect that lands in no window (a
// launch, a clipboard write): the display must allow acting, and the
// user-first pause applies unless the caller is the user.
func (s *Gate) allowEffect(ctx context.Context, dpy, effect string) error {
	if err := s.opts.Policy.AllowDisplay(dpy); err != nil {
		s.refused(ctx, dpy, effect, nil, err)
		return err
	}
	if !s.opts.Policy.PauseOnUser || CallerOf(ctx).User {
		return nil
	}
	h, err := s.Hands(ctx, dpy)
	if err != nil {
		return err
	}
	if err := h.UserActive(ctx); err != nil {
		s.refused(ctx, dpy, effect, nil, err)
		return err
	}
	return nil
}

// allowWindowOp applies the policy to a window operation: the display, the
// deny-list by the window operated on, and the user-first pause.
func (s *Gate) allowWindowOp(ctx context.Context, c *conn, dpy string, wid uint32, op string) error {
	if err := s.opts.Policy.AllowDisplay(dpy); err != nil {
		s.refused(ctx, dpy, "window:"+op, nil, err)
		return err
	}
	if w, ok, err := c.window(ctx, wid); err == nil && ok {
		if err := s.opts.Policy.CheckWindow(&w, "window "+op); err != nil {
			s.refused(ctx, dpy, "window:"+op, &w, err)
			return err
		}
	}
	return s.allowEffect(ctx, dpy, "window:"+op)
}

// Place configures top-level window id on dpy to r (screen pixels) and
// raises it, as the task engine's split screen tiles two windows: a window
// operation like the others, under the same policy and audit. A window
// manager may adjust it.
func (s *Gate) Place(ctx context.Context, dpy string, id uint32, r image.Rectangle) (err error) {
	defer s.recoverX("Place", &err)
	c, dpy, err := s.conn(ctx, dpy)
	if err != nil {
		return err
	}
	if c.wl != nil {
		return errNoX(dpy, "placing a window by X request")
	}
	if err := s.allowWindowOp(ctx, c, dpy, id, "place"); err != nil {
		return err
	}
	mask := uint16(xproto.ConfigWindowX | xproto.ConfigWindowY | xproto.ConfigWindowWidth | xproto.ConfigWindowHeight | xproto.ConfigWindowStackMode)
	vals := []uint32{uint32(r.Min.X), uint32(r.Min.Y), uint32(r.Dx()), uint32(r.Dy()), xproto.StackModeAbove}
	if err := xproto.ConfigureWindowChecked(c.c.X, xproto.Window(id), mask, vals).Check(); err != nil {
		return fmt.Errorf("place window %#x on %s: %w", id, dpy, err)
	}
	s.audit(ctx, AuditEvent{Display: dpy, Effect: "window:place", Window: fmt.Sprintf("%#x", id)})
	return c.c.Sync(ctx)
}
