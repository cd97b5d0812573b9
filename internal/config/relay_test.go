package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRelayDefaults(t *testing.T) {
	getenv, environ := env(map[string]string{"HOME": "/home/u"})
	c, _, _, err := Load(getenv, environ, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := *c.Relay()
	want := RelayConfig{
		Enabled: true, Host: "127.0.0.1", Port: 18791, Auth: "token",
		AgentEnabled: true, AgentIntervalMs: 30000, AgentModel: "google/gemini-2.5-flash-lite", AgentMaxAgeMs: 120000,
		AgentMaxTokens: 200, AgentTemperature: 0.3, AgentPushToFeed: true, AgentBaseURL: "https://openrouter.ai/api/v1",
		AgentTimeout:  30 * time.Second,
		SenseRelayURL: "http://127.0.0.1:18791", SenseMinInterval: 2 * time.Second, SenseOCRMaxPixels: 2073600, SenseOCRMaxChars: 4000,
		SenseIgnore: []string{"keepassxc", "1password", "bitwarden", "pinentry"}, SenseQueue: 64,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("relay defaults (-want +got):\n%s", diff)
	}
	if c.RelayAddr() != "127.0.0.1:18791" {
		t.Errorf("RelayAddr() = %q", c.RelayAddr())
	}
}

func TestRelayFromEnvironment(t *testing.T) {
	getenv, environ := env(map[string]string{
		"HOME": "/home/u", "ACU_RELAY_PORT": "19000", "ACU_RELAY_HOST": "::1", "ACU_RELAY_ENABLED": "false", "ACU_RELAY_TOKEN": "s3cret",
		"AGENT_ENABLED": "false", "AGENT_INTERVAL_MS": "10000", "AGENT_MODEL": "x/y", "AGENT_MAX_AGE_MS": "60000", "AGENT_MAX_TOKENS": "100",
		"AGENT_TEMPERATURE": "0.7", "AGENT_PUSH_TO_FEED": "false", "AGENT_LOG_VERBOSE": "true", "AGENT_BASE_URL": "http://127.0.0.1:8000/v1",
		"AGENT_DEBOUNCE_MS": "3000", "AGENT_FALLBACK_MODELS": "a/b, c/d", "ACU_RELAY_CALL_TIMEOUT": "5s",
		"ACU_SENSE_RELAY_URL": "http://127.0.0.1:19000", "ACU_SENSE_DISPLAY": ":7", "ACU_SENSE_MIN_INTERVAL": "500ms",
		"ACU_SENSE_OCR_MAX_PIXELS": "500000", "ACU_SENSE_OCR_MAX_CHARS": "2000", "ACU_SENSE_IGNORE": "Secrets", "ACU_SENSE_QUEUE": "8",
	})
	c, _, warnings, err := Load(getenv, environ, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings = %v", warnings)
	}
	r := c.Relay()
	if r.Port != 19000 || r.Host != "::1" || r.Enabled || r.Token.Reveal() != "s3cret" || r.AgentEnabled || r.AgentIntervalMs != 10000 ||
		r.AgentModel != "x/y" || r.AgentMaxAgeMs != 60000 || r.AgentMaxTokens != 100 || r.AgentTemperature != 0.7 || r.AgentPushToFeed ||
		!r.AgentLogVerbose || r.AgentBaseURL != "http://127.0.0.1:8000/v1" || r.AgentDebounceMs != 3000 ||
		!cmp.Equal(r.AgentFallbackModels, []string{"a/b", "c/d"}) || r.AgentTimeout != 5*time.Second ||
		r.SenseRelayURL != "http://127.0.0.1:19000" || r.SenseDisplay != ":7" || r.SenseMinInterval != 500*time.Millisecond ||
		r.SenseOCRMaxPixels != 500000 || r.SenseOCRMaxChars != 2000 || !cmp.Equal(r.SenseIgnore, []string{"Secrets"}) || r.SenseQueue != 8 {
		t.Errorf("relay config from the environment = %+v", *r)
	}
	if c.RelayAddr() != "[::1]:19000" {
		t.Errorf("RelayAddr() = %q", c.RelayAddr())
	}
	if s := r.Token.String(); strings.Contains(s, "s3cret") {
		t.Errorf("token prints as %q", s)
	}
}

func TestRelayBadValues(t *testing.T) {
	for _, tc := range []struct{ env, value, accepted string }{
		{"ACU_RELAY_PORT", "0", "a whole number from 1 to 65535"},
		{"AGENT_INTERVAL_MS", "fast", "a whole number from 100 to 86400000"},
		{"AGENT_TEMPERATURE", "3", "a number from 0 to 2"},
		{"AGENT_ENABLED", "maybe", "true or false"},
		{"ACU_SENSE_MIN_INTERVAL", "1ms", "a duration from 50ms to 1h0m0s"},
		{"ACU_RELAY_AUTH", "off", "one of token, none"},
	} {
		t.Run(tc.env, func(t *testing.T) {
			getenv, environ := env(map[string]string{"HOME": "/home/u", tc.env: tc.value})
			_, _, _, err := Load(getenv, environ, nil, nil)
			var ce *Error
			if !errors.As(err, &ce) || ce.Env != tc.env || !strings.Contains(err.Error(), tc.accepted) {
				t.Errorf("Load with %s=%s: err = %v, want a config error naming it and %q", tc.env, tc.value, err, tc.accepted)
			}
		})
	}
}

// ACU_RELAY_AUTH=none is accepted only while the relay listens on
// loopback, and always carries a warning; the default needs the token.
func TestRelayAuth(t *testing.T) {
	for _, tc := range []struct {
		name, auth, host string
		open             bool
		refused          bool
	}{
		{"default", "", "", false, false},
		{"token", "token", "0.0.0.0", false, false},
		{"none on 127.0.0.1", "none", "", true, false},
		{"none on ::1", "NONE", "::1", true, false},
		{"none on localhost", "none", "localhost", true, false},
		{"none on every address", "none", "0.0.0.0", false, true},
		{"none on a LAN address", "none", "192.168.1.20", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := map[string]string{"HOME": "/home/u"}
			if tc.auth != "" {
				m["ACU_RELAY_AUTH"] = tc.auth
			}
			if tc.host != "" {
				m["ACU_RELAY_HOST"] = tc.host
			}
			getenv, environ := env(m)
			c, _, _, err := Load(getenv, environ, nil, nil)
			if tc.refused {
				var ce *Error
				if !errors.As(err, &ce) || ce.Env != "ACU_RELAY_AUTH" || !strings.Contains(err.Error(), "loopback") || !strings.Contains(err.Error(), "ACU_RELAY_HOST") {
					t.Fatalf("Load(ACU_RELAY_AUTH=%s, ACU_RELAY_HOST=%s) err = %v, want a refusal naming ACU_RELAY_AUTH, ACU_RELAY_HOST and loopback", tc.auth, tc.host, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load(ACU_RELAY_AUTH=%s, ACU_RELAY_HOST=%s): %v", tc.auth, tc.host, err)
			}
			if got := c.Relay().Open(); got != tc.open {
				t.Errorf("Open() = %v, want %v", got, tc.open)
			}
			w := c.RelayAuthWarning()
			if tc.open != (w != "") || tc.open && (!strings.Contains(w, "ACU_RELAY_AUTH=none") || !strings.Contains(w, c.RelayAddr())) {
				t.Errorf("RelayAuthWarning() = %q, want a warning naming ACU_RELAY_AUTH=none and %s exactly when open", w, c.RelayAddr())
			}
		})
	}
}
