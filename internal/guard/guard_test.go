package guard

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestHostAllowed(t *testing.T) {
	g := Guard{AllowedHosts: []string{"acu.lan"}, ListenHost: "10.0.0.5"}
	tests := []struct {
		host string
		want bool
	}{
		{"127.0.0.1:18790", true}, {"localhost", true}, {"[::1]:18790", true}, {"app.localhost:1", true},
		{"127.3.4.5", true}, {"acu.lan:18790", true}, {"ACU.LAN", true}, {"10.0.0.5:18790", true},
		{"evil.example", false}, {"10.0.0.6", false}, {"localhost.evil.example", false}, {"", false},
	}
	for _, tt := range tests {
		if got := g.HostAllowed(tt.host); got != tt.want {
			t.Errorf("HostAllowed(%q) = %v, want %v", tt.host, got, tt.want)
		}
	}
}

func TestWrap(t *testing.T) {
	h := Guard{}.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	tests := []struct {
		name   string
		host   string
		hdr    map[string]string
		status int
	}{
		{"plain CLI request", "127.0.0.1:1", nil, 204},
		{"same origin", "127.0.0.1:1", map[string]string{"Origin": "http://127.0.0.1:1"}, 204},
		{"foreign origin", "127.0.0.1:1", map[string]string{"Origin": "http://evil.example"}, 403},
		{"origin with another port", "127.0.0.1:1", map[string]string{"Origin": "http://127.0.0.1:2"}, 403},
		{"foreign referer", "127.0.0.1:1", map[string]string{"Referer": "http://evil.example/x"}, 403},
		{"cross-site fetch", "127.0.0.1:1", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"rebound host", "evil.example", nil, 403},
		{"null origin", "127.0.0.1:1", map[string]string{"Origin": "null"}, 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "http://"+tt.host+"/x", nil)
			for k, v := range tt.hdr {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.status {
				t.Errorf("status = %d, want %d (%s)", w.Code, tt.status, w.Body)
			}
			if w.Header().Get("Content-Security-Policy") == "" || w.Header().Get("X-Frame-Options") != "DENY" {
				t.Errorf("security headers missing: %v", w.Header())
			}
		})
	}
}
