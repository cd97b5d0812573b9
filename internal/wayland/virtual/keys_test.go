package virtual

import (
	"slices"
	"strings"
	"testing"
)

func TestParseKeys(t *testing.T) {
	for _, tc := range []struct {
		in      string
		mods    []string
		held    []uint32
		sym     uint32
		wantErr string
	}{
		{in: "Return", sym: 0xff0d},
		{in: "ctrl+shift+t", mods: []string{"ctrl", "shift"}, sym: 't'},
		{in: "Control+F12", mods: []string{"ctrl"}, sym: 0xffc9},
		{in: "super+é", mods: []string{"super"}, sym: 0xe9},
		{in: "alt+✓", mods: []string{"alt"}, sym: 0x01002713},
		{in: "ctrl++", mods: []string{"ctrl"}, sym: '+'},
		{in: "ctrl+a+b", mods: []string{"ctrl"}, held: []uint32{'a'}, sym: 'b'},
		{in: "a+shift+Left+Up", mods: []string{"shift"}, held: []uint32{'a', 0xff51}, sym: 0xff52},
		{in: "a+b+c+d+e+f+g+h+i+j", wantErr: "more than 8 keys"},
		{in: "ctrl+", wantErr: "empty part"},
		{in: "hyper+a", wantErr: `"hyper" is not a modifier`},
		{in: "ctrl+Retrun", wantErr: `unknown key "Retrun"`},
		{in: "F0", wantErr: `unknown key "F0"`},
		{in: "  ", wantErr: "name at least one key"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseKeys(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseKeys(%q) error = %v, want one containing %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil || len(got) != 1 || got[0].sym != tc.sym || strings.Join(got[0].mods, ",") != strings.Join(tc.mods, ",") ||
				!slices.Equal(got[0].held, tc.held) {
				t.Fatalf("parseKeys(%q) = %+v, %v; want mods %v held %#x sym %#x", tc.in, got, err, tc.mods, tc.held, tc.sym)
			}
		})
	}
}

func TestRuneKeysymRefusesControlCharacters(t *testing.T) {
	for _, r := range []rune{0, 0x1b, 0x7f, 0x85} {
		if _, err := runeKeysym(r); err == nil {
			t.Errorf("runeKeysym(%U): no error, want a refusal", r)
		}
	}
}
