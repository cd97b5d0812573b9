package secret

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestStringNeverPrints(t *testing.T) {
	s := String("sk-or-very-secret")
	var logBuf bytes.Buffer
	slog.New(slog.NewTextHandler(&logBuf, nil)).Info("x", "key", s)
	slog.New(slog.NewJSONHandler(&logBuf, nil)).Info("x", "key", s)
	j, err := json.Marshal(struct{ K String }{s})
	if err != nil {
		t.Fatal(err)
	}
	outs := []string{fmt.Sprint(s), fmt.Sprintf("%v %s %#v %+v", s, s, s, struct{ K String }{s}), logBuf.String(), string(j)}
	for _, out := range outs {
		if strings.Contains(out, "very-secret") {
			t.Errorf("secret leaked in %q", out)
		}
		if !strings.Contains(out, "REDACTED") {
			t.Errorf("output %q does not say REDACTED", out)
		}
	}
	if s.Reveal() != "sk-or-very-secret" {
		t.Errorf("Reveal() = %q", s.Reveal())
	}
	if String("").String() != "" {
		t.Errorf("empty secret prints %q, want empty", String("").String())
	}
}
