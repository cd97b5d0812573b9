package testx

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"sync"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/internal/display"
)

// Spec describes a test window.
type Spec struct {
	Title string // _NET_WM_NAME and WM_NAME
	Class string // WM_CLASS class; the instance is the class in lower case
	X, Y  int    // position in root coordinates
	W, H  int    // size; default 200x150
	// Fill is the uniform content color (alpha ignored); Pattern, when set,
	// gives each pixel's color instead.
	Fill    color.RGBA
	Pattern func(x, y int) color.RGBA
	// Depth is the window depth: 0 for the root's depth, 32 for an ARGB
	// visual (the content is opaque).
	Depth int
}

// EventKind says what input a window received.
type EventKind int

// Kinds of recorded input.
const (
	Motion EventKind = iota + 1
	ButtonPress
	ButtonRelease
	KeyPress
	KeyRelease
)

func (k EventKind) String() string {
	switch k {
	case Motion:
		return "motion"
	case ButtonPress:
		return "button_press"
	case ButtonRelease:
		return "button_release"
	case KeyPress:
		return "key_press"
	case KeyRelease:
		return "key_release"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is one input event the window received.
type Event struct {
	Kind         EventKind
	X, Y         int // window coordinates
	RootX, RootY int // root coordinates
	Button       int // 1 left, 2 middle, 3 right, 4/5 wheel up/down
	Keycode      int
	Keysym       uint32 // through the keyboard mapping current when received
	Rune         rune   // the character typed, 0 if none (modifiers, F-keys)
	State        uint16 // modifier and button mask
	Time         uint32 // server time in ms
}

// Window is a mapped X window with known content, owned by its own client
// connection. Closed when the test ends.
type Window struct {
	t     testing.TB
	conn  *xgb.Conn
	id    xproto.Window
	pix   xproto.Pixmap
	gc    xproto.Gcontext
	depth byte
	w, h  int

	mu      sync.Mutex
	content *image.RGBA
	x, y    int
	events  []Event
	changed chan struct{} // closed and replaced when events change
	keymap  keymap
	mapped  chan struct{}
	closed  chan struct{}
}

// NewWindow opens a connection to display, creates and maps a window as spec
// says, and waits until its content is on screen.
func NewWindow(t testing.TB, dpy string, spec Spec) *Window {
	t.Helper()
	if spec.W <= 0 {
		spec.W = 200
	}
	if spec.H <= 0 {
		spec.H = 150
	}
	conn, err := xgb.NewConnDisplay(dpy)
	if err != nil {
		t.Fatalf("testx: connect to %s: %v", dpy, err)
	}
	// Register xgb's extension tables through display before this
	// connection receives events (see display.InitExtensions).
	if _, err := display.InitExtensions(conn); err != nil {
		conn.Close()
		t.Fatalf("testx: %v", err)
	}
	w := &Window{t: t, conn: conn, w: spec.W, h: spec.H, x: spec.X, y: spec.Y,
		changed: make(chan struct{}), mapped: make(chan struct{}), closed: make(chan struct{})}
	t.Cleanup(w.Close)
	if err := w.create(spec); err != nil {
		t.Fatalf("testx: create window %q on %s: %v", spec.Title, dpy, err)
	}
	return w
}

func (w *Window) create(spec Spec) error {
	c := w.conn
	setup := xproto.Setup(c)
	scr := setup.DefaultScreen(c)
	if err := w.keymap.load(c); err != nil {
		return err
	}

	depth := scr.RootDepth
	visual := scr.RootVisual
	var extraMask uint32
	var cmap xproto.Colormap
	if spec.Depth != 0 && byte(spec.Depth) != scr.RootDepth {
		depth = byte(spec.Depth)
		visual = 0
		for _, d := range scr.AllowedDepths {
			if d.Depth != depth {
				continue
			}
			for _, v := range d.Visuals {
				if v.Class == xproto.VisualClassTrueColor {
					visual = v.VisualId
					break
				}
			}
		}
		if visual == 0 {
			return fmt.Errorf("no TrueColor visual of depth %d", depth)
		}
		var err error
		if cmap, err = xproto.NewColormapId(c); err != nil {
			return err
		}
		if err := xproto.CreateColormapChecked(c, xproto.ColormapAllocNone, cmap, scr.Root, visual).Check(); err != nil {
			return fmt.Errorf("create colormap: %w", err)
		}
		extraMask = xproto.CwBorderPixel | xproto.CwColormap
	}
	w.depth = depth

	// Content: a pixmap used as the window background, so the server
	// repaints it on every expose without our help.
	w.content = image.NewRGBA(image.Rect(0, 0, spec.W, spec.H))
	for y := 0; y < spec.H; y++ {
		for x := 0; x < spec.W; x++ {
			col := spec.Fill
			if spec.Pattern != nil {
				col = spec.Pattern(x, y)
			}
			col.A = 0xff
			w.content.SetRGBA(x, y, col)
		}
	}
	var err error
	if w.id, err = xproto.NewWindowId(c); err != nil {
		return err
	}
	if w.pix, err = xproto.NewPixmapId(c); err != nil {
		return err
	}
	if w.gc, err = xproto.NewGcontextId(c); err != nil {
		return err
	}
	if err := xproto.CreatePixmapChecked(c, depth, w.pix, xproto.Drawable(scr.Root), uint16(spec.W), uint16(spec.H)).Check(); err != nil {
		return fmt.Errorf("create pixmap: %w", err)
	}
	if err := xproto.CreateGCChecked(c, w.gc, xproto.Drawable(w.pix), 0, nil).Check(); err != nil {
		return fmt.Errorf("create gc: %w", err)
	}
	if err := w.put(0, 0, spec.W, spec.H); err != nil {
		return err
	}

	mask := uint32(xproto.CwBackPixmap) | extraMask | xproto.CwEventMask
	values := []uint32{uint32(w.pix)}
	if extraMask != 0 {
		values = append(values, 0) // border pixel
	}
	values = append(values, xproto.EventMaskPointerMotion|xproto.EventMaskButtonPress|
		xproto.EventMaskButtonRelease|xproto.EventMaskKeyPress|xproto.EventMaskKeyRelease|
		xproto.EventMaskStructureNotify|xproto.EventMaskExposure)
	if extraMask != 0 {
		values = append(values, uint32(cmap))
	}
	if err := xproto.CreateWindowChecked(c, depth, w.id, scr.Root, int16(spec.X), int16(spec.Y),
		uint16(spec.W), uint16(spec.H), 0, xproto.WindowClassInputOutput, visual, mask, values).Check(); err != nil {
		return fmt.Errorf("create window: %w", err)
	}
	if spec.Class != "" {
		cls := lower(spec.Class) + "\x00" + spec.Class + "\x00"
		xproto.ChangeProperty(c, xproto.PropModeReplace, w.id, xproto.AtomWmClass, xproto.AtomString, 8, uint32(len(cls)), []byte(cls))
	}
	if err := w.setTitle(spec.Title); err != nil {
		return err
	}
	go w.loop()
	xproto.MapWindow(c, w.id)
	select {
	case <-w.mapped:
	case <-time.After(30 * time.Second):
		return fmt.Errorf("window not mapped after 30s")
	}
	return w.sync()
}

// put uploads content rows [y0,y0+h) columns [x0,x0+w) into the pixmap, in
// strips that fit the core protocol's request size.
func (w *Window) put(x0, y0, pw, ph int) error {
	maxBytes := int(xproto.Setup(w.conn).MaximumRequestLength)*4 - 64
	rows := max(1, maxBytes/(pw*4))
	buf := make([]byte, 0, min(rows, ph)*pw*4)
	for y := y0; y < y0+ph; y += rows {
		n := min(rows, y0+ph-y)
		buf = buf[:0]
		for yy := y; yy < y+n; yy++ {
			for xx := x0; xx < x0+pw; xx++ {
				p := w.content.RGBAAt(xx, yy)
				buf = append(buf, p.B, p.G, p.R, 0xff)
			}
		}
		if err := xproto.PutImageChecked(w.conn, xproto.ImageFormatZPixmap, xproto.Drawable(w.pix), w.gc,
			uint16(pw), uint16(n), int16(x0), int16(y), 0, w.depth, buf).Check(); err != nil {
			return fmt.Errorf("put image: %w", err)
		}
	}
	return nil
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// sync waits until the server has processed every request sent so far.
func (w *Window) sync() error {
	_, err := xproto.GetInputFocus(w.conn).Reply()
	return err
}

func (w *Window) intern(name string) (xproto.Atom, error) {
	r, err := xproto.InternAtom(w.conn, false, uint16(len(name)), name).Reply()
	if err != nil {
		return 0, fmt.Errorf("intern %s: %w", name, err)
	}
	return r.Atom, nil
}

func (w *Window) setTitle(title string) error {
	netName, err := w.intern("_NET_WM_NAME")
	if err != nil {
		return err
	}
	utf8, err := w.intern("UTF8_STRING")
	if err != nil {
		return err
	}
	xproto.ChangeProperty(w.conn, xproto.PropModeReplace, w.id, netName, utf8, 8, uint32(len(title)), []byte(title))
	xproto.ChangeProperty(w.conn, xproto.PropModeReplace, w.id, xproto.AtomWmName, xproto.AtomString, 8, uint32(len(title)), []byte(title))
	return w.sync()
}

// ID returns the X window id.
func (w *Window) ID() uint32 { return uint32(w.id) }

// Size returns the window's width and height.
func (w *Window) Size() (int, int) { return w.w, w.h }

// Pos returns the window's last requested position in root coordinates.
func (w *Window) Pos() (int, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.x, w.y
}

// Content returns a copy of the window's expected pixels (alpha 0xff).
func (w *Window) Content() *image.RGBA {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := *w.content
	c.Pix = append([]byte(nil), w.content.Pix...)
	return &c
}

// SetPixel changes exactly one pixel of the window (window coordinates) and
// returns once the server has drawn it.
func (w *Window) SetPixel(x, y int, c color.RGBA) {
	w.t.Helper()
	c.A = 0xff
	w.mu.Lock()
	w.content.SetRGBA(x, y, c)
	w.mu.Unlock()
	if err := w.put(x, y, 1, 1); err != nil {
		w.t.Fatalf("testx: set pixel (%d,%d): %v", x, y, err)
	}
	xproto.ClearArea(w.conn, false, w.id, int16(x), int16(y), 1, 1)
	if err := w.sync(); err != nil {
		w.t.Fatalf("testx: set pixel (%d,%d): %v", x, y, err)
	}
}

// Fill repaints the whole window with one color and returns once drawn.
func (w *Window) Fill(c color.RGBA) {
	w.t.Helper()
	c.A = 0xff
	w.mu.Lock()
	for y := 0; y < w.h; y++ {
		for x := 0; x < w.w; x++ {
			w.content.SetRGBA(x, y, c)
		}
	}
	w.mu.Unlock()
	if err := w.put(0, 0, w.w, w.h); err != nil {
		w.t.Fatalf("testx: fill: %v", err)
	}
	xproto.ClearArea(w.conn, false, w.id, 0, 0, 0, 0)
	if err := w.sync(); err != nil {
		w.t.Fatalf("testx: fill: %v", err)
	}
}

// Move moves the window to (x, y) in root coordinates and returns once done.
func (w *Window) Move(x, y int) {
	w.t.Helper()
	w.mu.Lock()
	w.x, w.y = x, y
	w.mu.Unlock()
	xproto.ConfigureWindow(w.conn, w.id, xproto.ConfigWindowX|xproto.ConfigWindowY, []uint32{uint32(int32(x)), uint32(int32(y))})
	if err := w.sync(); err != nil {
		w.t.Fatalf("testx: move: %v", err)
	}
}

// Raise puts the window on top of its siblings.
func (w *Window) Raise() {
	w.t.Helper()
	xproto.ConfigureWindow(w.conn, w.id, xproto.ConfigWindowStackMode, []uint32{xproto.StackModeAbove})
	if err := w.sync(); err != nil {
		w.t.Fatalf("testx: raise: %v", err)
	}
}

// Unmap hides the window.
func (w *Window) Unmap() {
	w.t.Helper()
	xproto.UnmapWindow(w.conn, w.id)
	if err := w.sync(); err != nil {
		w.t.Fatalf("testx: unmap: %v", err)
	}
}

// SetTitle sets _NET_WM_NAME and WM_NAME.
func (w *Window) SetTitle(title string) {
	w.t.Helper()
	if err := w.setTitle(title); err != nil {
		w.t.Fatalf("testx: set title: %v", err)
	}
}

// Focus gives the window the keyboard focus (there is no window manager on
// a bare Xvfb to do it).
func (w *Window) Focus() {
	w.t.Helper()
	xproto.SetInputFocus(w.conn, xproto.InputFocusPointerRoot, w.id, xproto.TimeCurrentTime)
	if err := w.sync(); err != nil {
		w.t.Fatalf("testx: focus: %v", err)
	}
}

// Events returns a copy of the input recorded so far.
func (w *Window) Events() []Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Event(nil), w.events...)
}

// Typed returns the characters of the key presses recorded so far.
func (w *Window) Typed() string {
	var rs []rune
	for _, e := range w.Events() {
		if e.Kind == KeyPress && e.Rune != 0 {
			rs = append(rs, e.Rune)
		}
	}
	return string(rs)
}

// ResetEvents forgets the recorded input.
func (w *Window) ResetEvents() {
	w.mu.Lock()
	w.events = nil
	w.mu.Unlock()
}

// WaitEvents waits until at least n events are recorded and returns them,
// or returns what it has with ctx's error.
func (w *Window) WaitEvents(ctx context.Context, n int) ([]Event, error) {
	return w.WaitFor(ctx, func(evs []Event) bool { return len(evs) >= n })
}

// WaitFor waits until cond holds for the recorded events.
func (w *Window) WaitFor(ctx context.Context, cond func([]Event) bool) ([]Event, error) {
	for {
		w.mu.Lock()
		evs := append([]Event(nil), w.events...)
		ch := w.changed
		w.mu.Unlock()
		if cond(evs) {
			return evs, nil
		}
		select {
		case <-ch:
		case <-w.closed:
			return evs, fmt.Errorf("testx: window closed")
		case <-ctx.Done():
			return evs, ctx.Err()
		}
	}
}

// Close destroys the window and closes its connection.
func (w *Window) Close() {
	select {
	case <-w.closed:
		return
	default:
	}
	xproto.DestroyWindow(w.conn, w.id)
	xproto.FreePixmap(w.conn, w.pix)
	_ = w.sync()
	w.conn.Close()
	<-w.closed
}

func (w *Window) record(e Event) {
	w.mu.Lock()
	w.events = append(w.events, e)
	close(w.changed)
	w.changed = make(chan struct{})
	w.mu.Unlock()
}

func (w *Window) loop() {
	defer close(w.closed)
	mappedOnce := false
	for {
		ev, xerr := w.conn.WaitForEvent()
		if ev == nil && xerr == nil {
			return
		}
		switch e := ev.(type) {
		case xproto.MapNotifyEvent:
			if !mappedOnce && e.Window == w.id {
				mappedOnce = true
				close(w.mapped)
			}
		case xproto.ConfigureNotifyEvent:
			if e.Window == w.id {
				w.mu.Lock()
				w.x, w.y = int(e.X), int(e.Y)
				w.mu.Unlock()
			}
		case xproto.MotionNotifyEvent:
			w.record(Event{Kind: Motion, X: int(e.EventX), Y: int(e.EventY), RootX: int(e.RootX), RootY: int(e.RootY), State: e.State, Time: uint32(e.Time)})
		case xproto.ButtonPressEvent:
			w.record(Event{Kind: ButtonPress, X: int(e.EventX), Y: int(e.EventY), RootX: int(e.RootX), RootY: int(e.RootY), Button: int(e.Detail), State: e.State, Time: uint32(e.Time)})
		case xproto.ButtonReleaseEvent:
			w.record(Event{Kind: ButtonRelease, X: int(e.EventX), Y: int(e.EventY), RootX: int(e.RootX), RootY: int(e.RootY), Button: int(e.Detail), State: e.State, Time: uint32(e.Time)})
		case xproto.KeyPressEvent:
			ks := w.keymap.keysym(e.Detail, e.State)
			w.record(Event{Kind: KeyPress, X: int(e.EventX), Y: int(e.EventY), RootX: int(e.RootX), RootY: int(e.RootY), Keycode: int(e.Detail), Keysym: ks, Rune: KeysymRune(ks), State: e.State, Time: uint32(e.Time)})
		case xproto.KeyReleaseEvent:
			ks := w.keymap.keysym(e.Detail, e.State)
			w.record(Event{Kind: KeyRelease, X: int(e.EventX), Y: int(e.EventY), RootX: int(e.RootX), RootY: int(e.RootY), Keycode: int(e.Detail), Keysym: ks, Rune: KeysymRune(ks), State: e.State, Time: uint32(e.Time)})
		case xproto.MappingNotifyEvent:
			if e.Request == xproto.MappingKeyboard {
				_ = w.keymap.load(w.conn)
			}
		}
	}
}
