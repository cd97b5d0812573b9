package config

import "testing"

func TestDialAddr(t *testing.T) {
	for _, tc := range []struct{ host, want string }{
		{"127.0.0.1", "127.0.0.1:18790"},
		{"0.0.0.0", "127.0.0.1:18790"},
		{"::", "[::1]:18790"},
		{"[::]", "[::1]:18790"},
		{"::1", "[::1]:18790"},
		{"10.0.0.5", "10.0.0.5:18790"},
		{"desktop.example", "desktop.example:18790"},
	} {
		c := &Config{DaemonHost: tc.host, DaemonPort: 18790}
		if got := c.DialAddr(); got != tc.want {
			t.Errorf("DialAddr() with ACU_DAEMON_HOST=%s = %q, want %q", tc.host, got, tc.want)
		}
	}
}
