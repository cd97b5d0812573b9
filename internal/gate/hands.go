package gate

import (
	"context"
	"errors"
	"fmt"
	"image"
	"strings"
	"time"

	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/input"
)

// The input package's data types, for the engines above the gate: they
// describe input without being able to send it (only the gate holds a
// device).
type (
	// Action is one input action in the coordinates of an Area.
	Action = input.Action
	// Area is the screen rectangle normalized coordinates map to.
	Area = input.Area
)

// Action kinds and limits, as input defines them.
const (
	KindMove        = input.KindMove
	KindClick       = input.KindClick
	KindRightClick  = input.KindRightClick
	KindDoubleClick = input.KindDoubleClick
	KindMiddleClick = input.KindMiddleClick
	KindDrag        = input.KindDrag
	KindScroll      = input.KindScroll
	KindType        = input.KindType
	KindKey         = input.KindKey
	NormMax         = input.NormMax
	MaxScroll       = input.MaxScroll
	ButtonLeft      = input.ButtonLeft
	ButtonMiddle    = input.ButtonMiddle
	ButtonRight     = input.ButtonRight
	ButtonBack      = input.ButtonBack
	ButtonForward   = input.ButtonForward
	MaxClickCount   = input.MaxClickCount
	MaxHold         = input.MaxHold
	MaxRepeat       = input.MaxRepeat
	MaxPathPoints   = input.MaxPathPoints
)

// CheckKeys reports whether keys is a key chord the device can press.
func CheckKeys(keys string) error { return input.CheckKeys(keys) }

// CheckMods reports whether mods are modifiers the device can hold.
func CheckMods(mods string) error { return input.CheckMods(mods) }

// InputOptions configure each display's XTest device.
type InputOptions = input.Options

// Kinds lists the action kinds Do accepts.
var Kinds = input.Kinds

// Landing is where an effect landed: the screen pixel and the top-level
// window there (nil: the root, or none).
type Landing struct {
	At     *image.Point
	Window *display.Window
}

// Hands act on one display for every caller: each effect passes the
// policy (the deny-list by the window it lands in, the user-first pause
// unless the caller is the user at the take-over), runs on the display's
// one XTest device, is marked as acu's own input and is audited with the
// caller the context carries. Hands are shared: the gate serialises
// effects per display.
type Hands struct {
	g   *Gate
	c   *conn
	dev device // the display's device, or an engine's own (HandsFor)
	dpy string
}

// DeviceOptions are an engine's own input settings on a display (the agent
// loop's working area, click hold and drag pace, or a dry run). Effects
// through them pass the same policy, lock and audit as any other.
type DeviceOptions struct {
	// Area is what Do's normalized coordinates map to; empty: the screen.
	Area          Area
	ClickHold     time.Duration
	DragSteps     int
	DragStepDelay time.Duration
	// DryRun maps and logs actions without sending any event.
	DryRun bool
}

// AreaFromCrop is the working area of a crop rectangle (x1,y1,x2,y2 in
// pixels; all zero: the whole screen).
func AreaFromCrop(screenW, screenH int, crop [4]int) Area {
	return input.AreaFromCrop(screenW, screenH, crop)
}

// HandsFor returns hands on dpy with a device of the engine's own settings
// (made once per display and settings).
func (g *Gate) HandsFor(ctx context.Context, dpy string, o DeviceOptions) (*Hands, error) {
	h, err := g.Hands(ctx, dpy)
	if err != nil {
		return nil, err
	}
	if o.Area.Empty() {
		w, ht := h.c.screen()
		o.Area = input.Area{W: w, H: ht}
	}
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	if dev := h.c.devs[o]; dev != nil {
		h.dev = dev
		return h, nil
	}
	io := g.opts.Input
	io.Logger = g.log.With("component", "input")
	if o.ClickHold != 0 {
		io.ClickDelay = o.ClickHold
	}
	if o.DragSteps != 0 {
		io.DragSteps = o.DragSteps
	}
	if o.DragStepDelay != 0 {
		io.DragStepDelay = o.DragStepDelay
	}
	io.DryRun = o.DryRun
	var dev device
	if h.c.wl != nil {
		d, err := h.c.wl.device(ctx, o.Area, io)
		if err != nil {
			return nil, err
		}
		dev = d
	} else {
		d, err := input.New(h.c.c, o.Area, io)
		if err != nil {
			return nil, &Error{Kind: Unavailable, Field: "display", Message: fmt.Sprintf("open an input device on %s: %v", h.c.c.Name, err), Err: err}
		}
		d.SetReadProof(h.c.readProof(h.dpy))
		dev = d
	}
	if h.c.devs == nil {
		h.c.devs = map[DeviceOptions]device{}
	}
	h.c.devs[o] = dev
	h.dev = dev
	return h, nil
}

// Hands returns the hands of dpy (the default display when empty), or a
// Refused error when the policy lets nothing act there.
func (g *Gate) Hands(ctx context.Context, dpy string) (*Hands, error) {
	c, dpy, err := g.conn(ctx, dpy)
	if err != nil {
		return nil, err
	}
	if err := g.opts.Policy.AllowDisplay(dpy); err != nil {
		g.refused(ctx, dpy, "hands", nil, err)
		return nil, err
	}
	if err := g.input(ctx, c); err != nil {
		return nil, err
	}
	return &Hands{g: g, c: c, dev: c.dev, dpy: dpy}, nil
}

// input opens c's XTest device and user watch on first use.
func (g *Gate) input(ctx context.Context, c *conn) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dev != nil {
		return nil
	}
	if c.wl != nil {
		return g.wlInput(ctx, c)
	}
	io := g.opts.Input
	io.Logger = g.log.With("component", "input")
	dev, err := input.New(c.c, input.Area{W: c.c.Screen.Width, H: c.c.Screen.Height}, io)
	if err != nil {
		return &Error{Kind: Unavailable, Field: "display", Message: fmt.Sprintf("open an input device on %s: %v", c.c.Name, err), Err: err}
	}
	dev.SetReadProof(c.readProof(c.c.Name))
	w := input.NewWatch(c.c, input.WatchOptions{Logger: g.log})
	u := &userState{w: w, c: c.c, now: g.opts.Now}
	if g.opts.Policy.PauseOnUser {
		// The user's input by the server's clock; without XInput2, the
		// watch (pointer and idle time).
		clk, err := input.NewUserClock(ctx, c.c, g.opts.Policy.Quiet, g.log)
		if err != nil {
			g.log.Info("no user clock: the user is detected by the pointer and the idle time", "display", c.c.Name, "err", err)
		} else {
			u.clock = clk
		}
	}
	if u.clock == nil {
		if err := w.Mark(ctx); err != nil {
			dev.Close()
			return err
		}
	}
	c.dev, c.user = dev, u
	return nil
}

// Display is the display's name.
func (h *Hands) Display() string { return h.dpy }

// Conn is the display's X connection, for reads (window lists,
// geometry); nil on a Wayland display (IsWayland), which has none.
func (h *Hands) Conn() *display.Conn { return h.c.c }

// Area is the rectangle Do's normalized coordinates map to.
func (h *Hands) Area() Area { return h.dev.Area() }

// CheckText reports whether text can be typed on this display.
func (h *Hands) CheckText(text string) error { return h.dev.CheckText(text) }

// Pointer is where the pointer is.
func (h *Hands) Pointer(ctx context.Context) (image.Point, error) { return h.dev.Pointer(ctx) }

// UserActive reports the user-first refusal that an effect would get now
// for the context's caller, or nil.
func (h *Hands) UserActive(ctx context.Context) error {
	pol := h.g.opts.Policy
	if !pol.PauseOnUser || CallerOf(ctx).User {
		return nil
	}
	return h.c.user.check(ctx, pol.Quiet)
}

// effect runs one effect: the landing windows are checked against the
// deny-list, the user-first pause applies, then fn runs, acu's input is
// marked and the effect audited.
func (h *Hands) effect(ctx context.Context, kind string, land func() ([]Landing, error), fn func() error) (Landing, error) {
	start := h.g.opts.Now()
	pol := h.g.opts.Policy
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	// The display was allowed when these hands were made (Gate.Hands);
	// the policy does not change.
	var lands []Landing
	if land != nil {
		var err error
		if lands, err = land(); err != nil {
			return Landing{}, err
		}
	}
	var first Landing
	for i, l := range lands {
		if i == 0 {
			first = l
		}
		if err := pol.CheckWindow(l.Window, kind); err != nil {
			h.g.refused(ctx, h.dpy, kind, l.Window, err)
			return l, err
		}
	}
	if h.c.wl != nil {
		h.c.wl.touchOrder(ctx) // the repaints of this effect, for the next Order
	}
	// The user-first check (UserActive's), and acu's input bracketed from
	// there on; the user's own input (take-over) is the user's.
	own := pol.PauseOnUser && !CallerOf(ctx).User
	if own {
		if err := h.c.user.checkBegin(ctx, pol.Quiet); err != nil {
			h.g.refused(ctx, h.dpy, kind, first.Window, err)
			return first, err
		}
	}
	err := fn()
	if own { // the watch needs to know acu's own input
		if mErr := h.c.user.end(context.WithoutCancel(ctx), h.dev.ButtonsDown()); mErr != nil {
			h.g.log.Debug("mark acu's input", "display", h.dpy, "err", mErr)
		}
	}
	h.g.audit(ctx, AuditEvent{Display: h.dpy, Effect: kind, Window: windowTitle(first.Window), At: first.At,
		Took: h.g.opts.Now().Sub(start), Err: err})
	return first, err
}

// at is the landing at p (the pointer's position when p is nil).
func (h *Hands) at(ctx context.Context, p *image.Point) ([]Landing, error) {
	if p == nil {
		q, err := h.dev.Pointer(ctx)
		if err != nil {
			return nil, err
		}
		p = &q
	}
	w, err := h.c.windowAt(ctx, *p)
	if err != nil {
		return nil, err
	}
	q := *p
	return []Landing{{At: &q, Window: w}}, nil
}

// focus is the landing of keyboard input: the focused window.
func (h *Hands) focus(ctx context.Context) ([]Landing, error) {
	w, err := h.c.focused(ctx)
	if err != nil {
		return nil, err
	}
	return []Landing{{Window: w}}, nil
}

// MoveTo moves the pointer to p.
func (h *Hands) MoveTo(ctx context.Context, p image.Point) (Landing, error) {
	return h.effect(ctx, "move", func() ([]Landing, error) { return h.at(ctx, &p) },
		func() error { return h.dev.MoveTo(ctx, p) })
}

// ClickAt clicks button count times at p (nil: where the pointer is).
func (h *Hands) ClickAt(ctx context.Context, p *image.Point, button, count int) (Landing, error) {
	return h.effect(ctx, "click", func() ([]Landing, error) { return h.at(ctx, p) },
		func() error { return h.dev.ClickAt(ctx, p, button, count) })
}

// ButtonDown presses button at p (nil: where the pointer is).
func (h *Hands) ButtonDown(ctx context.Context, p *image.Point, button int) (Landing, error) {
	return h.effect(ctx, "mouse_down", func() ([]Landing, error) { return h.at(ctx, p) },
		func() error { return h.dev.ButtonDown(ctx, p, button) })
}

// ButtonUp releases button at p (nil: where the pointer is).
func (h *Hands) ButtonUp(ctx context.Context, p *image.Point, button int) (Landing, error) {
	return h.effect(ctx, "mouse_up", func() ([]Landing, error) { return h.at(ctx, p) },
		func() error { return h.dev.ButtonUp(ctx, p, button) })
}

// DragPath drags button along path; every point must be allowed.
func (h *Hands) DragPath(ctx context.Context, button int, path []image.Point, hold time.Duration) (Landing, error) {
	return h.effect(ctx, "drag", func() ([]Landing, error) {
		var out []Landing
		for i := range path {
			l, err := h.at(ctx, &path[i])
			if err != nil {
				return nil, err
			}
			out = append(out, l...)
		}
		return out, nil
	}, func() error { return h.dev.DragPath(ctx, button, path, hold) })
}

// ScrollAt scrolls at p (nil: where the pointer is).
func (h *Hands) ScrollAt(ctx context.Context, p *image.Point, dx, dy int) (Landing, error) {
	return h.effect(ctx, "scroll", func() ([]Landing, error) { return h.at(ctx, p) },
		func() error { return h.dev.ScrollAt(ctx, p, dx, dy) })
}

// Type types text into the focused window.
func (h *Hands) Type(ctx context.Context, text string) (Landing, error) {
	return h.effect(ctx, "type", func() ([]Landing, error) { return h.focus(ctx) },
		func() error { return h.dev.Type(ctx, text) })
}

// KeyHold presses keys (held for hold, repeat times) in the focused window.
func (h *Hands) KeyHold(ctx context.Context, keys string, hold time.Duration, repeat int) (Landing, error) {
	return h.effect(ctx, "key", func() ([]Landing, error) { return h.focus(ctx) },
		func() error { return h.dev.KeyHold(ctx, keys, hold, repeat) })
}

// ModsDown holds modifier keys for the effects that follow (ModsUp
// releases them); the focused window must be allowed.
func (h *Hands) ModsDown(ctx context.Context, mods string) error {
	_, err := h.effect(ctx, "mods_down", func() ([]Landing, error) { return h.focus(ctx) },
		func() error { return h.dev.ModsDown(ctx, mods) })
	return err
}

// ModsUp releases what ModsDown held. It is never refused: a release
// only ends acu's own input.
func (h *Hands) ModsUp(ctx context.Context) error {
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	own := h.g.opts.Policy.PauseOnUser && !CallerOf(ctx).User
	if own {
		h.c.user.begin()
	}
	err := h.dev.ModsUp(ctx)
	if own {
		if mErr := h.c.user.end(context.WithoutCancel(ctx), h.dev.ButtonsDown()); mErr != nil {
			h.g.log.Debug("mark acu's input", "display", h.dpy, "err", mErr)
		}
	}
	return err
}

// Do runs one action in the Area's coordinates, as the agent loops speak
// them.
func (h *Hands) Do(ctx context.Context, a Action) (Landing, error) {
	if err := a.Validate(); err != nil {
		return Landing{}, err
	}
	kind := strings.ToLower(strings.TrimSpace(a.Kind))
	area := h.dev.Area()
	px := func(x, y int) *image.Point {
		px, py := area.ToPixel(x, y)
		return &image.Point{X: px, Y: py}
	}
	land := func() ([]Landing, error) {
		switch kind {
		case KindType, KindKey:
			return h.focus(ctx)
		case KindDrag:
			l1, err := h.at(ctx, px(a.X, a.Y))
			if err != nil {
				return nil, err
			}
			l2, err := h.at(ctx, px(a.X2, a.Y2))
			return append(l1, l2...), err
		}
		return h.at(ctx, px(a.X, a.Y))
	}
	if len(h.g.opts.Policy.Deny) == 0 {
		land = nil // nothing to check where it lands, and Do's callers do not ask
	}
	return h.effect(ctx, kind, land, func() error { return h.dev.Do(ctx, a) })
}

// Element runs an effect on an accessibility element of app's window
// (an AT-SPI action, or text set into it): the deny-list by application
// and window name and the user-first pause apply, and it is audited; fn
// is the effect itself.
func (h *Hands) Element(ctx context.Context, id, app, window, kind string, fn func(context.Context) error) error {
	if err := h.g.opts.Policy.CheckElement(id, app, window); err != nil {
		h.g.refused(ctx, h.dpy, kind, &display.Window{Title: window, Class: app}, err)
		return err
	}
	_, err := h.effect(ctx, kind, nil, func() error { return fn(ctx) })
	return err
}

// WindowAt returns the topmost mapped top-level window containing p, or nil.
// It asks the server for the window at p; only when that is no client
// window (the root, an override-redirect menu over an application) does it
// list the windows and take the topmost client containing p, so a menu
// over a denied window is still the denied window's.
func WindowAt(ctx context.Context, c *display.Conn, p image.Point) (*display.Window, error) {
	if w, ok, err := c.TopLevelAt(ctx, p); err != nil {
		return nil, err
	} else if ok {
		return &w, nil
	}
	ws, err := c.Windows(ctx)
	if err != nil {
		return nil, fmt.Errorf("list windows on %s: %w", c.Name, err)
	}
	for i := len(ws) - 1; i >= 0; i-- {
		if ws[i].Mapped && p.In(ws[i].Rect()) {
			return &ws[i], nil
		}
	}
	return nil, nil
}

// FocusedWindow returns the top-level window holding the keyboard focus, or
// nil.
func FocusedWindow(ctx context.Context, c *display.Conn) (*display.Window, error) {
	f, err := xproto.GetInputFocus(c.X).Reply()
	if err != nil {
		return nil, fmt.Errorf("read the input focus on %s: %w", c.Name, err)
	}
	ws, err := c.Windows(ctx)
	if err != nil {
		return nil, fmt.Errorf("list windows on %s: %w", c.Name, err)
	}
	w := f.Focus
	if w == c.Screen.Root || w == xproto.InputFocusPointerRoot {
		// Keys go to the window under the pointer.
		p, err := xproto.QueryPointer(c.X, c.Screen.Root).Reply()
		if err != nil {
			return nil, fmt.Errorf("query the pointer on %s: %w", c.Name, err)
		}
		return WindowAt(ctx, c, image.Pt(int(p.RootX), int(p.RootY)))
	}
	for range 32 {
		if w == 0 || w == c.Screen.Root { // None
			return nil, nil
		}
		for i := range ws {
			if ws[i].ID == uint32(w) {
				return &ws[i], nil
			}
		}
		t, err := xproto.QueryTree(c.X, w).Reply()
		if err != nil {
			return nil, nil // the window went away
		}
		w = t.Parent
	}
	return nil, nil
}

func windowTitle(w *display.Window) string {
	if w == nil {
		return ""
	}
	return w.Title
}

// IsRefused reports whether err is a policy refusal, and returns it.
func IsRefused(err error) (*Refused, bool) {
	var r *Refused
	ok := errors.As(err, &r)
	return r, ok
}

// The user-input watches, for engines that pause for the user themselves
// (the task loop): reads of the display, no effect.
type (
	Watch        = input.Watch
	PointerWatch = input.PointerWatch
	WatchOptions = input.WatchOptions
)

// DefaultIdleMargin is WatchOptions.Margin's default.
const DefaultIdleMargin = input.DefaultIdleMargin

// NewWatch watches all input on c's display; c stays the caller's.
func NewWatch(c *display.Conn, o WatchOptions) *Watch { return input.NewWatch(c, o) }

// NewPointerWatch watches the pointer of c's display; c stays the caller's.
func NewPointerWatch(c *display.Conn) *PointerWatch { return input.NewPointerWatch(c) }

// Device is what the engines' step executors need (the element
// extractor's pointer steps, the task loop's recovery keys): Do in the
// Area's coordinates.
type Device interface {
	Do(ctx context.Context, a Action) error
	Area() Area
}

// Device returns h as a Device, dropping where each action landed.
func (h *Hands) Device() Device { return handsDevice{h} }

type handsDevice struct{ h *Hands }

func (d handsDevice) Do(ctx context.Context, a Action) error {
	_, err := d.h.Do(ctx, a)
	return err
}
func (d handsDevice) Area() Area { return d.h.Area() }
