package smartwait

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCheckText(t *testing.T) {
	for _, tc := range []struct {
		name, s string
		ok      bool
	}{
		{"plain", `"Download complete" is visible`, true},
		{"tab and newline", "a\tb\nc", true},
		{"unicode", "« Terminé » ✓", true},
		{"NUL", "a\x00b", false},
		{"escape", "a\x1b[2Jb", false},
		{"carriage return", "a\rb", false},
		{"DEL", "a\x7fb", false},
		{"invalid UTF-8", "a\xffb", false},
		{"at the limit", strings.Repeat("x", maxCriteriaLen), true},
		{"over the limit", strings.Repeat("x", maxCriteriaLen+1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkText("criteria", tc.s, maxCriteriaLen)
			if (err == nil) != tc.ok {
				t.Fatalf("checkText(%q) = %v, want ok %v", tc.s, err, tc.ok)
			}
			if err != nil && !isValidation(err, "criteria") {
				t.Errorf("checkText(%q) = %v, want a ValidationError for criteria", tc.s, err)
			}
		})
	}
}

func TestCleanMessage(t *testing.T) {
	if got, want := cleanMessage("a\x00b\x1bc\td\ne\x7f\xff"), "a b c\td\ne \uFFFD"; got != want {
		t.Errorf("cleanMessage = %q, want %q", got, want)
	}
	long := cleanMessage(strings.Repeat("é", maxMessageLen))
	if len(long) > maxMessageLen || !utf8.ValidString(long) || !strings.HasSuffix(long, "…") {
		t.Errorf("cleanMessage(long) = %d bytes, valid %v, want at most %d, valid, ending in …", len(long), utf8.ValidString(long), maxMessageLen)
	}
}
