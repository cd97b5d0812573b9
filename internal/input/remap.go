// Keys outside the keymap: a spare keycode is mapped to the keysym for as
// long as the application receiving the keys may still read it.

package input

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jezek/xgb/xproto"
)

// keyFor returns the key that types ks, remapping a spare keycode when the
// keymap has none. A keysym already remapped keeps its keycode (a burst of
// typing maps each character once); when no spare keycode is free, the
// one used least recently is taken over once the client has read its last
// key (evict).
func (d *Device) keyFor(ctx context.Context, ks uint32) (keyPos, error) {
	if pos, ok := d.km.lookup(ks); ok {
		return pos, nil
	}
	if code, ok := d.remapped[ks]; ok {
		d.used[code] = time.Now()
		return keyPos{code: code}, nil
	}
	if len(d.free) == 0 {
		if len(d.remapped) == 0 {
			return keyPos{}, fmt.Errorf("keysym 0x%x is not in the keyboard mapping and no spare keycode is free to remap: load a layout that has it", ks)
		}
		if err := d.evict(ctx); err != nil {
			return keyPos{}, err
		}
	}
	code := d.free[len(d.free)-1]
	d.free = d.free[:len(d.free)-1]
	d.remapped[ks] = code
	d.used[code] = time.Now()
	d.log.Debug("input remap keycode", "keycode", code, "keysym", fmt.Sprintf("0x%x", ks))
	if !d.opts.DryRun {
		// Checked: the server has sent every client its MappingNotify
		// before the key that needs the mapping is sent.
		d.pending = append(d.pending, xproto.ChangeKeyboardMappingChecked(d.x, 1, code, 2, []xproto.Keysym{xproto.Keysym(ks), xproto.Keysym(ks)}))
		if err := d.flush(); err != nil {
			return keyPos{}, fmt.Errorf("remap keycode %d to keysym 0x%x: %w", code, ks, err)
		}
	}
	return keyPos{code: code}, nil
}

// ErrNoReadProof is wrapped by a read proof that cannot be had for the
// client (it answers no ping): the device then keeps a mapping RemapHold
// after its last key instead.
var ErrNoReadProof = errors.New("the client cannot prove it read its input")

// RemapMaxWait bounds how long a temporary mapping waits for its client to
// prove it read its last key (a stopped or hung client) before it is
// restored all the same.
const RemapMaxWait = 30 * time.Second

// SetReadProof sets how the device learns that the client receiving its
// keys has read every key sent so far (the gate pings the focused
// client): a remapped keycode is then reused at once instead of after
// RemapHold.
func (d *Device) SetReadProof(proof func(context.Context) error) {
	d.mu.Lock()
	d.proof = proof
	d.mu.Unlock()
}

// readSince reports whether every key sent before t has been read by its
// client, asking the read proof when the last one is older than t; the
// error says why not (wrapping ErrNoReadProof when it cannot be had).
func (d *Device) readSince(ctx context.Context, t time.Time) error {
	if d.proved.After(t) {
		return nil
	}
	if d.proof == nil || d.opts.DryRun {
		return ErrNoReadProof
	}
	if err := d.flush(); err != nil {
		return err
	}
	asked := time.Now()
	if err := d.proof(ctx); err != nil {
		d.log.Debug("input read proof", "err", err)
		return err
	}
	d.proved = asked
	return nil
}

// settled waits until the key last sent at used may lose its mapping: its
// client read it (readSince), or RemapHold passed since.
func (d *Device) settled(ctx context.Context, used time.Time) error {
	if d.opts.DryRun || d.readSince(ctx, used) == nil {
		return nil
	}
	wait := time.Until(used.Add(d.opts.RemapHold))
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// evict frees the remapped keycode used least recently, once its last key
// has been read.
func (d *Device) evict(ctx context.Context) error {
	var lru xproto.Keycode
	var at time.Time
	for _, code := range d.remapped {
		if u := d.used[code]; at.IsZero() || u.Before(at) {
			lru, at = code, u
		}
	}
	if err := d.settled(ctx, at); err != nil {
		return err
	}
	for ks, code := range d.remapped {
		if code == lru {
			delete(d.remapped, ks)
		}
	}
	delete(d.used, lru)
	d.free = append(d.free, lru)
	return nil
}

// armIdle (re)starts the timer that restores the remaps once unused.
func (d *Device) armIdle() {
	if d.closed || d.opts.DryRun {
		return
	}
	if d.idle == nil {
		d.idle = time.AfterFunc(d.opts.RemapIdle, d.idleRestore)
		return
	}
	d.idle.Reset(d.opts.RemapIdle)
}

// idleRestore restores the remaps when none was used for RemapIdle.
func (d *Device) idleRestore() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || len(d.remapped) == 0 {
		return
	}
	var last time.Time
	for _, u := range d.used {
		if u.After(last) {
			last = u
		}
	}
	if wait := time.Until(last.Add(d.opts.RemapIdle)); wait > 0 {
		d.idle.Reset(wait)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), d.opts.RemapHold+time.Second)
	defer cancel()
	// A client that can answer and has not yet (stopped, busy) keeps its
	// mappings until it does, RemapMaxWait at most.
	if err := d.readSince(ctx, last); err != nil && !errors.Is(err, ErrNoReadProof) && time.Since(last) < RemapMaxWait {
		d.idle.Reset(d.opts.RemapIdle)
		return
	}
	if err := d.restoreRemaps(ctx, true); err != nil {
		d.log.Debug("input restore remaps", "err", err)
	}
}

// restoreRemaps maps every temporarily remapped keycode back to NoSymbol,
// after its client read the last key using it when hold is set (a
// cancelled ctx skips the wait, never the restore).
func (d *Device) restoreRemaps(ctx context.Context, hold bool) error {
	if len(d.remapped) == 0 {
		return nil
	}
	if hold && !d.opts.DryRun {
		var last time.Time
		for _, u := range d.used {
			if u.After(last) {
				last = u
			}
		}
		_ = d.settled(ctx, last)
	}
	var err error
	for ks, code := range d.remapped {
		if !d.opts.DryRun {
			e := xproto.ChangeKeyboardMappingChecked(d.x, 1, code, 2, []xproto.Keysym{ksNoSymbol, ksNoSymbol}).Check()
			if e != nil && err == nil {
				err = fmt.Errorf("restore keycode %d: %w", code, e)
			}
		}
		delete(d.remapped, ks)
		delete(d.used, code)
		d.free = append(d.free, code)
	}
	return err
}
