package relay

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// TestOpen: an open relay (ACU_RELAY_AUTH=none) serves the seed's routes
// without a token, keeps the Host and Origin checks and the token on
// POST /auth/link, and serves on loopback only.
func TestOpen(t *testing.T) {
	h := newHarness(t, nil, func(o *Options) { o.Open = true })
	for _, p := range []string{"/health", "/feed", "/sense", "/agent/digest", "/agent/last", "/agent/history", "/agent/context", "/agent/config"} {
		if code, b := h.do(t, "GET", p, "", "Authorization", ""); code != 200 {
			t.Errorf("GET %s without token on an open relay = %d %s, want 200", p, code, b)
		}
	}
	for p, body := range map[string]string{"/feed": `{"text":"hi"}`, "/sense": senseBody("text", "idea", "x", 1), "/agent/config": `{"pushToFeed":false}`} {
		if code, b := h.do(t, "POST", p, body, "Authorization", ""); code != 200 {
			t.Errorf("POST %s without token on an open relay = %d %s, want 200", p, code, b)
		}
	}
	if code, _ := h.do(t, "POST", "/auth/link", "", "Authorization", ""); code != 401 {
		t.Errorf("POST /auth/link without token on an open relay = %d, want 401: only the token mints links", code)
	}
	if code, _ := h.do(t, "POST", "/feed", `{"text":"x"}`, "Authorization", "", "Origin", "http://evil.example"); code != 403 {
		t.Errorf("cross-origin POST to an open relay = %d, want 403", code)
	}
	if code, _ := h.do(t, "GET", "/health", "", "Authorization", "", "Host", "evil.example"); code != 403 {
		t.Errorf("foreign Host on an open relay = %d, want 403", code)
	}

	closed := newHarness(t, nil, nil)
	if code, _ := closed.do(t, "GET", "/feed", "", "Authorization", ""); code != 401 {
		t.Errorf("GET /feed without token on a relay that is not open = %d, want 401", code)
	}
}

// TestOpenServesLoopbackOnly: Serve refuses to serve an open relay on a
// listener beyond loopback, whatever the configuration said.
func TestOpenServesLoopbackOnly(t *testing.T) {
	// Every address: the refusal comes before any connection is accepted.
	l, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r, err := New(t.Context(), Options{Token: testToken, Open: true})
	if err != nil {
		t.Fatal(err)
	}
	// Bounded, so that a relay that serves fails the test instead of hanging it.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	err = r.Serve(ctx, l)
	if err == nil || !strings.Contains(err.Error(), "loopback") || !strings.Contains(err.Error(), "ACU_RELAY_AUTH=none") {
		t.Fatalf("Serve(open relay, %s) = %v, want a refusal naming ACU_RELAY_AUTH=none and loopback", l.Addr(), err)
	}
}
