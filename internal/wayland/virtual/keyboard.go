package virtual

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/acu-dev/acu/internal/wayland"
)

// Keysyms of the keys with names (X11 keysymdef.h), by the names acu's
// key combos use on X11.
var namedKeys = map[string]uint32{
	"BackSpace": 0xff08, "Tab": 0xff09, "Return": 0xff0d, "Enter": 0xff0d, "Escape": 0xff1b, "Delete": 0xffff,
	"Home": 0xff50, "Left": 0xff51, "Up": 0xff52, "Right": 0xff53, "Down": 0xff54, "Page_Up": 0xff55, "Prior": 0xff55,
	"Page_Down": 0xff56, "Next": 0xff56, "End": 0xff57, "Insert": 0xff63, "Menu": 0xff67, "space": 0x20,
	"Print": 0xff61, "Pause": 0xff13, "Scroll_Lock": 0xff14, "Caps_Lock": 0xffe5, "Num_Lock": 0xff7f,
	"KP_Enter": 0xff8d, "plus": '+', "minus": '-',
}

// Modifiers: the key each is pressed with and its bit in the keymap's
// real modifiers (Shift, Lock, Control, Mod1..Mod5 are bits 0..7).
type modifier struct {
	keysym uint32
	mask   uint32
	group  string // the xkb modifier_map entry
}

var modifiers = map[string]modifier{
	"shift": {0xffe1, 1 << 0, "Shift"},
	"ctrl":  {0xffe3, 1 << 2, "Control"},
	"alt":   {0xffe9, 1 << 3, "Mod1"},
	"super": {0xffeb, 1 << 6, "Mod4"},
}

var modifierAliases = map[string]string{
	"shift": "shift", "ctrl": "ctrl", "control": "ctrl", "alt": "alt", "meta": "alt",
	"super": "super", "win": "super", "cmd": "super", "logo": "super",
}

// modOrder fixes the modifiers' keycodes: the first four of every keymap.
var modOrder = []string{"shift", "ctrl", "alt", "super"}

// keymapSize is how many keysyms a keymap holds: keycodes 9..255, xkb's
// X11-compatible range.
const keymapSize = 255 - 8

// keymap is the xkb keymap acu uploads: each keysym on a keycode of its
// own, at level one, so no modifier is needed to type it. The first
// keycodes hold a fixed base (the modifiers, the named keys, F1-F12 and
// printable ASCII) that every keymap of a device repeats on the same
// keycodes: GTK 3 on Wayland matches its key bindings (Return in an
// entry, BackSpace, the arrows) against the first keymap it saw and does
// not notice later ones, so the keys bindings use must never move.
type keymap struct {
	syms  []uint32       // keysym of keycode 9+i; the base first
	index map[uint32]int // keysym -> i
	base  int            // len of the base
}

func newKeymap() *keymap {
	m := &keymap{index: map[uint32]int{}}
	m.reset()
	m.base = len(m.syms)
	return m
}

// reset leaves the base only.
func (m *keymap) reset() {
	m.syms = m.syms[:0]
	clear(m.index)
	for _, name := range modOrder {
		m.add(modifiers[name].keysym)
	}
	names := make([]string, 0, len(namedKeys))
	for n := range namedKeys {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if _, ok := m.index[namedKeys[n]]; !ok {
			m.add(namedKeys[n])
		}
	}
	for f := uint32(0); f < 12; f++ {
		m.add(0xffbe + f) // F1..F12
	}
	for r := uint32(0x20); r < 0x7f; r++ {
		if _, ok := m.index[r]; !ok {
			m.add(r)
		}
	}
}

// room is how many keysyms beyond the base one keymap holds.
func (m *keymap) room() int { return keymapSize - m.base }

func (m *keymap) add(ks uint32) {
	m.index[ks] = len(m.syms)
	m.syms = append(m.syms, ks)
}

// missing returns the keysyms of syms the keymap lacks, once each.
func (m *keymap) missing(syms []uint32) []uint32 {
	var out []uint32
	for _, ks := range syms {
		if _, ok := m.index[ks]; !ok && !slices.Contains(out, ks) {
			out = append(out, ks)
		}
	}
	return out
}

// code returns the evdev key code of keysym ks (xkb keycode less 8).
func (m *keymap) code(ks uint32) uint32 { return uint32(m.index[ks]) + 1 }

// text is the keymap in xkb's text format; keysyms are written as
// numbers, which xkbcommon reads as keysyms (10 and above).
func (m *keymap) text() string {
	var b strings.Builder
	b.WriteString("xkb_keymap {\nxkb_keycodes \"acu\" {\n minimum = 8;\n maximum = 255;\n")
	for i := range m.syms {
		fmt.Fprintf(&b, " <K%d> = %d;\n", i, i+9)
	}
	b.WriteString("};\nxkb_types \"acu\" { include \"complete\" };\nxkb_compatibility \"acu\" { include \"complete\" };\nxkb_symbols \"acu\" {\n")
	for i, ks := range m.syms {
		fmt.Fprintf(&b, " key <K%d> { [ %#x ] };\n", i, ks)
	}
	for i, name := range modOrder {
		fmt.Fprintf(&b, " modifier_map %s { <K%d> };\n", modifiers[name].group, i)
	}
	b.WriteString("};\n};\n")
	return b.String()
}

func (d *Device) uploadKeymap() error {
	text := d.keymap.text()
	fd, err := unix.MemfdCreate("acu-keymap", unix.MFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("keymap: memfd: %w", err)
	}
	defer unix.Close(fd)
	data := append([]byte(text), 0)
	for n := 0; n < len(data); {
		w, err := unix.Write(fd, data[n:])
		if err != nil {
			return fmt.Errorf("keymap: write: %w", err)
		}
		n += w
	}
	return d.conn.Request(d.kbd, wayland.KeyboardReqKeymap, uint32(wayland.KeymapFormatXKBV1), wayland.FD(fd), uint32(len(data)))
}

// ensure makes every keysym of syms typeable, uploading a new keymap when
// some are missing (a full keymap starts over with just these).
func (d *Device) ensure(syms []uint32) error {
	miss := d.keymap.missing(syms)
	if len(miss) == 0 {
		return nil
	}
	if len(d.keymap.syms)+len(miss) > keymapSize {
		d.keymap.reset()
		miss = d.keymap.missing(syms)
	}
	for _, ks := range miss {
		d.keymap.add(ks)
	}
	return d.uploadKeymap()
}

// runeKeysym returns the keysym that types r.
func runeKeysym(r rune) (uint32, error) {
	switch {
	case r == '\n' || r == '\r':
		return namedKeys["Return"], nil
	case r == '\t':
		return namedKeys["Tab"], nil
	case r < 0x20 || (r >= 0x7f && r < 0xa0) || r == utf8.RuneError || r > unicode.MaxRune:
		return 0, fmt.Errorf("character %U cannot be typed: it is a control character", r)
	case r < 0x100:
		return uint32(r), nil // Latin-1 keysyms equal their code points
	}
	return 0x01000000 | uint32(r), nil
}

// Type types text: each character is pressed and released on a keycode
// of its own, newline as Return and tab as Tab. Text longer than a keymap
// holds is typed in parts, each with a keymap of its own.
func (d *Device) Type(ctx context.Context, text string) error {
	var syms []uint32
	for i, r := range text {
		ks, err := runeKeysym(r)
		if err != nil {
			return fmt.Errorf("type at byte %d: %w", i, err)
		}
		syms = append(syms, ks)
	}
	for len(syms) > 0 {
		// The longest prefix whose distinct keysyms beyond the base fit
		// one keymap.
		n, seen := 0, map[uint32]bool{}
		for ; n < len(syms); n++ {
			ks := syms[n]
			if i, ok := d.keymap.index[ks]; (ok && i < d.keymap.base) || seen[ks] {
				continue
			}
			if len(seen) == d.keymap.room() {
				break
			}
			seen[ks] = true
		}
		if err := d.ensure(syms[:n]); err != nil {
			return err
		}
		for _, ks := range syms[:n] {
			if err := d.tap(ks); err != nil {
				return err
			}
		}
		if err := d.sync(ctx); err != nil {
			return err
		}
		syms = syms[n:]
	}
	return nil
}

func (d *Device) key(ks uint32, down bool) error {
	state := uint32(0)
	if down {
		state = 1
	}
	return d.conn.Request(d.kbd, wayland.KeyboardReqKey, d.now(), d.keymap.code(ks), state)
}

func (d *Device) tap(ks uint32) error {
	if err := d.key(ks, true); err != nil {
		return err
	}
	return d.key(ks, false)
}

func (d *Device) setMods(mask uint32) error {
	d.mods = mask
	return d.conn.Request(d.kbd, wayland.KeyboardReqModifiers, mask, uint32(0), uint32(0), uint32(0))
}

// combo is one key with the modifiers held around it, and any other keys
// of the chord (held) pressed in order before it and released after it
// in reverse, as a person holds a and b together (as on X11).
type combo struct {
	mods []string
	held []uint32
	sym  uint32
}

// maxHeld bounds the keys held together besides the modifiers (X11's
// bound).
const maxHeld = 8

// parseKeys parses space-separated combos such as "ctrl+shift+t Return"
// or "ctrl+a+b" (a held while b is tapped).
func parseKeys(s string) ([]combo, error) {
	var out []combo
	for _, f := range strings.Fields(s) {
		c, err := parseCombo(f)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("keys %q: name at least one key, e.g. Return or ctrl+a", s)
	}
	return out, nil
}

func parseCombo(s string) (combo, error) {
	parts := strings.Split(s, "+")
	if strings.HasSuffix(s, "++") || s == "+" { // "ctrl++": the plus key
		parts = append(parts[:len(parts)-2], "+")
	}
	var c combo
	for i, p := range parts {
		if p == "" {
			return c, fmt.Errorf("key %q has an empty part: join modifiers and keys with '+', as in ctrl+shift+t", s)
		}
		if i < len(parts)-1 {
			if m, ok := modifierAliases[strings.ToLower(p)]; ok {
				c.mods = append(c.mods, m)
				continue
			}
			if len(c.held) == maxHeld {
				return c, fmt.Errorf("key %q holds more than %d keys besides the modifiers", s, maxHeld)
			}
			ks, err := keySym(s, p)
			if err != nil {
				return c, fmt.Errorf("key %q: %q is not a modifier (shift, ctrl, alt, super) nor a key to hold (one character or a name such as Return, Left, F5)", s, p)
			}
			c.held = append(c.held, ks)
			continue
		}
		if m, ok := modifierAliases[strings.ToLower(p)]; ok {
			c.sym = modifiers[m].keysym
			continue
		}
		ks, err := keySym(s, p)
		if err != nil {
			return c, err
		}
		c.sym = ks
	}
	return c, nil
}

// keySym is the keysym of key p (not a modifier) of combo s.
func keySym(s, p string) (uint32, error) {
	if ks, ok := namedKeys[p]; ok {
		return ks, nil
	}
	if ks, ok := functionKey(p); ok {
		return ks, nil
	}
	if r, size := utf8.DecodeRuneInString(p); size == len(p) && size > 0 {
		ks, err := runeKeysym(r)
		if err != nil {
			return 0, fmt.Errorf("key %q: %w", s, err)
		}
		return ks, nil
	}
	return 0, fmt.Errorf("key %q: unknown key %q: use one character or a key name such as Return, Tab, Escape, BackSpace, Delete, Home, End, Page_Up, Left, F5", s, p)
}

// syms are the keysyms the combos press besides the modifiers.
func syms(combos []combo) []uint32 {
	var out []uint32
	for _, c := range combos {
		out = append(out, c.held...)
		out = append(out, c.sym)
	}
	return out
}

// comboDown presses c's modifiers (their bits added to the mask of the
// ones ModsDown holds) and then its held keys, in order.
func (d *Device) comboDown(c combo) error {
	mask := d.held // modifiers ModsDown holds stay down
	for _, m := range c.mods {
		mod := modifiers[m]
		mask |= mod.mask
		if err := d.key(mod.keysym, true); err != nil {
			return err
		}
		if err := d.setMods(mask); err != nil {
			return err
		}
	}
	for _, ks := range c.held {
		if err := d.key(ks, true); err != nil {
			return err
		}
	}
	return nil
}

// comboUp releases what comboDown pressed, last first.
func (d *Device) comboUp(c combo) error {
	for i := len(c.held) - 1; i >= 0; i-- {
		if err := d.key(c.held[i], false); err != nil {
			return err
		}
	}
	mask := d.held
	for _, m := range c.mods {
		mask |= modifiers[m].mask
	}
	for i := len(c.mods) - 1; i >= 0; i-- {
		mod := modifiers[c.mods[i]]
		mask &^= mod.mask
		if err := d.key(mod.keysym, false); err != nil {
			return err
		}
		if err := d.setMods(mask | d.held); err != nil {
			return err
		}
	}
	return nil
}

func functionKey(p string) (uint32, bool) {
	var n int
	if _, err := fmt.Sscanf(p, "F%d", &n); err != nil || n < 1 || n > 35 || fmt.Sprintf("F%d", n) != p {
		return 0, false
	}
	return 0xffbe + uint32(n-1), true
}

// Key presses and releases key combos ("ctrl+c", "Return", "alt+F4
// ctrl+shift+t", "ctrl+a+b"): the modifiers go down in order, then the
// keys held with the last, the last key is tapped, and the held keys and
// modifiers come up in reverse order.
func (d *Device) Key(ctx context.Context, keys string) error {
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
		if err := d.tap(c.sym); err != nil {
			return err
		}
		if err := d.comboUp(c); err != nil {
			return err
		}
	}
	return d.sync(ctx)
}
