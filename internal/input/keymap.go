package input

import (
	"fmt"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// keyPos says how to produce a keysym: tap code, with Shift held or not.
type keyPos struct {
	code  xproto.Keycode
	shift bool
}

// keymap is the server's core keyboard mapping, read once per Device, with
// an index from keysym to the key that types it in group 1 (levels 1 and 2).
type keymap struct {
	min   xproto.Keycode
	per   int
	syms  []xproto.Keysym
	index map[uint32]keyPos
	spare []xproto.Keycode // keycodes with no keysym at all, free for remapping
}

// loadKeymap reads the keyboard mapping with one GetKeyboardMapping request.
func loadKeymap(x *xgb.Conn) (*keymap, error) {
	setup := xproto.Setup(x)
	lo, hi := setup.MinKeycode, setup.MaxKeycode
	if hi < lo {
		return nil, fmt.Errorf("read keyboard mapping: server reports keycodes %d..%d", lo, hi)
	}
	reply, err := xproto.GetKeyboardMapping(x, lo, byte(int(hi)-int(lo)+1)).Reply()
	if err != nil {
		return nil, fmt.Errorf("read keyboard mapping: %w", err)
	}
	return buildKeymap(lo, int(reply.KeysymsPerKeycode), reply.Keysyms), nil
}

// buildKeymap indexes a core keyboard mapping starting at keycode min with
// per keysyms per keycode. Level 1 (unshifted) wins over level 2 when a
// keysym appears on several keys, then the lowest keycode.
func buildKeymap(min xproto.Keycode, per int, syms []xproto.Keysym) *keymap {
	k := &keymap{min: min, per: per, syms: syms, index: make(map[uint32]keyPos, 2*len(syms)/max(per, 1))}
	if per <= 0 {
		return k
	}
	n := len(syms) / per
	for level := 0; level < 2 && level < per; level++ {
		for i := 0; i < n; i++ {
			ks := uint32(syms[i*per+level])
			if ks == ksNoSymbol {
				continue
			}
			if _, ok := k.index[ks]; !ok {
				k.index[ks] = keyPos{code: min + xproto.Keycode(i), shift: level == 1}
			}
		}
	}
	// Spare keycodes, highest first (the lowest ones are sometimes claimed
	// by drivers). Keycode 8 is skipped: some XKB setups treat it as invalid.
	for i := n - 1; i >= 0; i-- {
		code := int(min) + i
		if code <= 8 {
			continue
		}
		empty := true
		for _, ks := range syms[i*per : i*per+per] {
			if ks != ksNoSymbol {
				empty = false
				break
			}
		}
		if empty {
			k.spare = append(k.spare, xproto.Keycode(code))
		}
	}
	return k
}

// lookup returns the key that types ks, trying its legacy name too.
func (k *keymap) lookup(ks uint32) (keyPos, bool) {
	if p, ok := k.index[ks]; ok {
		return p, true
	}
	if old := legacyKeysym(ks); old != 0 {
		if p, ok := k.index[old]; ok {
			return p, true
		}
	}
	// Latin-1 characters are also reachable through their Unicode keysyms
	// and the other way round.
	switch {
	case ks >= 0x20 && ks <= 0xff:
		p, ok := k.index[ksUnicode+ks]
		return p, ok
	case ks >= ksUnicode+0x20 && ks <= ksUnicode+0xff:
		p, ok := k.index[ks-ksUnicode]
		return p, ok
	}
	return keyPos{}, false
}

// modifierKey returns the keycode of the first of keysyms present.
func (k *keymap) modifierKey(keysyms ...uint32) (xproto.Keycode, bool) {
	for _, ks := range keysyms {
		if p, ok := k.index[ks]; ok {
			return p.code, true
		}
	}
	return 0, false
}
