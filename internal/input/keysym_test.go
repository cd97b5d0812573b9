package input

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/jezek/xgb/xproto"
)

func TestLatin1Names(t *testing.T) {
	keysymsOnce.Do(buildKeysyms)
	for name, want := range map[string]uint32{
		"nobreakspace": 0xa0, "sterling": 0xa3, "section": 0xa7, "questiondown": 0xbf, "Agrave": 0xc0,
		"multiply": 0xd7, "ssharp": 0xdf, "eacute": 0xe9, "division": 0xf7, "ydiaeresis": 0xff,
		"Return": 0xff0d, "F1": 0xffbe, "F12": 0xffc9, "KP_5": 0xffb5, "comma": ',', "a": 'a', "Z": 'Z',
	} {
		if got := keysymByName[name]; got != want {
			t.Errorf("keysymByName[%q] = 0x%x, want 0x%x", name, got, want)
		}
	}
}

func TestLookupKeysym(t *testing.T) {
	tests := []struct {
		name string
		want uint32
	}{
		{"Return", ksReturn},
		{"return", ksReturn},
		{"ENTER", ksReturn},
		{"esc", ksEscape},
		{"Tab", ksTab},
		{"f5", 0xffc2},
		{"Page_Down", 0xff56},
		{"pgdn", 0xff56},
		{"a", 'a'},
		{"A", 'A'},
		{"Eacute", 0xc9},
		{"EACUTE", 0xe9}, // case-insensitive match prefers the lower-case name
		{"é", 0xe9},
		{"€", ksUnicode + 0x20ac},
		{"EuroSign", 0x20ac},
		{"U+20AC", ksUnicode + 0x20ac},
		{"0xff0d", ksReturn},
		{"+", '+'},
		{"space", ' '},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := lookupKeysym(tt.name)
			if err != nil || got != tt.want {
				t.Errorf("lookupKeysym(%q) = 0x%x, %v, want 0x%x", tt.name, got, err, tt.want)
			}
		})
	}
	for _, bad := range []string{"", "nosuchkey", "U+", "U+110000", "0x", "ctrl-l", "\x01"} {
		if ks, err := lookupKeysym(bad); err == nil {
			t.Errorf("lookupKeysym(%q) = 0x%x, want an error", bad, ks)
		}
	}
}

func TestRuneKeysym(t *testing.T) {
	tests := []struct {
		r    rune
		want uint32
		ok   bool
	}{
		{'a', 'a', true}, {'@', '@', true}, {'\n', ksReturn, true}, {'\t', ksTab, true},
		{'é', 0xe9, true}, {'ÿ', 0xff, true}, {'€', 0x10020ac, true}, {'ж', 0x1000436, true},
		{'😀', 0x101f600, true}, {0x01, 0, false}, {0x7f, 0, false}, {0x85, 0, false},
	}
	for _, tt := range tests {
		got, ok := runeKeysym(tt.r)
		if got != tt.want || ok != tt.ok {
			t.Errorf("runeKeysym(%U) = 0x%x, %v, want 0x%x, %v", tt.r, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseKeys(t *testing.T) {
	tests := []struct {
		in   string
		want []combo
	}{
		{"ctrl+l", []combo{{mods: modCtrl, key: 'l'}}},
		{"Ctrl+L", []combo{{mods: modCtrl, key: 'l'}}},
		{"control+shift+t", []combo{{mods: modCtrl | modShift, key: 't'}}},
		{"ctrl+shift+T", []combo{{mods: modCtrl | modShift, key: 't'}}},
		{"shift+Tab", []combo{{mods: modShift, key: ksTab}}},
		{"Return", []combo{{mods: 0, key: ksReturn}}},
		{"alt+F4", []combo{{mods: modAlt, key: 0xffc1}}},
		{"super+e", []combo{{mods: modSuper, key: 'e'}}},
		{"win+d", []combo{{mods: modSuper, key: 'd'}}},
		{"META+x", []combo{{mods: modSuper, key: 'x'}}},
		{"A", []combo{{mods: 0, key: 'A'}}},
		{"shift+a", []combo{{mods: modShift, key: 'a'}}},
		{"ctrl++", []combo{{mods: modCtrl, key: '+'}}},
		{"+", []combo{{mods: 0, key: '+'}}},
		{"ctrl+minus", []combo{{mods: modCtrl, key: '-'}}},
		{"super", []combo{{mods: 0, key: ksSuperL}}},
		{"ctrl+shift", []combo{{mods: modCtrl, key: ksShiftL}}},
		{"ctrl+a Delete", []combo{{mods: modCtrl, key: 'a'}, {mods: 0, key: 0xffff}}},
		{"  Escape  ", []combo{{mods: 0, key: ksEscape}}},
		{"ctrl+é", []combo{{mods: modCtrl, key: 0xe9}}},
		{"x+y", []combo{{held: []uint32{'x'}, key: 'y'}}},
		{"ctrl+A+B", []combo{{mods: modCtrl, held: []uint32{'a'}, key: 'b'}}},
		{"ctrl+Left+Up", []combo{{mods: modCtrl, held: []uint32{0xff51}, key: 0xff52}}},
		{"l+ctrl", []combo{{held: []uint32{'l'}, key: ksControlL}}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseKeys(tt.in)
			if err != nil {
				t.Fatalf("parseKeys(%q) error %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(combo{})); diff != "" {
				t.Errorf("parseKeys(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
	for _, bad := range []string{"", "   ", "ctrl+", "+ctrl", "ctrl++a", "ctrl+nosuchkey", "ctrl+shift+", "nosuchkey+a", "a+b+c+d+e+f+g+h+i+j", strings.Repeat("a ", maxCombos+1)} {
		if got, err := parseKeys(bad); err == nil {
			t.Errorf("parseKeys(%q) = %v, want an error", bad, got)
		}
	}
}

func FuzzParseKeys(f *testing.F) {
	for _, s := range []string{"ctrl+l", "shift+Tab", "Return", "alt+F4", "ctrl+shift+t", "ctrl++", "+", "ctrl+a Delete", "U+20AC", "super", "é", "0xff0d", "ctrl+"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		combos, err := parseKeys(s)
		if err != nil {
			if !utf8.ValidString(err.Error()) && utf8.ValidString(s) {
				t.Errorf("parseKeys(%q) error is not valid UTF-8: %q", s, err)
			}
			return
		}
		if len(combos) == 0 || len(combos) > maxCombos {
			t.Fatalf("parseKeys(%q) = %d combos without error", s, len(combos))
		}
		for _, c := range combos {
			if c.key == ksNoSymbol {
				t.Errorf("parseKeys(%q) gave a combo without a key: %+v", s, c)
			}
			if c.mods&^(modShift|modCtrl|modAlt|modSuper) != 0 {
				t.Errorf("parseKeys(%q) gave unknown modifiers: %+v", s, c)
			}
		}
	})
}

func TestBuildKeymap(t *testing.T) {
	// Keycodes 8..14, two keysyms each: a spare at 8 (skipped), 9 and 12.
	syms := []xproto.Keysym{
		0, 0, // 8
		0, 0, // 9 spare
		'a', 'A', // 10
		'1', '!', // 11
		0, 0, // 12 spare
		ksShiftL, 0, // 13
		'!', 0, // 14: '!' unshifted here wins over shift+1
	}
	k := buildKeymap(8, 2, syms)
	want := map[uint32]keyPos{'a': {10, false}, 'A': {10, true}, '1': {11, false}, '!': {14, false}, ksShiftL: {13, false}}
	if diff := cmp.Diff(want, k.index, cmp.AllowUnexported(keyPos{})); diff != "" {
		t.Errorf("buildKeymap index mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]xproto.Keycode{12, 9}, k.spare); diff != "" {
		t.Errorf("buildKeymap spare mismatch (-want +got):\n%s", diff)
	}
	if p, ok := k.lookup(ksUnicode + 'a'); !ok || p != (keyPos{10, false}) {
		t.Errorf("lookup(U+0061 keysym) = %v, %v, want key 10", p, ok)
	}
}
