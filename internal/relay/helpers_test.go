package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/leakcheck"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/llm/llmtest"
)

// TestMain fails the package when goroutines of the relay outlive the tests.
func TestMain(m *testing.M) { leakcheck.Main(m, "acu/internal/relay.") }

var noKeepAlive = &http.Client{Transport: &http.Transport{DisableKeepAlives: true, ExpectContinueTimeout: 10 * time.Second}}

// testToken is the relay's token in tests; harness.do sends it unless told
// otherwise ("Authorization", "").
const testToken = "test-relay-token"

// fakeClock is a settable clock.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// harness is a relay behind an httptest server, with a fake model.
type harness struct {
	r     *Relay
	srv   *httptest.Server
	model *llmtest.Server
}

func newHarness(t *testing.T, reply llmtest.Handler, adjust func(*Options)) *harness {
	t.Helper()
	m := llmtest.NewOpenAI(t, reply)
	client := m.Client(t, func(o *llm.Options) { o.MaxRetries = -1; o.Timeout = 5 * time.Second })
	cfg := DefaultAgentConfig()
	opts := Options{Agent: cfg, Model: client, Token: testToken}
	if adjust != nil {
		adjust(&opts)
	}
	r, err := New(t.Context(), opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv := httptest.NewServer(r.Handler())
	t.Cleanup(srv.Close)
	return &harness{r: r, srv: srv, model: m}
}

func (h *harness) do(t *testing.T, method, path, body string, hdr ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, h.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	for i := 0; i+1 < len(hdr); i += 2 {
		switch {
		case hdr[i] == "Host":
			req.Host = hdr[i+1]
		case hdr[i+1] == "":
			req.Header.Del(hdr[i])
		default:
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	// No keep-alive: tests drop the server's connections on purpose.
	resp, err := noKeepAlive.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func (h *harness) getJSON(t *testing.T, path string, v any) {
	t.Helper()
	code, b := h.do(t, "GET", path, "")
	if code != 200 {
		t.Fatalf("GET %s = %d %s", path, code, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: decode %s: %v", path, b, err)
	}
}

func (h *harness) post(t *testing.T, path, body string) {
	t.Helper()
	code, b := h.do(t, "POST", path, body)
	if code != 200 {
		t.Fatalf("POST %s = %d %s", path, code, b)
	}
}

func senseBody(typ, app, ocr string, ts int64) string {
	b, _ := json.Marshal(map[string]any{"type": typ, "ts": ts, "ocr": ocr, "meta": map[string]any{"app": app, "ssim": 0.85}})
	return string(b)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

var _ = bytes.NewReader
