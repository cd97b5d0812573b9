package input

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Keysym values used by name in this package (X11 keysymdef.h).
const (
	ksNoSymbol  = 0x0000
	ksBackSpace = 0xff08
	ksTab       = 0xff09
	ksReturn    = 0xff0d
	ksEscape    = 0xff1b
	ksShiftL    = 0xffe1
	ksShiftR    = 0xffe2
	ksControlL  = 0xffe3
	ksControlR  = 0xffe4
	ksCapsLock  = 0xffe5
	ksMetaL     = 0xffe7
	ksAltL      = 0xffe9
	ksAltR      = 0xffea
	ksSuperL    = 0xffeb
	ksSuperR    = 0xffec
	ksLevel3    = 0xfe03 // ISO_Level3_Shift (AltGr)
	ksUnicode   = 0x01000000
)

// latin1High names the Latin-1 keysyms 0xa0..0xff in order.
var latin1High = [96]string{
	"nobreakspace", "exclamdown", "cent", "sterling", "currency", "yen", "brokenbar", "section",
	"diaeresis", "copyright", "ordfeminine", "guillemotleft", "notsign", "hyphen", "registered", "macron",
	"degree", "plusminus", "twosuperior", "threesuperior", "acute", "mu", "paragraph", "periodcentered",
	"cedilla", "onesuperior", "masculine", "guillemotright", "onequarter", "onehalf", "threequarters", "questiondown",
	"Agrave", "Aacute", "Acircumflex", "Atilde", "Adiaeresis", "Aring", "AE", "Ccedilla",
	"Egrave", "Eacute", "Ecircumflex", "Ediaeresis", "Igrave", "Iacute", "Icircumflex", "Idiaeresis",
	"ETH", "Ntilde", "Ograve", "Oacute", "Ocircumflex", "Otilde", "Odiaeresis", "multiply",
	"Oslash", "Ugrave", "Uacute", "Ucircumflex", "Udiaeresis", "Yacute", "THORN", "ssharp",
	"agrave", "aacute", "acircumflex", "atilde", "adiaeresis", "aring", "ae", "ccedilla",
	"egrave", "eacute", "ecircumflex", "ediaeresis", "igrave", "iacute", "icircumflex", "idiaeresis",
	"eth", "ntilde", "ograve", "oacute", "ocircumflex", "otilde", "odiaeresis", "division",
	"oslash", "ugrave", "uacute", "ucircumflex", "udiaeresis", "yacute", "thorn", "ydiaeresis",
}

// asciiNames names the printable ASCII punctuation keysyms (equal to their
// code points).
var asciiNames = map[string]uint32{
	"space": ' ', "exclam": '!', "quotedbl": '"', "numbersign": '#', "dollar": '$', "percent": '%',
	"ampersand": '&', "apostrophe": '\'', "quoteright": '\'', "parenleft": '(', "parenright": ')',
	"asterisk": '*', "plus": '+', "comma": ',', "minus": '-', "period": '.', "slash": '/',
	"colon": ':', "semicolon": ';', "less": '<', "equal": '=', "greater": '>', "question": '?',
	"at": '@', "bracketleft": '[', "backslash": '\\', "bracketright": ']', "asciicircum": '^',
	"underscore": '_', "grave": '`', "quoteleft": '`', "braceleft": '{', "bar": '|',
	"braceright": '}', "asciitilde": '~',
}

// functionNames names the function, cursor, keypad and modifier keysyms.
var functionNames = map[string]uint32{
	"BackSpace": 0xff08, "Tab": 0xff09, "Linefeed": 0xff0a, "Clear": 0xff0b, "Return": 0xff0d,
	"Pause": 0xff13, "Scroll_Lock": 0xff14, "Sys_Req": 0xff15, "Escape": 0xff1b, "Delete": 0xffff,
	"Home": 0xff50, "Left": 0xff51, "Up": 0xff52, "Right": 0xff53, "Down": 0xff54,
	"Prior": 0xff55, "Page_Up": 0xff55, "Next": 0xff56, "Page_Down": 0xff56, "End": 0xff57, "Begin": 0xff58,
	"Select": 0xff60, "Print": 0xff61, "Execute": 0xff62, "Insert": 0xff63, "Undo": 0xff65, "Redo": 0xff66,
	"Menu": 0xff67, "Find": 0xff68, "Cancel": 0xff69, "Help": 0xff6a, "Break": 0xff6b,
	"Mode_switch": 0xff7e, "Num_Lock": 0xff7f,
	"KP_Space": 0xff80, "KP_Tab": 0xff89, "KP_Enter": 0xff8d,
	"KP_F1": 0xff91, "KP_F2": 0xff92, "KP_F3": 0xff93, "KP_F4": 0xff94,
	"KP_Home": 0xff95, "KP_Left": 0xff96, "KP_Up": 0xff97, "KP_Right": 0xff98, "KP_Down": 0xff99,
	"KP_Prior": 0xff9a, "KP_Page_Up": 0xff9a, "KP_Next": 0xff9b, "KP_Page_Down": 0xff9b,
	"KP_End": 0xff9c, "KP_Begin": 0xff9d, "KP_Insert": 0xff9e, "KP_Delete": 0xff9f,
	"KP_Equal": 0xffbd, "KP_Multiply": 0xffaa, "KP_Add": 0xffab, "KP_Separator": 0xffac,
	"KP_Subtract": 0xffad, "KP_Decimal": 0xffae, "KP_Divide": 0xffaf,
	"Shift_L": 0xffe1, "Shift_R": 0xffe2, "Control_L": 0xffe3, "Control_R": 0xffe4,
	"Caps_Lock": 0xffe5, "Shift_Lock": 0xffe6, "Meta_L": 0xffe7, "Meta_R": 0xffe8,
	"Alt_L": 0xffe9, "Alt_R": 0xffea, "Super_L": 0xffeb, "Super_R": 0xffec,
	"Hyper_L": 0xffed, "Hyper_R": 0xffee, "ISO_Level3_Shift": 0xfe03, "ISO_Left_Tab": 0xfe20,
	"EuroSign":             0x20ac,
	"XF86AudioLowerVolume": 0x1008ff11, "XF86AudioMute": 0x1008ff12, "XF86AudioRaiseVolume": 0x1008ff13,
	"XF86AudioPlay": 0x1008ff14, "XF86AudioStop": 0x1008ff15, "XF86AudioPrev": 0x1008ff16,
	"XF86AudioNext": 0x1008ff17, "XF86HomePage": 0x1008ff18, "XF86Search": 0x1008ff1b,
	"XF86Back": 0x1008ff26, "XF86Forward": 0x1008ff27, "XF86Refresh": 0x1008ff29,
	"XF86Copy": 0x1008ff57, "XF86Cut": 0x1008ff58, "XF86Paste": 0x1008ff6d, "XF86Reload": 0x1008ff73,
}

// keyAliases are friendly, case-insensitive names models and people write.
var keyAliases = map[string]uint32{
	"enter": ksReturn, "ret": ksReturn, "esc": ksEscape, "del": 0xffff, "bksp": ksBackSpace,
	"backspace": ksBackSpace, "pgup": 0xff55, "pageup": 0xff55, "pgdn": 0xff56, "pagedown": 0xff56,
	"ins": 0xff63, "arrowup": 0xff52, "arrowdown": 0xff54, "arrowleft": 0xff51, "arrowright": 0xff53,
	"capslock": 0xffe5, "numlock": 0xff7f, "scrolllock": 0xff14, "printscreen": 0xff61, "prtsc": 0xff61,
	"altgr": ksLevel3, "euro": 0x20ac,
}

var (
	keysymByName  map[string]uint32 // exact X keysym names
	keysymByLower map[string]uint32 // lower-cased names and aliases
	// keysymsOnce builds both on first use: at start-up every acu process
	// would pay for them, screenshots included.
	keysymsOnce sync.Once
)

func buildKeysyms() {
	keysymByName = make(map[string]uint32, 400)
	for name, ks := range asciiNames {
		keysymByName[name] = ks
	}
	for name, ks := range functionNames {
		keysymByName[name] = ks
	}
	for i, name := range latin1High {
		keysymByName[name] = uint32(0xa0 + i)
	}
	for c := '0'; c <= '9'; c++ {
		keysymByName[string(c)] = uint32(c)
	}
	for c := 'a'; c <= 'z'; c++ {
		keysymByName[string(c)] = uint32(c)
		keysymByName[string(c-'a'+'A')] = uint32(c - 'a' + 'A')
	}
	for i := 1; i <= 35; i++ {
		keysymByName["F"+strconv.Itoa(i)] = uint32(0xffbe + i - 1)
	}
	for i := 0; i <= 9; i++ {
		keysymByName["KP_"+strconv.Itoa(i)] = uint32(0xffb0 + i)
	}
	// Lower-cased lookup: where two names differ only in case (a/A,
	// eacute/Eacute), the all-lower-case one wins.
	keysymByLower = make(map[string]uint32, len(keysymByName)+len(keyAliases))
	for name, ks := range keysymByName {
		low := strings.ToLower(name)
		if _, taken := keysymByLower[low]; taken && name != low {
			continue
		}
		keysymByLower[low] = ks
	}
	for name, ks := range keyAliases {
		keysymByLower[name] = ks
	}
}

// runeKeysym returns the keysym that types r: Latin-1 keysyms equal their code
// point, control characters map to their keys, everything else uses the
// Unicode keysym range (0x1000000 + code point).
func runeKeysym(r rune) (uint32, bool) {
	switch {
	case r == '\n' || r == '\r':
		return ksReturn, true
	case r == '\t':
		return ksTab, true
	case r == '\b':
		return ksBackSpace, true
	case r == 0x1b:
		return ksEscape, true
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return 0, false
	case r <= 0xff:
		return uint32(r), true
	case r > unicode.MaxRune || (r >= 0xd800 && r < 0xe000):
		return 0, false
	}
	return ksUnicode + uint32(r), true
}

// legacyKeysym returns the pre-Unicode keysym for a few characters keymaps
// commonly carry under their old names (EuroSign on AltGr+e), or 0.
func legacyKeysym(ks uint32) uint32 {
	switch ks {
	case ksUnicode + 0x20ac:
		return 0x20ac // EuroSign
	}
	return 0
}

// lookupKeysym resolves one key name: an X keysym name (exact case first,
// then case-insensitive), a friendly alias (enter, esc, pgup), a single
// character, "U+20AC", or a hex keysym "0xff0d".
func lookupKeysym(name string) (uint32, error) {
	keysymsOnce.Do(buildKeysyms)
	if ks, ok := keysymByName[name]; ok {
		return ks, nil
	}
	if ks, ok := keysymByLower[strings.ToLower(name)]; ok {
		return ks, nil
	}
	if r, size := utf8.DecodeRuneInString(name); size == len(name) && r != utf8.RuneError {
		if ks, ok := runeKeysym(r); ok {
			return ks, nil
		}
	}
	if len(name) > 2 && (name[:2] == "U+" || name[:2] == "u+") {
		cp, err := strconv.ParseUint(name[2:], 16, 32)
		if err == nil && cp > 0 && cp <= unicode.MaxRune {
			if ks, ok := runeKeysym(rune(cp)); ok {
				return ks, nil
			}
		}
	}
	if len(name) > 2 && (name[:2] == "0x" || name[:2] == "0X") {
		ks, err := strconv.ParseUint(name[2:], 16, 32)
		if err == nil && ks > 0 && ks <= 0x1fffffff {
			return uint32(ks), nil
		}
	}
	return 0, fmt.Errorf("unknown key %q: use an X keysym name (Return, Tab, F5, Page_Down, a, comma), an alias (enter, esc), one character, or U+20AC", name)
}

// modifier is one of the four modifiers a key combo can hold.
type modifier uint8

const (
	modShift modifier = 1 << iota
	modCtrl
	modAlt
	modSuper
)

// modOrder lists modifiers in the order they are pressed.
var modOrder = [...]modifier{modCtrl, modAlt, modSuper, modShift}

// keysym returns the left-hand key that sets the modifier.
func (m modifier) keysym() uint32 {
	switch m {
	case modShift:
		return ksShiftL
	case modCtrl:
		return ksControlL
	case modAlt:
		return ksAltL
	default:
		return ksSuperL
	}
}

func parseModifier(s string) (modifier, bool) {
	switch strings.ToLower(s) {
	case "shift":
		return modShift, true
	case "ctrl", "control", "ctl", "ctrl_l", "control_l":
		return modCtrl, true
	case "alt", "alt_l", "option", "opt":
		return modAlt, true
	case "super", "win", "windows", "meta", "cmd", "command", "super_l", "mod4":
		return modSuper, true
	}
	return 0, false
}

// combo is one parsed key chord: modifiers held while key is tapped, and
// any other keys of the chord (held) pressed in order before key and
// released after it in reverse, as a person holds a and b together.
type combo struct {
	mods modifier
	held []uint32
	key  uint32
}

// maxHeld bounds the keys held together besides the modifiers.
const maxHeld = 8

// maxCombos bounds the chords one Key call may send.
const maxCombos = 64

// parseKeys parses a key sequence: chords separated by spaces, each chord
// modifiers and one key joined by '+', as in "ctrl+shift+t", "alt+F4",
// "Return", "ctrl+a Delete", "ctrl++"; keys that are not modifiers before
// the last ("a+b", "ctrl+Left+Up") are held down with it, pressed in order
// and released in reverse. Modifier names are case-insensitive
// (ctrl/control, shift, alt, super/win/meta); a chord of a lone modifier taps
// that modifier key. With ctrl, alt or super held, a single upper-case letter
// means its key ("ctrl+L" is ctrl+l); shift must be written to be sent.
func parseKeys(s string) ([]combo, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return nil, fmt.Errorf("empty key combo: write keys like ctrl+l, Return or alt+F4")
	}
	if len(fields) > maxCombos {
		return nil, fmt.Errorf("key sequence %q has %d chords: send at most %d per call", truncate(s), len(fields), maxCombos)
	}
	out := make([]combo, 0, len(fields))
	for _, f := range fields {
		c, err := parseCombo(f)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// parseCombo parses one chord without spaces.
func parseCombo(s string) (combo, error) {
	var parts []string
	switch {
	case s == "+":
		parts = []string{"+"}
	case strings.HasSuffix(s, "++"):
		parts = append(strings.Split(s[:len(s)-2], "+"), "+")
	default:
		parts = strings.Split(s, "+")
	}
	var c combo
	last := len(parts) - 1
	for i, p := range parts {
		if p == "" {
			return combo{}, fmt.Errorf("key combo %q has an empty part: join modifiers and one key with '+', as in ctrl+shift+t", truncate(s))
		}
		m, isMod := parseModifier(p)
		if i < last {
			if isMod {
				c.mods |= m
				continue
			}
			if len(c.held) == maxHeld {
				return combo{}, fmt.Errorf("key combo %q holds more than %d keys besides the modifiers", truncate(s), maxHeld)
			}
			ks, err := lookupKeysym(p)
			if err != nil {
				return combo{}, fmt.Errorf("key combo %q: %w", truncate(s), err)
			}
			c.held = append(c.held, lowerWithMods(ks, p, c.mods))
			continue
		}
		if isMod {
			c.key = m.keysym()
			c.mods &^= m
			return c, nil
		}
		ks, err := lookupKeysym(p)
		if err != nil {
			return combo{}, fmt.Errorf("key combo %q: %w", truncate(s), err)
		}
		c.key = lowerWithMods(ks, p, c.mods)
	}
	return c, nil
}

// lowerWithMods returns the keysym ks of part p, lower-cased when p is a
// single upper-case letter with ctrl, alt or super held ("ctrl+L" is
// ctrl+l; shift must be written to be sent).
func lowerWithMods(ks uint32, p string, mods modifier) uint32 {
	if mods&(modCtrl|modAlt|modSuper) != 0 && len(p) == 1 && p[0] >= 'A' && p[0] <= 'Z' {
		return ks + 'a' - 'A'
	}
	return ks
}

// truncate shortens user input quoted in error messages.
func truncate(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	for i := max; i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i] + "..."
		}
	}
	return s[:max] + "..."
}
