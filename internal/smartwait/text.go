package smartwait

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Length caps of the texts a wait carries into notifications. The criteria
// and a cancel reason are part of every message, and exec passes the
// message as one argument (at most 128 KiB on Linux), so each is bounded
// well below that.
const (
	maxCriteriaLen = 4000     // bytes of criteria (wake_when)
	maxReasonLen   = 4000     // bytes of a cancel reason
	maxMessageLen  = 16 << 10 // bytes of a notification message; longer ones are cut
)

// CheckReason validates a cancel reason (any run kind's) as Cancel does:
// at most 4000 bytes, UTF-8, no control characters but tab and newline.
// The error is a *ValidationError for field "reason".
func CheckReason(reason string) error { return checkText("reason", reason, maxReasonLen) }

// checkText rejects what no notifier can carry: invalid UTF-8, NUL and the
// other C0 control characters except tab and newline, DEL, and more than
// limit bytes. field names the request field in the error.
func checkText(field, s string, limit int) error {
	if len(s) > limit {
		return &ValidationError{Field: field, Message: fmt.Sprintf("must be at most %d bytes, got %d", limit, len(s))}
	}
	if !utf8.ValidString(s) {
		return &ValidationError{Field: field, Message: "must be valid UTF-8"}
	}
	for i, r := range s {
		if isControl(r) {
			return &ValidationError{Field: field, Message: fmt.Sprintf("must not contain control characters (found %U at byte %d); only tab and newline are allowed", r, i)}
		}
	}
	return nil
}

func isControl(r rune) bool { return (r < 0x20 && r != '\t' && r != '\n') || r == 0x7f }

// cleanMessage makes a notification message deliverable by every notifier:
// control characters (from a model's evidence, say) become spaces, invalid
// UTF-8 becomes U+FFFD, and a message over maxMessageLen is cut on a rune
// boundary with "…".
func cleanMessage(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if isControl(r) {
			return ' '
		}
		return r
	}, s)
	if len(s) <= maxMessageLen {
		return s
	}
	cut := maxMessageLen - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
