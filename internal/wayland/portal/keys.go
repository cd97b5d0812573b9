package portal

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Keysyms of the keys with names (X11 keysymdef.h), by the names acu's
// key combos use on X11.
var namedKeys = map[string]uint32{
	"BackSpace": 0xff08, "Tab": 0xff09, "Return": 0xff0d, "Enter": 0xff0d, "Escape": 0xff1b, "Delete": 0xffff,
	"Home": 0xff50, "Left": 0xff51, "Up": 0xff52, "Right": 0xff53, "Down": 0xff54, "Page_Up": 0xff55, "Prior": 0xff55,
	"Page_Down": 0xff56, "Next": 0xff56, "End": 0xff57, "Insert": 0xff63, "Menu": 0xff67, "space": 0x20,
	"KP_Enter": 0xff8d, "plus": '+', "minus": '-',
}

var modifierKeys = map[string]uint32{
	"shift": 0xffe1, "ctrl": 0xffe3, "control": 0xffe3, "alt": 0xffe9, "meta": 0xffe9,
	"super": 0xffeb, "win": 0xffeb, "cmd": 0xffeb, "logo": 0xffeb,
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

// parseCombo parses one combo ("ctrl+shift+t", "Return", "F5") into its
// keysyms, the modifiers first and the key last.
func parseCombo(s string) ([]uint32, error) {
	parts := strings.Split(s, "+")
	if strings.HasSuffix(s, "++") || s == "+" { // "ctrl++": the plus key
		parts = append(parts[:len(parts)-2], "+")
	}
	var out []uint32
	for i, p := range parts {
		if i < len(parts)-1 {
			m, ok := modifierKeys[strings.ToLower(p)]
			if !ok {
				return nil, fmt.Errorf("key %q: %q is not a modifier (shift, ctrl, alt, super)", s, p)
			}
			out = append(out, m)
			continue
		}
		var n int
		switch {
		case namedKeys[p] != 0:
			out = append(out, namedKeys[p])
		case modifierKeys[strings.ToLower(p)] != 0:
			out = append(out, modifierKeys[strings.ToLower(p)])
		case len(p) > 1 && p[0] == 'F' && func() bool {
			_, err := fmt.Sscanf(p, "F%d", &n)
			return err == nil && n >= 1 && n <= 35 && fmt.Sprintf("F%d", n) == p
		}():
			out = append(out, 0xffbe+uint32(n-1))
		default:
			r, size := utf8.DecodeRuneInString(p)
			if size != len(p) || size == 0 {
				return nil, fmt.Errorf("key %q: unknown key %q: use one character or a key name such as Return, Tab, Escape, BackSpace, Delete, Home, End, Page_Up, Left, F5", s, p)
			}
			ks, err := runeKeysym(r)
			if err != nil {
				return nil, fmt.Errorf("key %q: %w", s, err)
			}
			out = append(out, ks)
		}
	}
	return out, nil
}

// keyFunc presses (down) or releases the key that types a keysym.
type keyFunc func(ctx context.Context, keysym uint32, down bool) error

// typeText types text with key, one tap per character.
func typeText(ctx context.Context, key keyFunc, text string) error {
	for i, r := range text {
		ks, err := runeKeysym(r)
		if err != nil {
			return fmt.Errorf("type at byte %d: %w", i, err)
		}
		if err := key(ctx, ks, true); err != nil {
			return err
		}
		if err := key(ctx, ks, false); err != nil {
			return err
		}
	}
	return nil
}

// pressKeys presses space-separated combos: the modifiers go down in
// order, the key is tapped (or held down for hold, mutter's own key
// repeat applying), the modifiers come up in reverse order. Keys are
// released even when ctx ends.
func pressKeys(ctx context.Context, key keyFunc, keys string, hold time.Duration) error {
	var combos [][]uint32
	for _, f := range strings.Fields(keys) {
		c, err := parseCombo(f)
		if err != nil {
			return err
		}
		combos = append(combos, c)
	}
	if len(combos) == 0 {
		return fmt.Errorf("keys %q: name at least one key, e.g. Return or ctrl+a", keys)
	}
	up := context.WithoutCancel(ctx)
	for _, c := range combos {
		mods, k := c[:len(c)-1], c[len(c)-1]
		for _, m := range mods {
			if err := key(ctx, m, true); err != nil {
				return err
			}
		}
		err := key(ctx, k, true)
		if err == nil {
			if hold > 0 {
				t := time.NewTimer(hold)
				select {
				case <-ctx.Done():
				case <-t.C:
				}
				t.Stop()
			}
			err = key(up, k, false)
		}
		for i := len(mods) - 1; i >= 0; i-- {
			if e := key(up, mods[i], false); err == nil {
				err = e
			}
		}
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}
