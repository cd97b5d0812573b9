package virtual

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// KeyHold presses the combos of keys as Key does, each combo's key held
// down for hold before it is released (a long press: key repeat in the
// app, or a game's held key).
func (d *Device) KeyHold(ctx context.Context, keys string, hold time.Duration) error {
	if hold <= 0 {
		return d.Key(ctx, keys)
	}
	combos, err := parseKeys(keys)
	if err != nil {
		return err
	}
	if err := d.ensure(syms(combos)); err != nil {
		return err
	}
	for _, c := range combos {
		if err := d.comboDown(c); err != nil {
			return err
		}
		if err := d.key(c.sym, true); err != nil {
			return err
		}
		if err := d.sync(ctx); err != nil {
			return err
		}
		t := time.NewTimer(hold)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
		// Released even when ctx ended: a key is never left down.
		if err := d.key(c.sym, false); err != nil {
			return err
		}
		if err := d.comboUp(c); err != nil {
			return err
		}
		if err := d.sync(context.WithoutCancel(ctx)); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// ModsDown presses modifier keys ("shift", "ctrl+alt") and leaves them
// down, with their bits in the modifier mask, so the clicks, scrolls and
// keys that follow carry them, until ModsUp.
func (d *Device) ModsDown(ctx context.Context, mods string) error {
	fields := strings.FieldsFunc(mods, func(r rune) bool { return r == '+' || r == ' ' || r == ',' })
	if len(fields) == 0 {
		return fmt.Errorf("modifiers %q: name at least one of shift, ctrl, alt, super", mods)
	}
	var names []string
	for _, f := range fields {
		m, ok := modifierAliases[strings.ToLower(f)]
		if !ok {
			return fmt.Errorf("modifiers %q: %q is not a modifier (shift, ctrl, alt, super)", mods, f)
		}
		names = append(names, m)
	}
	for _, m := range names {
		mod := modifiers[m]
		if d.held&mod.mask != 0 {
			continue
		}
		if err := d.key(mod.keysym, true); err != nil {
			return err
		}
		d.held |= mod.mask
		d.heldKeys = append(d.heldKeys, m)
		if err := d.setMods(d.held); err != nil {
			return err
		}
	}
	return d.sync(ctx)
}

// ModsUp releases what ModsDown pressed, last first.
func (d *Device) ModsUp(ctx context.Context) error {
	for i := len(d.heldKeys) - 1; i >= 0; i-- {
		mod := modifiers[d.heldKeys[i]]
		if err := d.key(mod.keysym, false); err != nil {
			return err
		}
		d.held &^= mod.mask
		if err := d.setMods(d.held); err != nil {
			return err
		}
	}
	d.heldKeys = d.heldKeys[:0]
	return d.sync(ctx)
}

// Sync returns once the compositor has processed every request sent so
// far (a wl_display.sync round trip on the device's connection).
func (d *Device) Sync(ctx context.Context) error { return d.sync(ctx) }
