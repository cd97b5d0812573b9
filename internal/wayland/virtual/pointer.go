// Package virtual sends input to a wlroots compositor through virtual
// devices: a pointer (zwlr_virtual_pointer_v1: absolute motion, buttons
// 1-9, wheel and horizontal scroll) and a keyboard
// (zwp_virtual_keyboard_v1) whose xkb keymap acu writes and uploads
// itself, one keycode per keysym it needs, so any Unicode character can be
// typed whatever the user's layout.
//
// Every call returns once the compositor has processed its requests (a
// wl_display.sync round trip): an input sent is an input taken, the
// no-lost-keystroke guarantee of the X11 device.
//
// A Device owns its own connection and is used by one goroutine at a time.
// It does not map 0..1000 coordinates, apply the act settings or audit:
// the gate does, above it.
package virtual

import (
	"context"
	"fmt"
	"image"
	"time"

	"github.com/acu-dev/acu/internal/wayland"
)

// Device is a virtual pointer and keyboard on one compositor's seat.
type Device struct {
	conn     *wayland.Conn
	display  string
	output   *wayland.Output
	pointer  uint32
	kbd      uint32
	keymap   *keymap
	mods     uint32   // the modifier mask last sent
	held     uint32   // the mask of the modifiers ModsDown holds
	heldKeys []string // those modifiers, in the order pressed
	start    time.Time
}

// Open connects to the compositor whose socket is at path and creates a
// virtual pointer (on its first output) and a virtual keyboard on its
// first seat. display names the display in errors (path when empty).
func Open(ctx context.Context, path, display string) (*Device, error) {
	if display == "" {
		display = path
	}
	conn, err := wayland.Dial(ctx, path)
	if err != nil {
		return nil, err
	}
	d := &Device{conn: conn, display: display, start: time.Now()}
	if err := d.setup(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("virtual input on %s: %w", display, err)
	}
	return d, nil
}

func (d *Device) setup(ctx context.Context) error {
	pm, ok := d.conn.Global("zwlr_virtual_pointer_manager_v1")
	if !ok {
		return fmt.Errorf("the compositor offers no zwlr_virtual_pointer_manager_v1 (see docs/wayland.md for what each compositor supports)")
	}
	km, ok := d.conn.Global("zwp_virtual_keyboard_manager_v1")
	if !ok {
		return fmt.Errorf("the compositor offers no zwp_virtual_keyboard_manager_v1 (see docs/wayland.md for what each compositor supports)")
	}
	seat, err := wayland.BindSeat(d.conn)
	if err != nil {
		return err
	}
	outs, err := wayland.BindOutputs(ctx, d.conn)
	if err != nil {
		return err
	}
	d.output = outs[0]
	pmID, pmVersion, err := d.conn.Bind(pm, 2, nil)
	if err != nil {
		return err
	}
	d.pointer = d.conn.NewObject("zwlr_virtual_pointer_v1", nil)
	if pmVersion >= 2 { // absolute motion maps onto this output, not the whole layout
		err = d.conn.Request(pmID, wayland.PointerManagerReqCreateWithOutput, seat, d.output.ID, d.pointer)
	} else {
		err = d.conn.Request(pmID, wayland.PointerManagerReqCreate, seat, d.pointer)
	}
	if err != nil {
		return err
	}
	kmID, _, err := d.conn.Bind(km, 1, nil)
	if err != nil {
		return err
	}
	d.kbd = d.conn.NewObject("zwp_virtual_keyboard_v1", nil)
	if err := d.conn.Request(kmID, wayland.KeyboardManagerReqCreate, seat, d.kbd); err != nil {
		return err
	}
	d.keymap = newKeymap()
	if err := d.uploadKeymap(); err != nil {
		return err
	}
	return d.sync(ctx)
}

// Close destroys the virtual devices and closes the connection.
func (d *Device) Close() error {
	_ = d.conn.Request(d.pointer, wayland.PointerReqDestroy)
	_ = d.conn.Request(d.kbd, wayland.KeyboardReqDestroy)
	return d.conn.Close()
}

// Size returns the size in pixels of the output the pointer moves on.
func (d *Device) Size() (w, h int) { return d.output.Width, d.output.Height }

func (d *Device) now() uint32 { return uint32(time.Since(d.start).Milliseconds()) }

func (d *Device) sync(ctx context.Context) error {
	if err := d.conn.Roundtrip(ctx); err != nil {
		return fmt.Errorf("virtual input on %s: %w", d.display, err)
	}
	return nil
}

// Move moves the pointer to pixel (x, y) of the output, clamped to it.
func (d *Device) Move(ctx context.Context, x, y int) error {
	if err := d.move(x, y); err != nil {
		return err
	}
	return d.sync(ctx)
}

func (d *Device) move(x, y int) error {
	w, h := d.output.Width, d.output.Height
	x, y = max(0, min(x, w-1)), max(0, min(y, h-1))
	if err := d.conn.Request(d.pointer, wayland.PointerReqMotionAbsolute, d.now(), uint32(x), uint32(y), uint32(w), uint32(h)); err != nil {
		return err
	}
	return d.conn.Request(d.pointer, wayland.PointerReqFrame)
}

// Linux input event codes of the mouse buttons (linux/input-event-codes.h).
const (
	btnLeft   = 0x110
	btnRight  = 0x111
	btnMiddle = 0x112
	btnSide   = 0x113
	btnExtra  = 0x114
)

// buttonCodes maps X11 button numbers to evdev codes; 4-7 are the wheel.
var buttonCodes = map[int]uint32{1: btnLeft, 2: btnMiddle, 3: btnRight, 8: btnSide, 9: btnExtra}

// Button presses (down) or releases button 1-9, numbered as on X11: 1
// left, 2 middle, 3 right, 4/5 wheel up/down, 6/7 wheel left/right, 8/9
// back/forward. A wheel "button" scrolls one step when pressed; its
// release does nothing.
func (d *Device) Button(ctx context.Context, button int, down bool) error {
	if err := d.button(button, down); err != nil {
		return err
	}
	return d.sync(ctx)
}

func (d *Device) button(button int, down bool) error {
	switch button {
	case 4, 5, 6, 7:
		if !down {
			return nil
		}
		dx, dy := 0, -1
		switch button {
		case 5:
			dy = 1
		case 6:
			dx, dy = -1, 0
		case 7:
			dx, dy = 1, 0
		}
		return d.scroll(dx, dy)
	}
	code, ok := buttonCodes[button]
	if !ok {
		return fmt.Errorf("mouse button %d: want 1..9", button)
	}
	state := uint32(0)
	if down {
		state = 1
	}
	if err := d.conn.Request(d.pointer, wayland.PointerReqButton, d.now(), code, state); err != nil {
		return err
	}
	return d.conn.Request(d.pointer, wayland.PointerReqFrame)
}

// Click moves to (x, y) and presses and releases button count times.
func (d *Device) Click(ctx context.Context, x, y, button, count int) error {
	if err := d.move(x, y); err != nil {
		return err
	}
	for range count {
		if err := d.button(button, true); err != nil {
			return err
		}
		if err := d.button(button, false); err != nil {
			return err
		}
	}
	return d.sync(ctx)
}

// Scroll scrolls by dx, dy wheel steps (positive: right, down).
func (d *Device) Scroll(ctx context.Context, dx, dy int) error {
	if err := d.scroll(dx, dy); err != nil {
		return err
	}
	return d.sync(ctx)
}

// wheelStep is the axis value of one wheel click (libinput's 15 degrees).
const wheelStep = 15

func (d *Device) scroll(dx, dy int) error {
	const axisVertical, axisHorizontal, sourceWheel = 0, 1, 0
	if err := d.conn.Request(d.pointer, wayland.PointerReqAxisSource, uint32(sourceWheel)); err != nil {
		return err
	}
	t := d.now()
	for _, a := range []struct {
		axis uint32
		n    int
	}{{axisVertical, dy}, {axisHorizontal, dx}} {
		if a.n == 0 {
			continue
		}
		if err := d.conn.Request(d.pointer, wayland.PointerReqAxisDiscrete, t, a.axis, wayland.Fixed(wheelStep*a.n), int32(a.n)); err != nil {
			return err
		}
	}
	return d.conn.Request(d.pointer, wayland.PointerReqFrame)
}

// Press moves to (x, y) and presses button (1-3, 8, 9) without releasing
// it: the start of a drag, or a hold.
func (d *Device) Press(ctx context.Context, x, y, button int) error {
	return d.pressOrRelease(ctx, x, y, button, true)
}

// Release moves to (x, y) and releases button.
func (d *Device) Release(ctx context.Context, x, y, button int) error {
	return d.pressOrRelease(ctx, x, y, button, false)
}

func (d *Device) pressOrRelease(ctx context.Context, x, y, button int, down bool) error {
	if _, ok := buttonCodes[button]; !ok {
		return fmt.Errorf("press or release mouse button %d: want 1, 2, 3, 8 or 9 (4-7 are the wheel)", button)
	}
	if err := d.move(x, y); err != nil {
		return err
	}
	if err := d.button(button, down); err != nil {
		return err
	}
	return d.sync(ctx)
}

// Drag presses button at path[0], moves through the rest of path (each
// point taken by the compositor before the next, step apart) and
// releases it at the last point.
func (d *Device) Drag(ctx context.Context, button int, path []image.Point, step time.Duration) error {
	if len(path) < 2 {
		return fmt.Errorf("drag: a path needs at least two points, got %d", len(path))
	}
	if err := d.Press(ctx, path[0].X, path[0].Y, button); err != nil {
		return err
	}
	release := func() error {
		return d.Release(context.WithoutCancel(ctx), path[len(path)-1].X, path[len(path)-1].Y, button)
	}
	for _, p := range path[1:] {
		if step > 0 {
			t := time.NewTimer(step)
			select {
			case <-ctx.Done():
				t.Stop()
				_ = release() // never leave the button down
				return ctx.Err()
			case <-t.C:
			}
		}
		if err := d.Move(ctx, p.X, p.Y); err != nil {
			_ = release()
			return err
		}
	}
	return release()
}
