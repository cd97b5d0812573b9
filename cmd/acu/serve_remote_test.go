package main

import (
	"strings"
	"testing"
)

// The "listening beyond loopback" warning is about the address bound, not
// the opt-in: ACU_ALLOW_REMOTE=true with the default 127.0.0.1 binds only
// loopback and must not warn; 0.0.0.0 must.
func TestServeWarnsBeyondLoopbackOnlyWhenBound(t *testing.T) {
	const warning = "listening beyond loopback"
	for _, tc := range []struct {
		host string
		warn bool
	}{
		{"127.0.0.1", false},
		{"localhost", false},
		{"0.0.0.0", true},
	} {
		t.Run(tc.host, func(t *testing.T) {
			env, dataDir, port := newEnv(t, ":0")
			env = append(env, "ACU_ALLOW_REMOTE=true", "ACU_DAEMON_HOST="+tc.host, "ACU_RELAY_ENABLED=false")
			d := startDaemon(t, env, dataDir, port)
			d.stop()
			if got := strings.Contains(d.log.String(), warning); got != tc.warn {
				t.Errorf("ACU_ALLOW_REMOTE=true ACU_DAEMON_HOST=%s: warned %q = %v, want %v; log:\n%s", tc.host, warning, got, tc.warn, d.log)
			}
		})
	}
}
