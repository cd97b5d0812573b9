package llm_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/acu-dev/acu/internal/llm"
)

func TestExtractJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"bare", `{"a":1}`, `{"a":1}`},
		{"prose around", `Sure! Here it is: {"done": true, "why": "a } in a string"} Hope it helps.`, `{"done": true, "why": "a } in a string"}`},
		{"fence", "```json\n{\"a\": [1,2]}\n```", `{"a": [1,2]}`},
		{"fence no lang", "```\n[1, {\"b\": \"x\"}]\n```\nmore", `[1, {"b": "x"}]`},
		{"bom", "\ufeff{\"a\":\"\\\"q\\\"\"}", `{"a":"\"q\""}`},
		{"skips invalid first", `{not json} then {"ok":true}`, `{"ok":true}`},
		{"nested", `x {"a":{"b":[{"c":"]"}]}} y`, `{"a":{"b":[{"c":"]"}]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := llm.ExtractJSON(tt.in)
			if err != nil || string(got) != tt.want {
				t.Errorf("ExtractJSON(%q) = %s, %v, want %s", tt.in, got, err, tt.want)
			}
		})
	}
	for _, in := range []string{"", "YES", "{", "{\"a\":", "[1,2", "}{"} {
		if got, err := llm.ExtractJSON(in); !errors.Is(err, llm.ErrNoJSON) {
			t.Errorf("ExtractJSON(%q) = %s, %v, want ErrNoJSON", in, got, err)
		}
	}
}

func FuzzExtractJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}`, "```json\n[1]\n```", `x {"a":"}"} y`, `{{{{`, `"\"{"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := llm.ExtractJSON(s)
		if err != nil {
			return
		}
		if !json.Valid(got) {
			t.Fatalf("ExtractJSON(%q) = %q, not valid JSON", s, got)
		}
		if !strings.Contains(s, string(got)) {
			t.Fatalf("ExtractJSON(%q) = %q, not a substring", s, got)
		}
	})
}
