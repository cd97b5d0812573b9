package input

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"

	"github.com/acu-dev/acu/internal/display"
)

// Defaults for zero Options fields.
const (
	DefaultDragSteps      = 20                    // DRAG_DURATION_STEPS
	DefaultDragStepDelay  = 10 * time.Millisecond // DRAG_STEP_DELAY
	DefaultClickDelay     = 10 * time.Millisecond // button held down in a click
	DefaultDoubleClickGap = 60 * time.Millisecond // between the clicks of a double click
	DefaultRemapHold      = time.Second           // a temporary keymap entry kept after its last key, when no client proves it read it
	DefaultRemapIdle      = 2 * time.Second       // temporary keymap entries restored after this long unused
	MaxScroll             = 100                   // wheel clicks per Scroll call
)

// Options configures a Device. Zero durations take the defaults above; a
// negative duration means no delay at all.
type Options struct {
	// DragSteps is the number of interpolated pointer moves between press
	// and release in a drag (DRAG_DURATION_STEPS).
	DragSteps int
	// DragStepDelay separates the moves of a drag (DRAG_STEP_DELAY).
	DragStepDelay time.Duration
	// ClickDelay is how long a button stays down in a click.
	ClickDelay time.Duration
	// DoubleClickGap separates the two clicks of a double click; keep it well
	// under the toolkits' double-click time (about 250-400 ms).
	DoubleClickGap time.Duration
	// KeyDelay separates typed keys. Zero (the default) means none.
	KeyDelay time.Duration
	// RemapHold is how long a spare keycode remapped to type a character
	// the keymap lacks keeps that mapping after the last key using it
	// before it may change, when no read proof (SetReadProof) says the
	// client has read that key: clients look the mapping up lazily, when
	// they handle the key.
	RemapHold time.Duration
	// RemapIdle is how long temporary mappings stay unused before they are
	// restored; until then a burst of typing reuses them.
	RemapIdle time.Duration
	// DryRun maps, validates and logs every action without sending any
	// event (PHYSICAL_EXECUTION=false).
	DryRun bool
	// Logger receives per-action Debug records; nil discards them.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.DragSteps <= 0 {
		o.DragSteps = DefaultDragSteps
	}
	o.DragStepDelay = orDefault(o.DragStepDelay, DefaultDragStepDelay)
	o.ClickDelay = orDefault(o.ClickDelay, DefaultClickDelay)
	o.DoubleClickGap = orDefault(o.DoubleClickGap, DefaultDoubleClickGap)
	o.KeyDelay = orDefault(o.KeyDelay, 0)
	o.RemapHold = orDefault(o.RemapHold, DefaultRemapHold)
	o.RemapIdle = orDefault(o.RemapIdle, DefaultRemapIdle)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

func orDefault(d, def time.Duration) time.Duration {
	switch {
	case d < 0:
		return 0
	case d == 0:
		return def
	}
	return d
}

// Mouse buttons as X numbers them.
const (
	ButtonLeft       = 1
	ButtonMiddle     = 2
	ButtonRight      = 3
	buttonWheelUp    = 4
	buttonWheelDown  = 5
	buttonWheelLeft  = 6
	buttonWheelRight = 7
	// ButtonBack and ButtonForward are the side buttons (X buttons 8 and
	// 9): browsers go back and forward in history on them, toolkits report
	// them as presses of buttons 8 and 9.
	ButtonBack    = 8
	ButtonForward = 9
)

// X core event types that XTEST fakes.
const (
	evKeyPress      = 2
	evKeyRelease    = 3
	evButtonPress   = 4
	evButtonRelease = 5
	evMotion        = 6
)

// ErrNoXTest is returned by New when the X server lacks the XTEST extension.
var ErrNoXTest = errors.New("no XTEST extension on the X server: start Xvfb or Xorg with XTEST enabled (it is on by default; remove '-extension XTEST')")

// Device sends pointer and keyboard input to one X display through XTEST.
// Every method takes normalized 0..1000 coordinates within the working area
// and maps them to pixels at the last moment, clamped into the area. Methods
// are safe for concurrent use; actions run one at a time.
type Device struct {
	x      *xgb.Conn
	root   xproto.Window
	screen Area // the whole screen
	opts   Options
	log    *slog.Logger

	mu       sync.Mutex
	area     Area
	km       *keymap
	remapped map[uint32]xproto.Keycode    // keysym -> spare keycode mapped to it now
	used     map[xproto.Keycode]time.Time // remapped keycode -> when a key last used it
	free     []xproto.Keycode             // spare keycodes not remapped
	proof    func(context.Context) error  // the focused client has read all input sent so far
	proved   time.Time                    // input sent before this was read (the last proof)
	idle     *time.Timer                  // restores the remaps once unused for RemapIdle
	closed   bool
	pending  []xproto.ChangeKeyboardMappingCookie
	cookies  []xtest.FakeInputCookie
	held     []heldInput // pressed and not yet released, released on failure
	down     []byte      // buttons pressed by ButtonDown and not yet released by ButtonUp
	downKeys []byte      // modifier keys pressed by ModsDown and not yet released by ModsUp
}

type heldInput struct {
	release byte // evKeyRelease or evButtonRelease
	detail  byte
}

// New returns a Device sending input to the display c through XTEST, with
// normalized coordinates mapped into area (clipped to the screen). It reads
// the keyboard mapping once. It fails with ErrNoXTest when the server lacks
// XTEST. The Device does not own c.
func New(c *display.Conn, area Area, opts Options) (*Device, error) {
	if !c.Ext.XTest {
		return nil, fmt.Errorf("input on display %s: %w", c.Name, ErrNoXTest)
	}
	d, err := newDevice(c.X, c.Screen.Root, c.Screen.Width, c.Screen.Height, area, opts)
	if err != nil {
		return nil, fmt.Errorf("input on display %s: %w", c.Name, err)
	}
	d.log = d.log.With("display", c.Name)
	return d, nil
}

// newDevice builds a Device on an open connection whose XTEST extension is
// initialized, for the screen with the given root window and size.
func newDevice(x *xgb.Conn, root xproto.Window, screenW, screenH int, area Area, opts Options) (*Device, error) {
	screen := Area{0, 0, screenW, screenH}
	clipped, err := clip(area, screen)
	if err != nil {
		return nil, err
	}
	km, err := loadKeymap(x)
	if err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	d := &Device{
		x:        x,
		root:     root,
		screen:   screen,
		opts:     opts,
		log:      opts.Logger,
		area:     clipped,
		km:       km,
		remapped: make(map[uint32]xproto.Keycode),
		used:     make(map[xproto.Keycode]time.Time),
		free:     append([]xproto.Keycode(nil), km.spare...),
	}
	return d, nil
}

// clip intersects a with the screen, failing when nothing is left.
func clip(a, screen Area) (Area, error) {
	if a.Empty() {
		return Area{}, fmt.Errorf("working area %s is empty: give it a positive width and height", a)
	}
	x1, y1 := max(a.X, screen.X), max(a.Y, screen.Y)
	x2, y2 := min(a.X+a.W, screen.X+screen.W), min(a.Y+a.H, screen.Y+screen.H)
	if x2 <= x1 || y2 <= y1 {
		return Area{}, fmt.Errorf("working area %s lies outside the %dx%d screen: use AreaFromCrop to build it", a, screen.W, screen.H)
	}
	return Area{x1, y1, x2 - x1, y2 - y1}, nil
}

// Area returns the current working area.
func (d *Device) Area() Area {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.area
}

// SetArea changes the working area (after a crop change), clipped to the
// screen.
func (d *Device) SetArea(a Area) error {
	clipped, err := clip(a, d.screen)
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.area = clipped
	d.mu.Unlock()
	return nil
}

// ReloadKeymap reads the server's keyboard mapping again, after the layout
// changed (setxkbmap). Temporary remaps are restored first.
func (d *Device) ReloadKeymap(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.restoreRemaps(ctx, false); err != nil {
		return err
	}
	km, err := loadKeymap(d.x)
	if err != nil {
		return err
	}
	d.km = km
	d.free = append(d.free[:0], km.spare...)
	return nil
}

// Close restores any keycode still remapped. It does not close the X
// connection, which belongs to the caller.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	if d.idle != nil {
		d.idle.Stop()
	}
	for _, b := range d.down { // buttons a ButtonDown left pressed
		d.queue(evButtonRelease, b, 0, 0)
	}
	d.down = nil
	for i := len(d.downKeys) - 1; i >= 0; i-- { // modifiers ModsDown left pressed
		d.queue(evKeyRelease, d.downKeys[i], 0, 0)
	}
	d.downKeys = nil
	ferr := d.flush()
	if err := d.restoreRemaps(context.Background(), false); err != nil {
		return err
	}
	return ferr
}

// Move moves the pointer to (x, y).
func (d *Device) Move(ctx context.Context, x, y int) error {
	return d.run(ctx, "move", func() error { return d.moveTo(ctx, x, y) })
}

// Click clicks the left button at (x, y).
func (d *Device) Click(ctx context.Context, x, y int) error {
	return d.run(ctx, "click", func() error { return d.click(ctx, x, y, ButtonLeft, 1) })
}

// RightClick clicks the right button at (x, y).
func (d *Device) RightClick(ctx context.Context, x, y int) error {
	return d.run(ctx, "right_click", func() error { return d.click(ctx, x, y, ButtonRight, 1) })
}

// MiddleClick clicks the middle button at (x, y).
func (d *Device) MiddleClick(ctx context.Context, x, y int) error {
	return d.run(ctx, "middle_click", func() error { return d.click(ctx, x, y, ButtonMiddle, 1) })
}

// DoubleClick clicks the left button twice at (x, y), DoubleClickGap apart.
func (d *Device) DoubleClick(ctx context.Context, x, y int) error {
	return d.run(ctx, "double_click", func() error { return d.click(ctx, x, y, ButtonLeft, 2) })
}

// Drag presses the left button at (x1, y1), moves to (x2, y2) in DragSteps
// interpolated steps DragStepDelay apart, and releases it there.
func (d *Device) Drag(ctx context.Context, x1, y1, x2, y2 int) error {
	return d.run(ctx, "drag", func() error {
		if err := d.moveTo(ctx, x1, y1); err != nil {
			return err
		}
		px1, py1 := d.area.ToPixel(x1, y1)
		px2, py2 := d.area.ToPixel(x2, y2)
		if err := d.press(evButtonPress, ButtonLeft); err != nil {
			return err
		}
		steps := d.opts.DragSteps
		for i := 1; i <= steps; i++ {
			if err := d.pause(ctx, d.opts.DragStepDelay); err != nil {
				return err
			}
			px := px1 + (px2-px1)*i/steps
			py := py1 + (py2-py1)*i/steps
			if err := d.send(evMotion, 0, px, py); err != nil {
				return err
			}
		}
		if err := d.pause(ctx, d.opts.DragStepDelay); err != nil {
			return err
		}
		return d.release(evButtonRelease, ButtonLeft)
	})
}

// Scroll turns the wheel at (x, y) by dy clicks: positive scrolls down
// (button 5), negative up (button 4).
func (d *Device) Scroll(ctx context.Context, x, y, dy int) error {
	return d.ScrollXY(ctx, x, y, 0, dy)
}

// ScrollXY turns the wheel at (x, y) by dx clicks horizontally (positive
// right, button 7; negative left, button 6) then dy clicks vertically.
func (d *Device) ScrollXY(ctx context.Context, x, y, dx, dy int) error {
	if dx == 0 && dy == 0 {
		return errors.New("scroll by 0: give dy (positive scrolls down) or dx (positive scrolls right)")
	}
	if abs(dx) > MaxScroll || abs(dy) > MaxScroll {
		return fmt.Errorf("scroll by dx=%d dy=%d: at most %d wheel clicks each per action", dx, dy, MaxScroll)
	}
	return d.run(ctx, "scroll", func() error {
		if err := d.moveTo(ctx, x, y); err != nil {
			return err
		}
		if err := d.wheel(ctx, dx, buttonWheelLeft, buttonWheelRight); err != nil {
			return err
		}
		return d.wheel(ctx, dy, buttonWheelUp, buttonWheelDown)
	})
}

func (d *Device) wheel(ctx context.Context, n int, neg, pos byte) error {
	button := pos
	if n < 0 {
		button, n = neg, -n
	}
	for range n {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := d.press(evButtonPress, button); err != nil {
			return err
		}
		if err := d.release(evButtonRelease, button); err != nil {
			return err
		}
	}
	return nil
}

// Key presses key chords: "ctrl+l", "shift+Tab", "Return", "alt+F4",
// "ctrl+shift+t", several separated by spaces ("ctrl+a Delete"). Keys are X
// keysym names or single characters; modifiers are ctrl/control, shift, alt,
// super/win/meta, case-insensitive.
func (d *Device) Key(ctx context.Context, keys string) error {
	combos, err := parseKeys(keys)
	if err != nil {
		return err
	}
	return d.run(ctx, "key", func() error {
		for i, c := range combos {
			if i > 0 {
				if err := d.pause(ctx, d.opts.KeyDelay); err != nil {
					return err
				}
			}
			if err := d.chord(ctx, c); err != nil {
				return fmt.Errorf("press %q: %w", truncate(keys), err)
			}
		}
		return nil
	})
}

// Type types text: letters, digits and punctuation (with Shift where the
// keymap needs it), newline (Return) and tab, and any other character the
// keymap lacks by remapping a spare keycode for the duration of the call.
func (d *Device) Type(ctx context.Context, text string) error {
	if text == "" {
		return errors.New("type: empty text")
	}
	syms := make([]uint32, 0, len(text))
	prev := rune(0)
	for i, r := range text {
		if r == '\n' && prev == '\r' {
			prev = r
			continue
		}
		prev = r
		ks, ok := runeKeysym(r)
		if !ok {
			return fmt.Errorf("type: character %U at byte %d cannot be typed: remove control characters", r, i)
		}
		syms = append(syms, ks)
	}
	return d.run(ctx, "type", func() error {
		// Caps Lock would turn typed letters upside down: switch it off
		// for the call and back on afterwards, even when typing fails.
		if code, on, err := d.capsLock(); err != nil {
			return err
		} else if on {
			d.tap(code)
			defer d.tap(code)
		}
		for i, ks := range syms {
			if i > 0 {
				if err := d.pause(ctx, d.opts.KeyDelay); err != nil {
					return err
				}
			}
			if err := d.chord(ctx, combo{key: ks}); err != nil {
				return fmt.Errorf("type character %d of %q: %w", i, truncate(text), err)
			}
		}
		return nil
	})
}

// run executes one action under the device lock, releasing whatever stays
// held when it fails (cancelled context, X error) so no key or button is
// left down.
func (d *Device) run(ctx context.Context, what string, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	err := fn()
	if ferr := d.flush(); err == nil {
		err = ferr
	}
	if len(d.held) > 0 {
		for i := len(d.held) - 1; i >= 0; i-- {
			h := d.held[i]
			d.queue(h.release, h.detail, 0, 0)
		}
		d.held = d.held[:0]
		if ferr := d.flush(); err == nil {
			err = ferr
		}
	}
	if len(d.remapped) > 0 {
		d.armIdle()
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	d.log.Debug("input action", "action", what, "area", d.area.String(), "dry_run", d.opts.DryRun)
	return nil
}

// moveTo moves the pointer to normalized (x, y) in the working area.
func (d *Device) moveTo(ctx context.Context, x, y int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	px, py := d.area.ToPixel(x, y)
	d.log.Debug("input move", "x", x, "y", y, "px", px, "py", py)
	return d.send(evMotion, 0, px, py)
}

func (d *Device) click(ctx context.Context, x, y int, button byte, n int) error {
	if err := d.moveTo(ctx, x, y); err != nil {
		return err
	}
	for i := range n {
		if i > 0 {
			if err := d.pause(ctx, d.opts.DoubleClickGap); err != nil {
				return err
			}
		}
		if err := d.press(evButtonPress, button); err != nil {
			return err
		}
		if err := d.pause(ctx, d.opts.ClickDelay); err != nil {
			return err
		}
		if err := d.release(evButtonRelease, button); err != nil {
			return err
		}
	}
	return nil
}

// chord taps c.key with c.mods held, adding Shift when the key's keysym sits
// on the shifted level.
func (d *Device) chord(ctx context.Context, c combo) error { return d.chordHold(ctx, c, 0) }

// chordHold is chord with the key held down for hold before its release.
func (d *Device) chordHold(ctx context.Context, c combo, hold time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	pos, err := d.keyFor(ctx, c.key)
	if err != nil {
		return err
	}
	mods := c.mods
	if pos.shift {
		mods |= modShift
	}
	var down [len(modOrder)]xproto.Keycode
	n := 0
	for _, m := range modOrder {
		if mods&m == 0 {
			continue
		}
		code, err := d.modifierCode(m)
		if err != nil {
			return err
		}
		if code == pos.code {
			continue // the key is the modifier itself ("shift+Shift_L")
		}
		if err := d.press(evKeyPress, byte(code)); err != nil {
			return err
		}
		down[n] = code
		n++
	}
	held, err := d.pressHeld(ctx, c.held)
	if err != nil {
		// Nothing stays down: the keys held so far, then the modifiers.
		for i := len(held) - 1; i >= 0; i-- {
			_ = d.release(evKeyRelease, byte(held[i]))
		}
		for i := n - 1; i >= 0; i-- {
			_ = d.release(evKeyRelease, byte(down[i]))
		}
		return err
	}
	if err := d.press(evKeyPress, byte(pos.code)); err != nil {
		return err
	}
	if hold > 0 {
		if err := d.pause(ctx, hold); err != nil {
			return err
		}
	}
	if err := d.release(evKeyRelease, byte(pos.code)); err != nil {
		return err
	}
	for i := len(held) - 1; i >= 0; i-- {
		if err := d.release(evKeyRelease, byte(held[i])); err != nil {
			return err
		}
	}
	for i := n - 1; i >= 0; i-- {
		if err := d.release(evKeyRelease, byte(down[i])); err != nil {
			return err
		}
	}
	return nil
}

// pressHeld presses a chord's held keys in order (their own keycodes, no
// shift added) and returns their codes for the release.
func (d *Device) pressHeld(ctx context.Context, syms []uint32) ([]xproto.Keycode, error) {
	codes := make([]xproto.Keycode, 0, len(syms))
	for _, ks := range syms {
		pos, err := d.keyFor(ctx, ks)
		if err != nil {
			return codes, err
		}
		if err := d.press(evKeyPress, byte(pos.code)); err != nil {
			return codes, err
		}
		codes = append(codes, pos.code)
	}
	return codes, nil
}

// modifierCode returns the keycode that sets modifier m.
func (d *Device) modifierCode(m modifier) (xproto.Keycode, error) {
	var code xproto.Keycode
	var ok bool
	switch m {
	case modShift:
		code, ok = d.km.modifierKey(ksShiftL, ksShiftR)
	case modCtrl:
		code, ok = d.km.modifierKey(ksControlL, ksControlR)
	case modAlt:
		code, ok = d.km.modifierKey(ksAltL, ksAltR, ksMetaL)
	case modSuper:
		code, ok = d.km.modifierKey(ksSuperL, ksSuperR)
	}
	if !ok {
		return 0, fmt.Errorf("keyboard mapping has no key for modifier %s: load a layout with one (setxkbmap us)", m)
	}
	return code, nil
}

func (m modifier) String() string {
	switch m {
	case modShift:
		return "shift"
	case modCtrl:
		return "ctrl"
	case modAlt:
		return "alt"
	case modSuper:
		return "super"
	}
	return fmt.Sprintf("modifier(%d)", uint8(m))
}

// capsLock reports whether Caps Lock is on, and the key that toggles it.
func (d *Device) capsLock() (xproto.Keycode, bool, error) {
	if d.opts.DryRun {
		return 0, false, nil
	}
	code, ok := d.km.modifierKey(ksCapsLock)
	if !ok {
		return 0, false, nil
	}
	reply, err := xproto.QueryPointer(d.x, d.root).Reply()
	if err != nil {
		return 0, false, fmt.Errorf("read modifier state: %w", err)
	}
	return code, reply.Mask&xproto.ModMaskLock != 0, nil
}

// tap queues a press and release of code (its errors surface at the next
// flush).
func (d *Device) tap(code xproto.Keycode) {
	d.queue(evKeyPress, byte(code), 0, 0)
	d.queue(evKeyRelease, byte(code), 0, 0)
}

// press sends a key or button press and remembers it until released.
func (d *Device) press(typ, detail byte) error {
	release := byte(evKeyRelease)
	if typ == evButtonPress {
		release = evButtonRelease
	}
	d.held = append(d.held, heldInput{release: release, detail: detail})
	return d.send(typ, detail, 0, 0)
}

// release sends a key or button release.
func (d *Device) release(typ, detail byte) error {
	for i := len(d.held) - 1; i >= 0; i-- {
		if d.held[i].release == typ && d.held[i].detail == detail {
			d.held = append(d.held[:i], d.held[i+1:]...)
			break
		}
	}
	return d.send(typ, detail, 0, 0)
}

// send queues one fake event. Events are checked in batches by flush, which
// pause and run call, so a burst of keys costs one round trip.
func (d *Device) send(typ, detail byte, x, y int) error {
	d.queue(typ, detail, x, y)
	if len(d.cookies) >= 64 {
		return d.flush()
	}
	return nil
}

func (d *Device) queue(typ, detail byte, x, y int) {
	if d.opts.DryRun {
		return
	}
	d.cookies = append(d.cookies, xtest.FakeInputChecked(d.x, typ, detail, 0, d.root, int16(clamp(x, -32768, 32767)), int16(clamp(y, -32768, 32767)), 0))
}

// flush waits for the server to process every queued request and reports
// the first error.
func (d *Device) flush() error {
	var err error
	for _, c := range d.pending {
		if e := c.Check(); e != nil && err == nil {
			err = e
		}
	}
	d.pending = d.pending[:0]
	for _, c := range d.cookies {
		if e := c.Check(); e != nil && err == nil {
			err = fmt.Errorf("send input event: %w", e)
		}
	}
	d.cookies = d.cookies[:0]
	return err
}

// pause waits for dur or until ctx is done, after flushing queued events so
// they reach the server before the wait. A zero pause only checks ctx: the
// events stay queued and are checked in one batch.
func (d *Device) pause(ctx context.Context, dur time.Duration) error {
	if dur <= 0 || d.opts.DryRun {
		return ctx.Err()
	}
	if err := d.flush(); err != nil {
		return err
	}
	t := time.NewTimer(dur)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
