package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestModelPrices(t *testing.T) {
	getenv, environ := env(map[string]string{"HOME": "/home/u",
		"ACU_MODEL_PRICES": " anthropic/claude-sonnet-4.5=3:15, qwen2.5vl:7b=0:0 ,google/gemini-2.0-flash-exp:free=0.5:1.25"})
	c, _, warnings, err := Load(getenv, environ, nil, nil)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("Load = %v, warnings %v", err, warnings)
	}
	want := map[string]ModelPrice{
		"anthropic/claude-sonnet-4.5":      {3, 15},
		"qwen2.5vl:7b":                     {0, 0},
		"google/gemini-2.0-flash-exp:free": {0.5, 1.25},
	}
	if d := cmp.Diff(want, c.ModelPrices); d != "" {
		t.Errorf("ModelPrices (-want +got):\n%s", d)
	}
	if got, wantS := FormatModelPrices(c.ModelPrices), "anthropic/claude-sonnet-4.5=3:15,google/gemini-2.0-flash-exp:free=0.5:1.25,qwen2.5vl:7b=0:0"; got != wantS {
		t.Errorf("FormatModelPrices = %q, want %q", got, wantS)
	}

	for _, bad := range []string{"m", "m=3", "m=3:x", "m=-1:2", "=1:2", "m=1:2,m=1:3", "m=1:2:3"} {
		getenv, environ := env2("ACU_MODEL_PRICES", bad)
		_, _, _, err := Load(getenv, environ, nil, nil)
		var ce *Error
		if !errors.As(err, &ce) || ce.Env != "ACU_MODEL_PRICES" {
			t.Errorf("ACU_MODEL_PRICES=%s: err = %v, want a config error naming it", bad, err)
		}
	}

	// A cost limit rests on it: a misspelt name stops start-up.
	getenv, environ = env2("ACU_MODEL_PRICE", "m=1:2")
	if _, _, _, err := Load(getenv, environ, nil, nil); err == nil || !strings.Contains(err.Error(), "ACU_MODEL_PRICES") {
		t.Errorf("ACU_MODEL_PRICE: err = %v, want start-up refused naming ACU_MODEL_PRICES", err)
	}
}
