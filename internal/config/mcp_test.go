package config

import (
	"errors"
	"testing"
)

func TestMCPConformanceSetting(t *testing.T) {
	for _, tc := range []struct {
		val  string
		want bool
	}{{"", false}, {"1", true}, {"true", true}, {"0", false}} {
		vars := map[string]string{"HOME": "/home/u"}
		if tc.val != "" {
			vars["ACU_MCP_CONFORMANCE"] = tc.val
		}
		getenv, environ := env(vars)
		c, _, _, err := Load(getenv, environ, nil, nil)
		if err != nil {
			t.Fatalf("ACU_MCP_CONFORMANCE=%q: %v", tc.val, err)
		}
		if got := c.MCP().Conformance; got != tc.want {
			t.Errorf("ACU_MCP_CONFORMANCE=%q: Conformance = %v, want %v", tc.val, got, tc.want)
		}
	}
	getenv, environ := env(map[string]string{"HOME": "/home/u", "ACU_MCP_CONFORMANCE": "sometimes"})
	_, _, _, err := Load(getenv, environ, nil, nil)
	var ce *Error
	if !errors.As(err, &ce) || ce.Env != "ACU_MCP_CONFORMANCE" {
		t.Fatalf("Load with ACU_MCP_CONFORMANCE=sometimes = %v, want an error naming ACU_MCP_CONFORMANCE", err)
	}
}
