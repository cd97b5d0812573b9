package notify

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/acu-dev/acu/internal/secret"
)

// Webhook defaults and header names.
const (
	DefaultWebhookTimeout = 10 * time.Second

	HeaderSignature   = "X-Acu-Signature" // "sha256=" + hex HMAC-SHA256 of the body under the secret
	HeaderTimestamp   = "X-Acu-Timestamp" // unix seconds when the attempt was made
	HeaderIdempotency = "Idempotency-Key" // the outbox row's key, the same on every retry
)

// WebhookOptions configures the webhook notifier.
type WebhookOptions struct {
	// Name is the notifier's name in outbox rows; default "webhook".
	Name string
	// URL receives a POST per delivery, e.g. OpenClaw's
	// http://127.0.0.1:18789/hooks/wake.
	URL string
	// Token, when set, is sent as "Authorization: Bearer <token>".
	Token secret.String
	// Secret, when set, signs each body: X-Acu-Signature: sha256=<hex>.
	Secret secret.String
	// BodyTemplate, when set, is a text/template over WebhookData producing
	// the JSON body; it must produce valid JSON. Default:
	// {"text":<message>,"mode":"now","runId":<run id>,"event":<event>}.
	BodyTemplate string
	// Timeout bounds each attempt; default 10s.
	Timeout time.Duration
	// Client sends the requests; default: no proxy, no redirects followed.
	Client *http.Client
	// Clock stamps X-Acu-Timestamp; default time.Now.
	Clock  func() time.Time
	Logger *slog.Logger
}

// WebhookData is what a body template sees. Besides the fields, templates
// have two functions: {{json .Message}} writes any value as JSON (a string
// with its quotes), {{jsonEscape .Message}} writes a string's JSON-escaped
// contents without quotes.
type WebhookData struct {
	Message        string
	RunID          string
	Event          string
	Key            string // the notification's key ("<run id>:resolved")
	IdempotencyKey string // the outbox row's key, also sent as Idempotency-Key
	Notifier       string
	Attempt        int
}

// Webhook POSTs JSON to a URL per delivery. Success is a 2xx status.
type Webhook struct {
	name    string
	url     string
	safeURL string // without userinfo or query, for errors and logs
	token   secret.String
	secret  secret.String
	tmpl    *template.Template
	timeout time.Duration
	client  *http.Client
	clock   func() time.Time
	log     *slog.Logger
}

// NewWebhook validates opts (URL, body template) and returns the notifier.
func NewWebhook(opts WebhookOptions) (*Webhook, error) {
	w := &Webhook{
		name:    cmp.Or(opts.Name, "webhook"),
		url:     opts.URL,
		token:   opts.Token,
		secret:  opts.Secret,
		timeout: opts.Timeout,
		client:  opts.Client,
		clock:   opts.Clock,
		log:     opts.Logger,
	}
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("webhook notifier %q: URL %q is not an absolute http or https URL: give one like http://127.0.0.1:18789/hooks/wake", w.name, redactURL(opts.URL))
	}
	w.safeURL = redactURL(opts.URL)
	if w.timeout <= 0 {
		w.timeout = DefaultWebhookTimeout
	}
	if w.clock == nil {
		w.clock = time.Now
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	if w.client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.Proxy = nil // no package reads the environment, HTTP_PROXY included
		w.client = &http.Client{
			Transport:     tr,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	if opts.BodyTemplate != "" {
		t, err := template.New(w.name).Option("missingkey=error").Funcs(template.FuncMap{
			"json":       jsonValue,
			"jsonEscape": jsonEscape,
		}).Parse(opts.BodyTemplate)
		if err != nil {
			return nil, fmt.Errorf("webhook notifier %q: body template: %w", w.name, err)
		}
		w.tmpl = t
		// A template that forgets to escape breaks on the first message with
		// a quote in it; find out now, not at the first wake.
		probe := WebhookData{Message: "probe \"quoted\"\n\\ → {x}", RunID: "run_probe", Event: "resolved",
			Key: "run_probe:resolved", IdempotencyKey: "run_probe:resolved:" + w.name, Notifier: w.name, Attempt: 1}
		if _, err := w.body(probe); err != nil {
			return nil, fmt.Errorf("webhook notifier %q: body template: %w (use {{json .Message}} for string values)", w.name, err)
		}
	}
	if u.Scheme == "http" && w.token.Set() && !isLoopback(u.Hostname()) {
		w.log.Warn("webhook notifier sends its bearer token over plain http to a non-loopback host",
			"notifier", w.name, "url", w.safeURL)
	}
	return w, nil
}

// Name implements Notifier.
func (w *Webhook) Name() string { return w.name }

// URL returns the target URL without credentials or query, for display.
func (w *Webhook) URL() string { return w.safeURL }

type wakeBody struct {
	Text  string `json:"text"`
	Mode  string `json:"mode"`
	RunID string `json:"runId,omitempty"`
	Event string `json:"event,omitempty"`
}

func (w *Webhook) body(d WebhookData) ([]byte, error) {
	var buf bytes.Buffer
	if w.tmpl == nil {
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(wakeBody{Text: d.Message, Mode: "now", RunID: d.RunID, Event: d.Event}); err != nil {
			return nil, err
		}
		return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
	}
	if err := w.tmpl.Execute(&buf, d); err != nil {
		return nil, err
	}
	if !json.Valid(buf.Bytes()) {
		return nil, fmt.Errorf("template output is not valid JSON: %.200q", buf.String())
	}
	return buf.Bytes(), nil
}

// Sign returns the X-Acu-Signature value for body under key:
// "sha256=" + hex(HMAC-SHA256(key, body)). Receivers compute the same and
// compare in constant time.
func Sign(key, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Notify implements Notifier: one POST, at most the configured timeout.
func (w *Webhook) Notify(ctx context.Context, d Delivery) error {
	body, err := w.body(WebhookData{
		Message: d.Message, RunID: d.RunID, Event: d.Event, Key: d.BaseKey,
		IdempotencyKey: d.Key, Notifier: d.Notifier, Attempt: d.Attempt,
	})
	if err != nil {
		return fmt.Errorf("build body for %s: %w", w.safeURL, err)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, w.timeout, errAttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("POST %s: %w", w.safeURL, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "acu-notify")
	req.Header.Set(HeaderIdempotency, d.Key)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(w.clock().Unix(), 10))
	if w.secret.Set() {
		req.Header.Set(HeaderSignature, Sign([]byte(w.secret.Reveal()), body))
	}
	if w.token.Set() {
		req.Header.Set("Authorization", "Bearer "+w.token.Reveal())
	}

	start := time.Now()
	resp, err := w.client.Do(req)
	if err != nil {
		// url.Error repeats the full URL, which may carry a token in its
		// query: report our redacted form and the cause only.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if context.Cause(ctx) == errAttemptTimeout {
			return fmt.Errorf("POST %s: no response within %s", w.safeURL, w.timeout)
		}
		return fmt.Errorf("POST %s: %w", w.safeURL, err)
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
	w.log.Debug("webhook notifier attempt", "notifier", w.name, "url", w.safeURL, "run_id", d.RunID,
		"key", d.Key, "attempt", d.Attempt, "status", resp.StatusCode, "took", time.Since(start))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	msg := fmt.Sprintf("POST %s: status %s", w.safeURL, resp.Status)
	if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
		msg += fmt.Sprintf(": redirected to %s; configure the final URL", redactURL(loc))
	}
	if s := strings.TrimSpace(strings.ToValidUTF8(string(snippet), "\uFFFD")); s != "" {
		msg += ": " + s
	}
	err = errors.New(msg)
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		if after, ok := parseRetryAfter(resp.Header.Get("Retry-After"), w.clock()); ok {
			return &RetryAfterError{After: after, Err: err}
		}
	}
	return err
}

func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

func jsonValue(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

func jsonEscape(s string) (string, error) {
	q, err := jsonValue(s)
	if err != nil {
		return "", err
	}
	return q[1 : len(q)-1], nil
}

// redactURL drops userinfo, query and fragment, which may carry tokens.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	u.RawQuery = ""
	u.ForceQuery = false
	u.Fragment = ""
	u.RawFragment = ""
	return u.String()
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
