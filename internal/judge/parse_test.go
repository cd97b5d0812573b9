package judge

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestParseReply(t *testing.T) {
	for _, tc := range []struct {
		reply    string
		met      bool
		evidence string
		parsed   bool
	}{
		{"YES: the build log ends with Build succeeded.", true, "the build log ends with Build succeeded.", true},
		{"NO: the progress bar is at 40%.", false, "the progress bar is at 40%.", true},
		{"yes - dialog shown", true, "dialog shown", true},
		{"Yes, the page has loaded", true, "the page has loaded", true},
		{"  \n**YES**: checkmark visible", true, "checkmark visible", true},
		{"**YES:** checkmark visible", true, "checkmark visible", true},
		{"> YES: quoted", true, "quoted", true},
		{"`YES`", true, "", true},
		{"YES", true, "", true},
		{"YES.", true, "", true},
		{"# NO\nstill loading", false, "still loading", true},
		{"NO — the spinner is still there", false, "the spinner is still there", true},
		{"No.", false, "", true},
		{"Yesterday the build was green", false, "Yesterday the build was green", false},
		{"Nope", false, "Nope", false},
		{"", false, "", false},
		{"   ", false, "", false},
		{"I'm sorry, I can't help with that.", false, "I'm sorry, I can't help with that.", false},
		{"The condition is met. YES: done", false, "The condition is met. YES: done", false},
		{"Y E S", false, "Y E S", false},
		{"YESNO", false, "YESNO", false},
		{"Oui", false, "Oui", false},
		{"YES: first paragraph\n\nsecond paragraph ignored", true, "first paragraph", true},
		{"YES:   spread\n  over   lines", true, "spread over lines", true},
	} {
		met, ev, parsed := ParseReply(tc.reply)
		if met != tc.met || ev != tc.evidence || parsed != tc.parsed {
			t.Errorf("ParseReply(%q) = %v, %q, %v; want %v, %q, %v", tc.reply, met, ev, parsed, tc.met, tc.evidence, tc.parsed)
		}
	}
}

func TestParseReplyLongEvidence(t *testing.T) {
	_, ev, _ := ParseReply("YES: " + strings.Repeat("é", 1000))
	if len(ev) > maxEvidence+len("…") || !utf8.ValidString(ev) {
		t.Errorf("ParseReply(long) evidence has %d bytes, valid UTF-8 %v; want at most %d, valid", len(ev), utf8.ValidString(ev), maxEvidence+3)
	}
}

func FuzzParseReply(f *testing.F) {
	for _, s := range []string{"YES: ok", "NO: not yet", "**YES**", "", "Yesterday", "yes\n\nno", "ＹＥＳ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		met, ev, parsed := ParseReply(reply)
		if met && !parsed {
			t.Fatalf("ParseReply(%q) met without parsing", reply)
		}
		if met {
			i := strings.IndexFunc(reply, unicode.IsLetter)
			if i < 0 || !strings.EqualFold(strings.Join(strings.FieldsFunc(reply[i:], func(r rune) bool { return !unicode.IsLetter(r) })[:1], ""), "yes") {
				t.Fatalf("ParseReply(%q) met but the reply does not start with YES", reply)
			}
		}
		if len(ev) > maxEvidence+len("…") {
			t.Fatalf("ParseReply(%q) evidence too long: %d", reply, len(ev))
		}
		if utf8.ValidString(reply) && !utf8.ValidString(ev) {
			t.Fatalf("ParseReply(%q) evidence %q is not valid UTF-8", reply, ev)
		}
	})
}
