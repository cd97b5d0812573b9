package input

import (
	"context"
	"errors"
	"fmt"
	"image"
	"slices"
	"strings"
	"time"

	"github.com/jezek/xgb/xproto"
)

// Limits of the pixel-level primitives.
const (
	MaxClickCount = 3                // triple click selects a line or paragraph
	MaxHold       = 10 * time.Second // longest key or button hold
	MaxRepeat     = 100              // most repetitions of a key chord per call
	MaxPathPoints = 64               // most points of a drag path
)

// The methods below take screen pixels rather than normalized coordinates:
// callers that resolved a position exactly (an element's centre, a pixel
// of a downscaled screenshot mapped back) keep that precision on screens
// wider than 1001 pixels. Points are clamped into the working area. A nil
// point leaves the pointer where it is.

// clampPx clamps p into the working area.
func (d *Device) clampPx(p image.Point) image.Point {
	a := d.area
	return image.Pt(clamp(p.X, a.X, a.X+a.W-1), clamp(p.Y, a.Y, a.Y+a.H-1))
}

func (d *Device) movePx(ctx context.Context, p *image.Point) error {
	if p == nil {
		return ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	q := d.clampPx(*p)
	return d.send(evMotion, 0, q.X, q.Y)
}

func checkButton(button int) error {
	if (button < ButtonLeft || button > ButtonRight) && button != ButtonBack && button != ButtonForward {
		return fmt.Errorf("button %d: use 1 (left), 2 (middle), 3 (right), 8 (back) or 9 (forward)", button)
	}
	return nil
}

// MoveTo moves the pointer to screen pixel p.
func (d *Device) MoveTo(ctx context.Context, p image.Point) error {
	return d.run(ctx, "move", func() error { return d.movePx(ctx, &p) })
}

// ClickAt clicks button count times (1..MaxClickCount, DoubleClickGap
// apart) at p.
func (d *Device) ClickAt(ctx context.Context, p *image.Point, button, count int) error {
	if err := checkButton(button); err != nil {
		return err
	}
	if count < 1 || count > MaxClickCount {
		return fmt.Errorf("click count %d: use 1 to %d", count, MaxClickCount)
	}
	return d.run(ctx, "click", func() error {
		if err := d.movePx(ctx, p); err != nil {
			return err
		}
		for i := range count {
			if i > 0 {
				if err := d.pause(ctx, d.opts.DoubleClickGap); err != nil {
					return err
				}
			}
			if err := d.press(evButtonPress, byte(button)); err != nil {
				return err
			}
			if err := d.pause(ctx, d.opts.ClickDelay); err != nil {
				return err
			}
			if err := d.release(evButtonRelease, byte(button)); err != nil {
				return err
			}
		}
		return nil
	})
}

// ButtonDown presses button at p and leaves it down until ButtonUp (or
// Close) releases it.
func (d *Device) ButtonDown(ctx context.Context, p *image.Point, button int) error {
	if err := checkButton(button); err != nil {
		return err
	}
	return d.run(ctx, "mouse_down", func() error {
		if err := d.movePx(ctx, p); err != nil {
			return err
		}
		for _, b := range d.down {
			if b == byte(button) {
				return fmt.Errorf("button %d is already down: send mouse_up first", button)
			}
		}
		// Not recorded in held: run releases those at the end of every
		// action, and this press must outlive the action.
		if err := d.send(evButtonPress, byte(button), 0, 0); err != nil {
			return err
		}
		d.down = append(d.down, byte(button))
		return nil
	})
}

// ButtonUp releases button at p.
func (d *Device) ButtonUp(ctx context.Context, p *image.Point, button int) error {
	if err := checkButton(button); err != nil {
		return err
	}
	return d.run(ctx, "mouse_up", func() error {
		if err := d.movePx(ctx, p); err != nil {
			return err
		}
		for i, b := range d.down {
			if b == byte(button) {
				d.down = append(d.down[:i], d.down[i+1:]...)
				break
			}
		}
		return d.send(evButtonRelease, byte(button), 0, 0)
	})
}

// DragPath presses button at path[0], holds it for hold, moves along the
// path (each segment in DragSteps interpolated steps DragStepDelay apart)
// and releases it at the last point. A path needs 2..MaxPathPoints points.
func (d *Device) DragPath(ctx context.Context, button int, path []image.Point, hold time.Duration) error {
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
		cur := d.clampPx(path[0])
		if err := d.movePx(ctx, &cur); err != nil {
			return err
		}
		if err := d.press(evButtonPress, byte(button)); err != nil {
			return err
		}
		if err := d.pause(ctx, hold); err != nil {
			return err
		}
		steps := d.opts.DragSteps
		for _, next := range path[1:] {
			next = d.clampPx(next)
			for i := 1; i <= steps; i++ {
				if err := d.pause(ctx, d.opts.DragStepDelay); err != nil {
					return err
				}
				x := cur.X + (next.X-cur.X)*i/steps
				y := cur.Y + (next.Y-cur.Y)*i/steps
				if err := d.send(evMotion, 0, x, y); err != nil {
					return err
				}
			}
			cur = next
		}
		if err := d.pause(ctx, d.opts.DragStepDelay); err != nil {
			return err
		}
		return d.release(evButtonRelease, byte(button))
	})
}

// ScrollAt turns the wheel at p by dx clicks horizontally (positive right)
// then dy vertically (positive down).
func (d *Device) ScrollAt(ctx context.Context, p *image.Point, dx, dy int) error {
	if dx == 0 && dy == 0 {
		return errors.New("scroll by 0: give dy (positive scrolls down) or dx (positive scrolls right)")
	}
	if abs(dx) > MaxScroll || abs(dy) > MaxScroll {
		return fmt.Errorf("scroll by dx=%d dy=%d: at most %d wheel clicks each per action", dx, dy, MaxScroll)
	}
	return d.run(ctx, "scroll", func() error {
		if err := d.movePx(ctx, p); err != nil {
			return err
		}
		if err := d.wheel(ctx, dx, buttonWheelLeft, buttonWheelRight); err != nil {
			return err
		}
		return d.wheel(ctx, dy, buttonWheelUp, buttonWheelDown)
	})
}

// KeyHold presses the chords of keys (as Key) repeat times (1..MaxRepeat),
// each chord's key held down for hold (0..MaxHold) before it is released,
// KeyDelay apart.
func (d *Device) KeyHold(ctx context.Context, keys string, hold time.Duration, repeat int) error {
	combos, err := parseKeys(keys)
	if err != nil {
		return err
	}
	if repeat < 1 || repeat > MaxRepeat {
		return fmt.Errorf("key repeat %d: use 1 to %d", repeat, MaxRepeat)
	}
	if hold < 0 || hold > MaxHold {
		return fmt.Errorf("key hold %s: use 0 to %s", hold, MaxHold)
	}
	return d.run(ctx, "key", func() error {
		for r := range repeat {
			for i, c := range combos {
				if i > 0 || r > 0 {
					if err := d.pause(ctx, d.opts.KeyDelay); err != nil {
						return err
					}
				}
				if err := d.chordHold(ctx, c, hold); err != nil {
					return fmt.Errorf("press %q: %w", truncate(keys), err)
				}
			}
		}
		return nil
	})
}

// CheckKeys reports whether keys parses as a key sequence (see Key).
func CheckKeys(keys string) error {
	_, err := parseKeys(keys)
	return err
}

// CheckText reports whether Type can type text on this keyboard mapping:
// every character has a keysym, and one the mapping lacks can be remapped
// onto a spare keycode. The error names the first character that cannot.
func (d *Device) CheckText(text string) error {
	if text == "" {
		return errors.New("text is empty")
	}
	d.mu.Lock()
	spare := len(d.km.spare)
	km := d.km
	d.mu.Unlock()
	for i, r := range text {
		ks, ok := runeKeysym(r)
		if !ok {
			return fmt.Errorf("character %U at byte %d cannot be typed: remove control characters", r, i)
		}
		if _, ok := km.lookup(ks); !ok && spare == 0 {
			return fmt.Errorf("character %q (%U) at byte %d is not on the keyboard mapping and it has no spare keycode to remap: load a layout that has it (setxkbmap)", r, r, i)
		}
	}
	return nil
}

// ButtonsDown returns the buttons ButtonDown left pressed, as an X
// key-button mask (button n is 1<<(7+n)).
func (d *Device) ButtonsDown() uint16 {
	d.mu.Lock()
	defer d.mu.Unlock()
	var m uint16
	for _, b := range d.down {
		m |= 1 << (7 + uint16(b))
	}
	return m
}

// Pointer returns where the pointer is, in screen pixels.
func (d *Device) Pointer(ctx context.Context) (image.Point, error) {
	if err := ctx.Err(); err != nil {
		return image.Point{}, err
	}
	r, err := queryPointer(d)
	if err != nil {
		return image.Point{}, err
	}
	return r, nil
}

func queryPointer(d *Device) (image.Point, error) {
	r, err := xproto.QueryPointer(d.x, d.root).Reply()
	if err != nil {
		return image.Point{}, fmt.Errorf("query the pointer: %w", err)
	}
	return image.Pt(int(r.RootX), int(r.RootY)), nil
}

// ModsDown presses the modifier keys of mods ("shift", "ctrl+alt") and
// leaves them down, so that the clicks, scrolls and drags after it carry
// them, until ModsUp (or Close) releases them. It is how a click with
// shift held is done: ModsDown, ClickAt, ModsUp.
func (d *Device) ModsDown(ctx context.Context, mods string) error {
	ms, err := parseMods(mods)
	if err != nil {
		return err
	}
	return d.run(ctx, "modifiers down", func() error {
		for _, m := range ms {
			code, err := d.modifierCode(m)
			if err != nil {
				return err
			}
			if err := d.send(evKeyPress, byte(code), 0, 0); err != nil {
				return err
			}
			d.downKeys = append(d.downKeys, byte(code))
		}
		return nil
	})
}

// ModsUp releases the modifier keys ModsDown left down, last first.
func (d *Device) ModsUp(ctx context.Context) error {
	return d.run(ctx, "modifiers up", func() error {
		for i := len(d.downKeys) - 1; i >= 0; i-- {
			if err := d.send(evKeyRelease, d.downKeys[i], 0, 0); err != nil {
				return err
			}
		}
		d.downKeys = d.downKeys[:0]
		return nil
	})
}

// CheckMods reports whether mods parses as modifiers for ModsDown.
func CheckMods(mods string) error {
	_, err := parseMods(mods)
	return err
}

// parseMods parses modifiers joined by '+' or spaces ("shift",
// "ctrl+shift", "ctrl alt"): ctrl, shift, alt, super and their aliases.
func parseMods(mods string) ([]modifier, error) {
	fields := strings.FieldsFunc(mods, func(r rune) bool { return r == '+' || r == ' ' || r == ',' })
	if len(fields) == 0 {
		return nil, errors.New("no modifier given: use ctrl, shift, alt or super, joined by '+'")
	}
	var out []modifier
	for _, f := range fields {
		m, ok := parseModifier(f)
		if !ok {
			return nil, fmt.Errorf("%q is not a modifier: use ctrl, shift, alt or super, joined by '+'", truncate(f))
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out, nil
}
