package notify

import (
	"bytes"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const (
	testToken  = "tok-3f9a-very-secret"
	testSecret = "hmac-7c1e-very-secret"
)

// hookRequest is what a test receiver saw.
type hookRequest struct {
	Header http.Header
	Body   []byte
}

// hookServer is an OpenClaw-like /hooks/wake receiver that checks the bearer
// token itself and answers with the statuses queued in replies (then 200).
type hookServer struct {
	*httptest.Server
	mu      sync.Mutex
	got     []hookRequest
	replies []int
}

func newHookServer(t *testing.T, replies ...int) *hookServer {
	t.Helper()
	h := &hookServer{replies: replies}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /hooks/wake", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.got = append(h.got, hookRequest{Header: r.Header.Clone(), Body: body})
		status := http.StatusOK
		if len(h.replies) > 0 {
			status, h.replies = h.replies[0], h.replies[1:]
		}
		h.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if status != http.StatusOK {
			http.Error(w, "gateway busy", status)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	})
	h.Server = httptest.NewServer(mux)
	t.Cleanup(h.Close)
	return h
}

func (h *hookServer) requests() []hookRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hookRequest(nil), h.got...)
}

func TestWebhookDefaultBodyAndHeaders(t *testing.T) {
	srv := newHookServer(t)
	var logs bytes.Buffer
	at := time.Date(2026, 11, 22, 14, 0, 0, 0, time.UTC)
	w, err := NewWebhook(WebhookOptions{
		URL: srv.URL + "/hooks/wake", Token: testToken, Secret: testSecret,
		Clock:  func() time.Time { return at },
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	msg := "[smart_wait resolved] Job wait_1: \"Download complete\" is visible → <b>done</b> & \\o/\n"
	d := Delivery{ID: 1, Key: "wait_1:resolved:webhook", BaseKey: "wait_1:resolved", Notifier: "webhook",
		RunID: "wait_1", Event: "resolved", Message: msg, Attempt: 1}
	if err := w.Notify(t.Context(), d); err != nil {
		t.Fatalf("Notify() = %v", err)
	}
	reqs := srv.requests()
	if len(reqs) != 1 {
		t.Fatalf("server got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	var body map[string]any
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("body %q is not JSON: %v", r.Body, err)
	}
	want := map[string]any{"text": msg, "mode": "now", "runId": "wait_1", "event": "resolved"}
	if diff := cmp.Diff(want, body); diff != "" {
		t.Errorf("body mismatch (-want +got):\n%s", diff)
	}
	for name, want := range map[string]string{
		"Content-Type":    "application/json",
		"Idempotency-Key": "wait_1:resolved:webhook",
		"X-Acu-Timestamp": strconv.FormatInt(at.Unix(), 10),
		"Authorization":   "Bearer " + testToken,
	} {
		if got := r.Header.Get(name); got != want {
			t.Errorf("header %s = %q, want %q", name, got, want)
		}
	}
	// The receiver's side of the signature check.
	if got, want := r.Header.Get(HeaderSignature), Sign([]byte(testSecret), r.Body); !hmac.Equal([]byte(got), []byte(want)) {
		t.Errorf("%s = %q, want %q", HeaderSignature, got, want)
	}
	if got := r.Header.Get(HeaderSignature); !strings.HasPrefix(got, "sha256=") || len(got) != len("sha256=")+64 {
		t.Errorf("%s = %q, want sha256=<64 hex>", HeaderSignature, got)
	}
	if strings.Contains(logs.String(), testToken) || strings.Contains(logs.String(), testSecret) {
		t.Errorf("logs carry the token or secret:\n%s", logs.String())
	}
}

func TestSignKnownAnswer(t *testing.T) {
	// RFC 4231 test case 2.
	got := Sign([]byte("Jefe"), []byte("what do ya want for nothing?"))
	if want := "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"; got != want {
		t.Errorf("Sign = %q, want %q", got, want)
	}
}

func TestWebhookNoSecretNoToken(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Header.Clone() }))
	t.Cleanup(srv.Close)
	w, err := NewWebhook(WebhookOptions{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Notify(t.Context(), Delivery{Key: "k:webhook", Message: "m"}); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"Authorization", HeaderSignature} {
		if v := got.Get(h); v != "" {
			t.Errorf("header %s = %q, want none when not configured", h, v)
		}
	}
	if got.Get(HeaderTimestamp) == "" || got.Get(HeaderIdempotency) != "k:webhook" {
		t.Errorf("headers %v, want a timestamp and the idempotency key", got)
	}
}

func TestWebhookBodyTemplate(t *testing.T) {
	srv := newHookServer(t)
	tmpl := `{"text": {{json .Message}}, "mode": "next-heartbeat", "note": "{{jsonEscape .Event}} of {{jsonEscape .RunID}}", "key": {{json .Key}}, "attempt": {{.Attempt}}}`
	w, err := NewWebhook(WebhookOptions{URL: srv.URL + "/hooks/wake", Token: testToken, BodyTemplate: tmpl})
	if err != nil {
		t.Fatal(err)
	}
	msg := "say \"hi\"\n\tand \\ leave"
	d := Delivery{Key: "wait_2:timeout:webhook", BaseKey: "wait_2:timeout", RunID: `wait"2`, Event: "timeout", Message: msg, Attempt: 3}
	if err := w.Notify(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(srv.requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"text": msg, "mode": "next-heartbeat", "note": `timeout of wait"2`, "key": "wait_2:timeout", "attempt": 3.0}
	if diff := cmp.Diff(want, body); diff != "" {
		t.Errorf("body mismatch (-want +got):\n%s", diff)
	}
}

func TestNewWebhookRejects(t *testing.T) {
	tests := []struct {
		name string
		opts WebhookOptions
		want string
	}{
		{"no url", WebhookOptions{}, "not an absolute http"},
		{"relative", WebhookOptions{URL: "/hooks/wake"}, "not an absolute http"},
		{"ftp", WebhookOptions{URL: "ftp://host/x"}, "not an absolute http"},
		{"bad template syntax", WebhookOptions{URL: "http://127.0.0.1/", BodyTemplate: `{"text": {{json .Message}`}, "body template"},
		{"unknown field", WebhookOptions{URL: "http://127.0.0.1/", BodyTemplate: `{"text": {{json .Msg}}}`}, "body template"},
		{"unescaped message", WebhookOptions{URL: "http://127.0.0.1/", BodyTemplate: `{"text": "{{.Message}}"}`}, "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewWebhook(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewWebhook() error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestWebhookFailureStatus(t *testing.T) {
	srv := newHookServer(t, http.StatusInternalServerError)
	w, err := NewWebhook(WebhookOptions{URL: srv.URL + "/hooks/wake?token=" + testToken, Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	err = w.Notify(t.Context(), Delivery{Key: "k", Message: "m"})
	if err == nil {
		t.Fatal("Notify() = nil for a 500")
	}
	for _, want := range []string{"500", "gateway busy", "/hooks/wake"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Notify() error %q, want it to contain %q", err, want)
		}
	}
	if strings.Contains(err.Error(), testToken) {
		t.Errorf("Notify() error %q carries the token from the URL", err)
	}
	// A wrong token is a failure too (401), not a delivery.
	w2, err := NewWebhook(WebhookOptions{URL: srv.URL + "/hooks/wake", Token: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w2.Notify(t.Context(), Delivery{Key: "k", Message: "m"}); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("Notify() with a wrong token = %v, want a 401 failure", err)
	}
}

func TestWebhookRetryAfter(t *testing.T) {
	at := time.Date(2026, 11, 22, 14, 0, 0, 0, time.UTC)
	tests := []struct {
		name, header string
		want         time.Duration
	}{
		{"seconds", "7", 7 * time.Second},
		{"date", at.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", tt.header)
				w.WriteHeader(http.StatusTooManyRequests)
			}))
			t.Cleanup(srv.Close)
			w, err := NewWebhook(WebhookOptions{URL: srv.URL, Clock: func() time.Time { return at }})
			if err != nil {
				t.Fatal(err)
			}
			err = w.Notify(t.Context(), Delivery{Key: "k", Message: "m"})
			var ra *RetryAfterError
			if !errors.As(err, &ra) || ra.After != tt.want {
				t.Fatalf("Notify() error = %#v, want RetryAfterError{After: %v}", err, tt.want)
			}
		})
	}
}

func TestWebhookRedirectIsAFailure(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere?token=abc", http.StatusFound)
	}))
	t.Cleanup(srv.Close)
	w, err := NewWebhook(WebhookOptions{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	err = w.Notify(t.Context(), Delivery{Key: "k", Message: "m"})
	if err == nil || !strings.Contains(err.Error(), "redirected to /elsewhere") || strings.Contains(err.Error(), "abc") {
		t.Errorf("Notify() error = %v, want a redirect failure naming the redacted target", err)
	}
}

func TestWebhookHungEndpointTimesOut(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	w, err := NewWebhook(WebhookOptions{URL: srv.URL + "/hooks/wake", Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	err = w.Notify(t.Context(), Delivery{Key: "k", Message: "m"})
	if err == nil || !strings.Contains(err.Error(), "no response within 200ms") {
		t.Errorf("Notify() error = %v, want a timeout", err)
	}
}

func TestWebhookSecretsNotPrinted(t *testing.T) {
	w, err := NewWebhook(WebhookOptions{URL: "http://user:pw@127.0.0.1:1/hooks?token=q", Token: testToken, Secret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{w.URL(), slogString(t, w.token), slogString(t, w.secret)} {
		for _, bad := range []string{testToken, testSecret, "pw", "token=q"} {
			if strings.Contains(s, bad) {
				t.Errorf("%q shows %q", s, bad)
			}
		}
	}
}

func slogString(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	slog.New(slog.NewTextHandler(&b, nil)).Info("x", "v", v)
	return b.String()
}

func BenchmarkWebhookBody(b *testing.B) {
	b.ReportAllocs()
	w, err := NewWebhook(WebhookOptions{URL: "http://127.0.0.1/"})
	if err != nil {
		b.Fatal(err)
	}
	d := WebhookData{Message: nastyMessages[0], RunID: "wait_1", Event: "resolved"}
	for b.Loop() {
		if _, err := w.body(d); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWebhookNotify is one signed POST to a loopback receiver.
func BenchmarkWebhookNotify(b *testing.B) {
	b.ReportAllocs()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer srv.Close()
	w, err := NewWebhook(WebhookOptions{URL: srv.URL, Token: testToken, Secret: testSecret})
	if err != nil {
		b.Fatal(err)
	}
	d := Delivery{Key: "wait_1:resolved:webhook", Message: nastyMessages[0], RunID: "wait_1", Event: "resolved"}
	for b.Loop() {
		if err := w.Notify(b.Context(), d); err != nil {
			b.Fatal(err)
		}
	}
}
