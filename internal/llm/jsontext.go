package llm

import (
	"encoding/json"
	"errors"
	"strings"
)

// ErrNoJSON is returned by ExtractJSON when the text holds no JSON value.
var ErrNoJSON = errors.New("reply holds no JSON object or array")

// ExtractJSON finds the JSON object or array a model meant to send in a reply
// that may wrap it in prose, a ```json fence, or a leading BOM: the first
// '{' or '[' that starts a complete, valid JSON value. Unmarshalling the
// result into the caller's type is the caller's business.
func ExtractJSON(text string) ([]byte, error) {
	text = strings.TrimPrefix(text, "\ufeff")
	// Prefer the contents of a fenced block when there is one.
	if i := strings.Index(text, "```"); i >= 0 {
		rest := text[i+3:]
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 && !strings.ContainsAny(rest[:nl], "{[") {
			rest = rest[nl+1:]
		}
		if j := strings.Index(rest, "```"); j >= 0 {
			if v, ok := firstJSON(rest[:j]); ok {
				return v, nil
			}
		}
	}
	if v, ok := firstJSON(text); ok {
		return v, nil
	}
	return nil, ErrNoJSON
}

// firstJSON returns the first balanced {...} or [...] span that is valid
// JSON, trying at most 64 opening brackets so garbage stays linear-ish.
func firstJSON(s string) ([]byte, bool) {
	tries := 0
	for start := 0; start < len(s) && tries < 64; start++ {
		c := s[start]
		if c != '{' && c != '[' {
			continue
		}
		tries++
		if end, ok := matchClose(s, start); ok {
			cand := []byte(s[start:end])
			if json.Valid(cand) {
				return cand, true
			}
		}
	}
	return nil, false
}

// matchClose finds the end (exclusive) of the bracketed value starting at
// s[start], honouring strings and escapes.
func matchClose(s string, start int) (int, bool) {
	var stack []byte
	inStr, esc := false, false
	for i := start; i < len(s); i++ {
		c := s[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{':
			stack = append(stack, '}')
		case '[':
			stack = append(stack, ']')
		case '}', ']':
			if len(stack) == 0 || stack[len(stack)-1] != c {
				return 0, false
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return i + 1, true
			}
		}
	}
	return 0, false
}
