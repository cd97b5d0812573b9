package display

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/damage"
	"github.com/jezek/xgb/xcmisc"
	"github.com/jezek/xgb/xfixes"
	"github.com/jezek/xgb/xproto"
)

// ErrNoDisplay is returned (wrapped) by Open when the display name is empty
// or the server cannot be reached.
var ErrNoDisplay = errors.New("no reachable X display")

// HowToStart tells the user how to start a display; errors include it.
const HowToStart = `start one with "acu display start :99" or "Xvfb :99 -screen 0 1280x720x24 &"`

// Options configures Open.
type Options struct {
	// Logger receives connection lifecycle logs and asynchronous X errors
	// (at Debug); nil discards.
	Logger *slog.Logger
	// AllowRemote lets names of the form HOST:N open a TCP connection to a
	// remote X server (ACU_ALLOW_REMOTE_X); off, only local displays.
	AllowRemote bool
}

// Screen describes the display's default screen.
type Screen struct {
	Root          xproto.Window
	Width, Height int
	Depth         int // root depth: 24 or 30 on Xvfb, 24 on most desktops
	BitsPerPixel  int // of ZPixmap images at Depth: 32 for depth 24 on Xvfb
	ScanlinePad   int // bits
	Visual        xproto.Visualid
	RedMask       uint32
	GreenMask     uint32
	BlueMask      uint32
	LSBFirst      bool // image byte order
}

// Extensions says which extensions the server offers (and this Conn has
// initialized).
type Extensions struct {
	SHM, Damage, XTest, XFixes, XCMisc bool
	// ScreenSaver is MIT-SCREEN-SAVER, whose QueryInfo gives the time since
	// the last input event (screensaver.QueryInfo needs no Init on a Conn).
	ScreenSaver bool
}

// Conn is one live connection to a display. Its methods are safe for
// concurrent use. Conn owns the connection's event queue: read events
// through Subscribe, never with X.WaitForEvent.
type Conn struct {
	X      *xgb.Conn
	Name   string
	Screen Screen
	Ext    Extensions

	log        *slog.Logger
	firstEvent map[string]byte // extension -> its first event number here

	atomMu sync.Mutex
	atoms  map[string]xproto.Atom

	subMu  sync.RWMutex
	subs   map[int]func(xgb.Event)
	nextID int

	done      chan struct{}
	closeOnce sync.Once
	readerEnd chan struct{}
}

var xgbLogOnce sync.Once

// Open connects to the display name (":99"), reads its screen, initializes
// the extensions it offers, and hooks resource-id allocation to XC-MISC so a
// long-running connection never runs out of ids.
func Open(ctx context.Context, name string, opts Options) (*Conn, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	xgbLogOnce.Do(func() { xgb.Logger.SetOutput(debugWriter{log}) })
	if strings.TrimSpace(name) == "" {
		return nil, fmt.Errorf("%w: no display given: pass --display or set DISPLAY; %s", ErrNoDisplay, HowToStart)
	}
	// xgb parses names loosely and panics on some (":0/x"): only checked
	// names reach it.
	if _, err := ParseName(name, opts.AllowRemote); err != nil {
		return nil, err
	}
	type result struct {
		c   *xgb.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				ch <- result{nil, PanicError("connect to X display "+name, r)}
			}
		}()
		c, err := xgb.NewConnDisplay(name)
		ch <- result{c, err}
	}()
	var xc *xgb.Conn
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("%w: connect to X display %s: %v; is it running? %s", ErrNoDisplay, name, r.err, HowToStart)
		}
		xc = r.c
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.c != nil {
				r.c.Close()
			}
		}()
		return nil, fmt.Errorf("connect to X display %s: %w", name, ctx.Err())
	}
	c := &Conn{X: xc, Name: name, log: log.With("display", name), atoms: map[string]xproto.Atom{},
		subs: map[int]func(xgb.Event){}, done: make(chan struct{}), readerEnd: make(chan struct{})}
	if err := c.safeSetup(); err != nil {
		xc.Close()
		return nil, fmt.Errorf("set up X display %s: %w", name, err)
	}
	go c.read()
	c.log.Debug("display connected", "size", fmt.Sprintf("%dx%d", c.Screen.Width, c.Screen.Height),
		"depth", c.Screen.Depth, "shm", c.Ext.SHM, "damage", c.Ext.Damage, "xtest", c.Ext.XTest)
	return c, nil
}

// safeSetup runs setup, turning a panic in the X library into an error.
func (c *Conn) safeSetup() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = PanicError("read the server's setup", r)
		}
	}()
	return c.setup()
}

func (c *Conn) setup() error {
	scr, err := screenOf(xproto.Setup(c.X), c.X.DefaultScreen, c.Name)
	if err != nil {
		return err
	}
	c.Screen = scr

	info, err := initExtensions(c.X)
	if err != nil {
		return err
	}
	ext := info.ext
	c.firstEvent = info.firstEvent
	if ext.XCMisc {
		c.Ext.XCMisc = true
		c.X.SetIDRangeFunc(xidRange)
	}
	c.Ext.SHM, c.Ext.XTest, c.Ext.ScreenSaver = ext.SHM, ext.XTest, ext.ScreenSaver
	if ext.XFixes {
		if _, err := xfixes.QueryVersion(c.X, 5, 0).Reply(); err == nil {
			c.Ext.XFixes = true
		}
	}
	if ext.Damage && c.Ext.XFixes {
		if _, err := damage.QueryVersion(c.X, 1, 1).Reply(); err == nil {
			c.Ext.Damage = true
		}
	}
	return nil
}

// screenOf describes screen n of the server's setup (name is the display,
// for the error).
func screenOf(setup *xproto.SetupInfo, n int, name string) (Screen, error) {
	if setup == nil || len(setup.Roots) == 0 {
		return Screen{}, errors.New("server has no screens")
	}
	if n < 0 || n >= len(setup.Roots) {
		return Screen{}, fmt.Errorf("%w %q: the server has %d screen(s), so the screen number must be below %d", ErrBadName, name, len(setup.Roots), len(setup.Roots))
	}
	scr := setup.Roots[n]
	s := Screen{Root: scr.Root, Width: int(scr.WidthInPixels), Height: int(scr.HeightInPixels),
		Depth: int(scr.RootDepth), Visual: scr.RootVisual, LSBFirst: setup.ImageByteOrder == xproto.ImageOrderLSBFirst}
	for _, f := range setup.PixmapFormats {
		if int(f.Depth) == s.Depth {
			s.BitsPerPixel, s.ScanlinePad = int(f.BitsPerPixel), int(f.ScanlinePad)
		}
	}
	for _, d := range scr.AllowedDepths {
		for _, v := range d.Visuals {
			if v.VisualId == scr.RootVisual {
				s.RedMask, s.GreenMask, s.BlueMask = v.RedMask, v.GreenMask, v.BlueMask
			}
		}
	}
	return s, nil
}

// xidRange asks the server for a range of free resource ids (XC-MISC), for
// xgb when its initial range is used up.
func xidRange(c *xgb.Conn) (uint32, uint32, error) {
	r, err := xcmisc.GetXIDRange(c).Reply()
	if err != nil {
		return 0, 0, err
	}
	return r.StartId, r.Count, nil
}

// read is the connection's single event reader.
func (c *Conn) read() {
	defer close(c.readerEnd)
	defer c.closeOnce.Do(func() { close(c.done) })
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("display event reader stopped", "err", PanicError("read X events", r))
			c.X.Close()
		}
	}()
	for {
		ev, xerr := c.X.WaitForEvent()
		if ev == nil && xerr == nil {
			c.log.Debug("display connection ended")
			return
		}
		if xerr != nil {
			c.log.Debug("x error", "err", xerr.Error())
			continue
		}
		ev = c.decode(ev)
		c.subMu.RLock()
		for _, fn := range c.subs {
			fn(ev)
		}
		c.subMu.RUnlock()
	}
}

// Subscribe registers fn to receive every event on this connection, in
// order, on the reader goroutine (fn must not block or issue X round trips).
// The returned func unsubscribes.
func (c *Conn) Subscribe(fn func(xgb.Event)) (unsubscribe func()) {
	c.subMu.Lock()
	id := c.nextID
	c.nextID++
	c.subs[id] = fn
	c.subMu.Unlock()
	return func() {
		c.subMu.Lock()
		delete(c.subs, id)
		c.subMu.Unlock()
	}
}

// Done is closed when the connection is closed or lost (the server died).
func (c *Conn) Done() <-chan struct{} { return c.done }

// Alive reports whether the connection is still open.
func (c *Conn) Alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// Close closes the connection and waits for its event reader to stop.
func (c *Conn) Close() {
	c.X.Close()
	<-c.readerEnd
}

// Sync waits until the server has processed every request sent so far.
func (c *Conn) Sync(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := xproto.GetInputFocus(c.X).Reply(); err != nil {
		return fmt.Errorf("sync with X display %s: %w", c.Name, err)
	}
	return nil
}

// Atom interns name (cached).
func (c *Conn) Atom(name string) (xproto.Atom, error) {
	c.atomMu.Lock()
	a, ok := c.atoms[name]
	c.atomMu.Unlock()
	if ok {
		return a, nil
	}
	r, err := xproto.InternAtom(c.X, false, uint16(len(name)), name).Reply()
	if err != nil {
		return 0, fmt.Errorf("intern atom %s on %s: %w", name, c.Name, err)
	}
	c.atomMu.Lock()
	c.atoms[name] = r.Atom
	c.atomMu.Unlock()
	return r.Atom, nil
}

func (c *Conn) atoms4(names ...string) ([]xproto.Atom, error) {
	out := make([]xproto.Atom, len(names))
	for i, n := range names {
		a, err := c.Atom(n)
		if err != nil {
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}

// debugWriter sends xgb's log lines to slog at Debug.
type debugWriter struct{ log *slog.Logger }

func (w debugWriter) Write(p []byte) (int, error) {
	w.log.Debug("xgb", "msg", string(bytes.TrimSpace(p)))
	return len(p), nil
}
