package testx

import (
	"sync"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// keymap is the server's keycode -> keysyms table.
type keymap struct {
	mu      sync.Mutex
	min     xproto.Keycode
	per     int
	keysyms []xproto.Keysym
}

func (k *keymap) load(c *xgb.Conn) error {
	setup := xproto.Setup(c)
	count := byte(int(setup.MaxKeycode) - int(setup.MinKeycode) + 1)
	r, err := xproto.GetKeyboardMapping(c, setup.MinKeycode, count).Reply()
	if err != nil {
		return err
	}
	k.mu.Lock()
	k.min, k.per, k.keysyms = setup.MinKeycode, int(r.KeysymsPerKeycode), r.Keysyms
	k.mu.Unlock()
	return nil
}

// keysym applies the core protocol's rules for shift and caps lock to the
// first group of the keycode's keysyms.
func (k *keymap) keysym(code xproto.Keycode, state uint16) uint32 {
	k.mu.Lock()
	defer k.mu.Unlock()
	i := (int(code) - int(k.min)) * k.per
	if code < k.min || k.per == 0 || i+k.per > len(k.keysyms) {
		return 0
	}
	syms := k.keysyms[i : i+k.per]
	lo := uint32(syms[0])
	hi := uint32(0)
	if k.per > 1 {
		hi = uint32(syms[1])
	}
	if hi == 0 {
		hi = upper(lo)
		lo = lowerKeysym(lo)
	}
	shift := state&xproto.ModMaskShift != 0
	lock := state&xproto.ModMaskLock != 0
	if lock && isLetter(lo) {
		shift = !shift
	}
	if shift {
		return hi
	}
	return lo
}

func isLetter(ks uint32) bool { return (ks >= 'a' && ks <= 'z') || (ks >= 'A' && ks <= 'Z') }

func upper(ks uint32) uint32 {
	if ks >= 'a' && ks <= 'z' {
		return ks - 32
	}
	if ks >= 0xe0 && ks <= 0xfe && ks != 0xf7 {
		return ks - 32
	}
	return ks
}

func lowerKeysym(ks uint32) uint32 {
	if ks >= 'A' && ks <= 'Z' {
		return ks + 32
	}
	if ks >= 0xc0 && ks <= 0xde && ks != 0xd7 {
		return ks + 32
	}
	return ks
}

// KeysymRune returns the character a keysym types, or 0 for keys that type
// none (modifiers, function keys). Return is '\r', Tab '\t', BackSpace '\b',
// Escape 0x1b.
func KeysymRune(ks uint32) rune {
	switch {
	case ks >= 0x20 && ks <= 0x7e, ks >= 0xa0 && ks <= 0xff:
		return rune(ks)
	case ks >= 0x01000100 && ks <= 0x0110ffff:
		return rune(ks - 0x01000000)
	}
	switch ks {
	case 0xff0d, 0xff8d: // Return, KP_Enter
		return '\r'
	case 0xff09:
		return '\t'
	case 0xff08:
		return '\b'
	case 0xff1b:
		return 0x1b
	case 0x20ac: // EuroSign
		return '€'
	}
	return 0
}
