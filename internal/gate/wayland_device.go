package gate

import (
	"context"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/input"
)

// wlDevice is a Wayland display's input device: a virtual pointer and
// keyboard (internal/wayland/virtual) with the X11 device's surface:
// pixels clamped into the working area, Do's 0..1000 coordinates, click
// counts, drags along a path, held keys, held modifiers, a dry run.
//
// Wayland tells no client where the pointer is; the device reports where
// it last put it (an error before its first move), so a move by the
// user's own mouse is not seen.
type wlDevice struct {
	mu      sync.Mutex
	v       wlInput // wlroots' virtual devices, or mutter's remote desktop (gnome.go)
	dpy     string
	area    Area
	opts    input.Options
	log     *slog.Logger
	*wlSeat // shared by the display's devices: they drive one cursor
}

// wlSeat is what acu knows of a Wayland display's one cursor, which all
// its virtual pointers move: where acu last put it and the buttons it
// holds. The device that changes it holds its own lock, and the gate runs
// one effect at a time per display.
type wlSeat struct {
	smu     sync.Mutex
	pos     image.Point
	known   bool  // pos is where acu put the pointer
	pressed []int // buttons ButtonDown left down
}

// device opens a virtual device on the display with area as its working
// area (clipped to the output).
func (w *wlConn) device(ctx context.Context, area Area, o input.Options) (*wlDevice, error) {
	v, err := w.openInput(ctx)
	if err != nil {
		var ge *Error
		if errors.As(err, &ge) {
			return nil, err
		}
		return nil, &Error{Kind: Unavailable, Field: "display", Err: err, Message: fmt.Sprintf("open an input device on %s: %v", w.name, err)}
	}
	if o.DragSteps <= 0 {
		o.DragSteps = input.DefaultDragSteps
	}
	if o.DragStepDelay == 0 {
		o.DragStepDelay = input.DefaultDragStepDelay
	}
	if o.ClickDelay == 0 {
		o.ClickDelay = input.DefaultClickDelay
	}
	if o.DoubleClickGap == 0 {
		o.DoubleClickGap = input.DefaultDoubleClickGap
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	sw, sh := v.Size()
	r := image.Rect(area.X, area.Y, area.X+area.W, area.Y+area.H).Intersect(image.Rect(0, 0, sw, sh))
	if r.Empty() {
		r = image.Rect(0, 0, sw, sh)
	}
	return &wlDevice{v: v, dpy: w.name, area: Area{X: r.Min.X, Y: r.Min.Y, W: r.Dx(), H: r.Dy()}, opts: o, log: o.Logger, wlSeat: &w.seat}, nil
}

// run runs one action under the device's lock; a dry run only logs it.
func (d *wlDevice) run(ctx context.Context, what string, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.opts.DryRun {
		d.log.Info("dry run: input not sent", "display", d.dpy, "action", what)
		return nil
	}
	if err := fn(); err != nil {
		return fmt.Errorf("%s on %s: %w", what, d.dpy, err)
	}
	return nil
}

func (d *wlDevice) clamp(p image.Point) image.Point {
	a := d.area
	return image.Pt(max(a.X, min(p.X, a.X+a.W-1)), max(a.Y, min(p.Y, a.Y+a.H-1)))
}

// at is p clamped, or where the pointer is when p is nil.
func (d *wlDevice) at(p *image.Point) (image.Point, error) {
	if p != nil {
		return d.clamp(*p), nil
	}
	d.smu.Lock()
	defer d.smu.Unlock()
	if !d.known {
		return image.Point{}, errNoPointer
	}
	return d.pos, nil
}

var errNoPointer = errors.New("no pointer position on this Wayland display: Wayland tells no client where the pointer is, and acu has not moved it yet; give a position")

func checkButton(button int) error {
	switch button {
	case 1, 2, 3, 8, 9:
		return nil
	}
	return fmt.Errorf("button %d: use 1 (left), 2 (middle), 3 (right), 8 (back) or 9 (forward)", button)
}

func (d *wlDevice) moved(p image.Point) {
	d.smu.Lock()
	d.pos, d.known = p, true
	d.smu.Unlock()
}

// setPressed records button as held (down) or not.
func (d *wlDevice) setPressed(button int, down bool) error {
	d.smu.Lock()
	defer d.smu.Unlock()
	i := slices.Index(d.pressed, button)
	switch {
	case down && i >= 0:
		return fmt.Errorf("button %d is already down: send mouse_up first", button)
	case down:
		d.pressed = append(d.pressed, button)
	case i >= 0:
		d.pressed = slices.Delete(d.pressed, i, i+1)
	}
	return nil
}

func (d *wlDevice) MoveTo(ctx context.Context, p image.Point) error {
	return d.run(ctx, "move", func() error {
		q := d.clamp(p)
		if err := d.v.Move(ctx, q.X, q.Y); err != nil {
			return err
		}
		d.moved(q)
		return nil
	})
}

func (d *wlDevice) ClickAt(ctx context.Context, p *image.Point, button, count int) error {
	if err := checkButton(button); err != nil {
		return err
	}
	if count < 1 || count > MaxClickCount {
		return fmt.Errorf("click count %d: use 1 to %d", count, MaxClickCount)
	}
	return d.run(ctx, "click", func() error {
		q, err := d.at(p)
		if err != nil {
			return err
		}
		if err := d.v.Move(ctx, q.X, q.Y); err != nil {
			return err
		}
		d.moved(q)
		for i := range count {
			if i > 0 {
				if err := sleep(ctx, d.opts.DoubleClickGap); err != nil {
					return err
				}
			}
			if err := d.v.Button(ctx, button, true); err != nil {
				return err
			}
			_ = sleep(ctx, d.opts.ClickDelay)
			if err := d.v.Button(context.WithoutCancel(ctx), button, false); err != nil { // never left down
				return err
			}
		}
		return nil
	})
}

func (d *wlDevice) ButtonDown(ctx context.Context, p *image.Point, button int) error {
	if err := checkButton(button); err != nil {
		return err
	}
	return d.run(ctx, "mouse_down", func() error {
		q, err := d.at(p)
		if err != nil {
			return err
		}
		if err := d.setPressed(button, true); err != nil {
			return err
		}
		if err := d.v.Press(ctx, q.X, q.Y, button); err != nil {
			_ = d.setPressed(button, false)
			return err
		}
		d.moved(q)
		return nil
	})
}

func (d *wlDevice) ButtonUp(ctx context.Context, p *image.Point, button int) error {
	if err := checkButton(button); err != nil {
		return err
	}
	return d.run(ctx, "mouse_up", func() error {
		q, err := d.at(p)
		if err != nil {
			return err
		}
		_ = d.setPressed(button, false)
		if err := d.v.Release(ctx, q.X, q.Y, button); err != nil {
			return err
		}
		d.moved(q)
		return nil
	})
}

func (d *wlDevice) DragPath(ctx context.Context, button int, path []image.Point, hold time.Duration) error {
	if err := checkButton(button); err != nil {
		return err
	}
	if len(path) < 2 || len(path) > MaxPathPoints {
		return fmt.Errorf("drag path has %d points: give 2 to %d", len(path), MaxPathPoints)
	}
	if hold < 0 || hold > MaxHold {
		return fmt.Errorf("drag hold %s: use 0 to %s", hold, MaxHold)
	}
	return d.run(ctx, "drag", func() error {
		cur := d.clamp(path[0])
		if err := d.v.Press(ctx, cur.X, cur.Y, button); err != nil {
			return err
		}
		d.moved(cur)
		err := func() error {
			if err := sleep(ctx, hold); err != nil {
				return err
			}
			steps := d.opts.DragSteps
			for _, next := range path[1:] {
				next = d.clamp(next)
				for i := 1; i <= steps; i++ {
					if err := sleep(ctx, d.opts.DragStepDelay); err != nil {
						return err
					}
					q := image.Pt(cur.X+(next.X-cur.X)*i/steps, cur.Y+(next.Y-cur.Y)*i/steps)
					if err := d.v.Move(ctx, q.X, q.Y); err != nil {
						return err
					}
					d.moved(q)
				}
				cur = next
			}
			return sleep(ctx, d.opts.DragStepDelay)
		}()
		// The button is released even when ctx ended.
		d.smu.Lock()
		end := d.pos
		d.smu.Unlock()
		if rErr := d.v.Release(context.WithoutCancel(ctx), end.X, end.Y, button); err == nil {
			err = rErr
		}
		return err
	})
}

func (d *wlDevice) ScrollAt(ctx context.Context, p *image.Point, dx, dy int) error {
	if dx == 0 && dy == 0 {
		return errors.New("scroll by 0: give dy (positive scrolls down) or dx (positive scrolls right)")
	}
	if abs(dx) > MaxScroll || abs(dy) > MaxScroll {
		return fmt.Errorf("scroll by dx=%d dy=%d: at most %d wheel clicks each per action", dx, dy, MaxScroll)
	}
	return d.run(ctx, "scroll", func() error {
		q, err := d.at(p)
		if err != nil {
			return err
		}
		if err := d.v.Move(ctx, q.X, q.Y); err != nil {
			return err
		}
		d.moved(q)
		return d.v.Scroll(ctx, dx, dy)
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func (d *wlDevice) Type(ctx context.Context, text string) error {
	if err := d.CheckText(text); err != nil {
		return err
	}
	return d.run(ctx, "type", func() error { return d.v.Type(ctx, text) })
}

func (d *wlDevice) KeyHold(ctx context.Context, keys string, hold time.Duration, repeat int) error {
	if strings.TrimSpace(keys) == "" {
		return fmt.Errorf("keys %q: name at least one key, e.g. Return or ctrl+a", keys)
	}
	if repeat < 1 || repeat > MaxRepeat {
		return fmt.Errorf("key repeat %d: use 1 to %d", repeat, MaxRepeat)
	}
	if hold < 0 || hold > MaxHold {
		return fmt.Errorf("key hold %s: use 0 to %s", hold, MaxHold)
	}
	return d.run(ctx, "key", func() error {
		for r := range repeat {
			if r > 0 {
				if err := sleep(ctx, d.opts.KeyDelay); err != nil {
					return err
				}
			}
			if err := d.v.KeyHold(ctx, keys, hold); err != nil {
				return err
			}
		}
		return nil
	})
}

func (d *wlDevice) ModsDown(ctx context.Context, mods string) error {
	return d.run(ctx, "modifiers down", func() error { return d.v.ModsDown(ctx, mods) })
}

func (d *wlDevice) ModsUp(ctx context.Context) error {
	return d.run(ctx, "modifiers up", func() error { return d.v.ModsUp(context.WithoutCancel(ctx)) })
}

// Do runs one action in the Area's 0..1000 coordinates, as the X11
// device's Do does.
func (d *wlDevice) Do(ctx context.Context, a Action) error {
	if err := a.Validate(); err != nil {
		return err
	}
	px := func(x, y int) image.Point {
		d.mu.Lock()
		defer d.mu.Unlock()
		x, y = d.area.ToPixel(x, y)
		return image.Pt(x, y)
	}
	p := px(a.X, a.Y)
	switch strings.ToLower(strings.TrimSpace(a.Kind)) {
	case KindMove:
		return d.MoveTo(ctx, p)
	case KindClick:
		return d.ClickAt(ctx, &p, ButtonLeft, 1)
	case KindRightClick:
		return d.ClickAt(ctx, &p, ButtonRight, 1)
	case KindDoubleClick:
		return d.ClickAt(ctx, &p, ButtonLeft, 2)
	case KindMiddleClick:
		return d.ClickAt(ctx, &p, ButtonMiddle, 1)
	case KindDrag:
		return d.DragPath(ctx, ButtonLeft, []image.Point{p, px(a.X2, a.Y2)}, 0)
	case KindScroll:
		return d.ScrollAt(ctx, &p, a.DX, a.DY)
	case KindType:
		return d.Type(ctx, a.Text)
	default: // KindKey; Validate rejected everything else
		return d.KeyHold(ctx, a.Keys, 0, 1)
	}
}

func (d *wlDevice) Area() Area {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.area
}

func (d *wlDevice) Pointer(ctx context.Context) (image.Point, error) {
	if err := ctx.Err(); err != nil {
		return image.Point{}, err
	}
	d.smu.Lock()
	defer d.smu.Unlock()
	if !d.known {
		return image.Point{}, &Error{Kind: Conflict, Field: "display", Err: errNoPointer,
			Message: fmt.Sprintf("the pointer on %s: %v", d.dpy, errNoPointer)}
	}
	return d.pos, nil
}

// CheckText reports whether text can be typed: the virtual keyboard
// uploads a keymap with every character it types, so any character but
// a control one can.
func (d *wlDevice) CheckText(text string) error {
	if c, ok := d.v.(interface{ CheckText(string) error }); ok {
		return c.CheckText(text) // GNOME: what mutter can type
	}
	if text == "" {
		return errors.New("text is empty")
	}
	for i, r := range text {
		if r == '\n' || r == '\t' {
			continue
		}
		if r < 0x20 || (r >= 0x7f && r < 0xa0) || r == 0xfffd {
			return fmt.Errorf("character %U at byte %d cannot be typed: remove control characters", r, i)
		}
	}
	return nil
}

func (d *wlDevice) ButtonsDown() uint16 {
	d.smu.Lock()
	defer d.smu.Unlock()
	var m uint16
	for _, b := range d.pressed {
		m |= 1 << (7 + uint16(b))
	}
	return m
}

// sync returns once the compositor has processed every event the device
// sent (a wl_display.sync round trip on its connection).
func (d *wlDevice) sync(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.v.Sync(ctx)
}

// Close releases held buttons and modifiers and destroys the devices.
func (d *wlDevice) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	d.smu.Lock()
	pressed, pos := d.pressed, d.pos
	d.pressed = nil
	d.smu.Unlock()
	for _, b := range pressed {
		_ = d.v.Release(ctx, pos.X, pos.Y, b)
	}
	_ = d.v.ModsUp(ctx)
	return d.v.Close()
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
