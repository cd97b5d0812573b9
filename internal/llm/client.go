package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/secret"
	"github.com/cenkalti/backoff/v5"
)

// Options configure one Client: one role talking to one endpoint.
type Options struct {
	Provider Provider
	// BaseURL: for OpenAI-compatible servers up to and including /v1
	// (default https://api.openai.com/v1); for Anthropic default
	// https://api.anthropic.com; for Gemini default
	// https://generativelanguage.googleapis.com.
	BaseURL string
	Model   string        // default model; Request.Model overrides it
	APIKey  secret.String // empty: no auth header (local Ollama, vLLM)
	Timeout time.Duration // per attempt, including reading the reply; 0 means 60 s
	// MaxRetries is the number of attempts after the first; 0 means 2,
	// negative means none.
	MaxRetries    int
	RetryBase     time.Duration     // first backoff (jittered, x1.5 each retry); 0 means 500 ms
	RetryMaxDelay time.Duration     // longest backoff; 0 means 8 s
	RetryAfterCap time.Duration     // longest Retry-After honoured; 0 means 30 s
	Headers       map[string]string // extra headers, e.g. OpenRouter's HTTP-Referer and X-Title
	Prices        PriceTable        // merged over DefaultPrices
	// UsageAccounting asks an OpenAI-compatible endpoint for its own cost
	// of each call (OpenRouter's usage accounting, `"usage":{"include":true}`),
	// which then wins over the price table. It is on by itself for
	// openrouter.ai base URLs; set it for a proxy that forwards there.
	UsageAccounting bool
	Breaker         BreakerOptions
	HTTPClient      *http.Client // nil: a private client; its Timeout should be 0 (Timeout above applies)
	Logger          *slog.Logger // nil: discard
	Metrics         *Metrics     // nil: none
	Ledger          *Ledger      // nil: a private ledger
	Name            string       // the role, e.g. "judge"; labels logs and metrics
	// Service names the backend in errors, logs and metrics, e.g.
	// "openrouter", "ollama"; default the Provider.
	Service string
	// KeyEnv names where the key comes from, e.g. "OPENROUTER_API_KEY",
	// so a 401 says what to check.
	KeyEnv           string
	MaxResponseBytes int64            // 0 means 8 MiB
	Now              func() time.Time // nil: time.Now; the breaker's clock
}

// Client is a provider-neutral chat client for one role and endpoint. It is
// safe for concurrent use; calls run fully in parallel.
type Client struct {
	opts     Options
	wire     wire
	base     string
	key      string
	http     *http.Client
	log      *slog.Logger
	now      func() time.Time
	prices   priceIndex
	usage    bool // ask for the provider's cost (Options.UsageAccounting)
	local    bool // a loopback endpoint called without a key: a local model server, free
	breaker  *breaker
	ledger   *Ledger
	role     string
	service  string
	tries    uint
	maxBytes int64
}

// wire is one provider's wire format.
type wire struct {
	defaultBase string
	endpoint    func(base, model string) string
	auth        func(h http.Header, key string)
	headers     map[string]string // sent on every request
	encode      func(req *Request, model string) (body, error)
	decode      func(body []byte) (Response, error)
}

var wires = map[Provider]wire{
	OpenAI:    openAIWire,
	Anthropic: anthropicWire,
	Gemini:    geminiWire,
}

// New checks opts and returns a client.
func New(opts Options) (*Client, error) {
	w, ok := wires[opts.Provider]
	if !ok {
		return nil, fmt.Errorf("model client %q: unknown provider %q: use %q, %q or %q", opts.Name, opts.Provider, OpenAI, Anthropic, Gemini)
	}
	base := strings.TrimRight(strings.TrimSpace(opts.BaseURL), "/")
	if base == "" {
		base = w.defaultBase
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("model client %q: base URL %q: must be an absolute http or https URL", opts.Name, opts.BaseURL)
	}
	if opts.Timeout < 0 || opts.RetryBase < 0 || opts.RetryMaxDelay < 0 || opts.RetryAfterCap < 0 {
		return nil, fmt.Errorf("model client %q: timeouts and delays must not be negative", opts.Name)
	}
	c := &Client{
		opts:     opts,
		wire:     w,
		base:     base,
		key:      opts.APIKey.Reveal(),
		http:     opts.HTTPClient,
		log:      opts.Logger,
		now:      opts.Now,
		prices:   newPriceIndex(opts.Prices),
		breaker:  newBreaker(opts.Breaker),
		ledger:   opts.Ledger,
		role:     opts.Name,
		service:  opts.Service,
		maxBytes: opts.MaxResponseBytes,
	}
	c.usage = opts.Provider == OpenAI && (opts.UsageAccounting || isOpenRouter(u.Hostname()))
	c.local = c.key == "" && isLoopback(u.Hostname())
	if c.http == nil {
		c.http = &http.Client{Transport: defaultTransport}
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.ledger == nil {
		c.ledger = NewLedger()
	}
	if c.service == "" {
		c.service = string(opts.Provider)
	}
	if c.opts.Timeout == 0 {
		c.opts.Timeout = 60 * time.Second
	}
	switch {
	case opts.MaxRetries < 0:
		c.tries = 1
	case opts.MaxRetries == 0:
		c.tries = 3
	default:
		c.tries = uint(opts.MaxRetries) + 1
	}
	if c.opts.RetryBase == 0 {
		c.opts.RetryBase = 500 * time.Millisecond
	}
	if c.opts.RetryMaxDelay == 0 {
		c.opts.RetryMaxDelay = 8 * time.Second
	}
	if c.opts.RetryAfterCap == 0 {
		c.opts.RetryAfterCap = 30 * time.Second
	}
	if c.maxBytes <= 0 {
		c.maxBytes = 8 << 20
	}
	c.opts.Metrics.setBreaker(c.role, c.service, StateClosed)
	return c, nil
}

// defaultTransport is shared by clients built without an HTTPClient, so
// connections to one backend are reused across roles.
var defaultTransport = func() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 16
	return t
}()

// Log keys.
const (
	keyRole      = "role"
	keyProvider  = "provider"
	keyModel     = "model"
	keyAttempt   = "attempt"
	keyAttempts  = "attempts"
	keyDelay     = "delay"
	keyErr       = "err"
	keyLatency   = "latency_ms"
	keyTokensIn  = "tokens_in"
	keyTokensOut = "tokens_out"
	keyCost      = "cost_usd"
	keyCostFrom  = "cost_source"
	keyRunID     = "run_id"
	keyUntil     = "open_until"
)

// Model returns the client's default model.
func (c *Client) Model() string { return c.opts.Model }

// Health reports the circuit breaker's state.
func (c *Client) Health() Health { return c.breaker.health(c.now()) }

// Cost returns the cost in US dollars accounted to runID, or the total when
// runID is "". With a shared Ledger it spans every client using it.
func (c *Client) Cost(runID string) float64 { return c.ledger.Cost(runID) }

// Totals returns the usage and cost accounted so far (the Ledger's totals).
func (c *Client) Totals() Totals { return c.ledger.Totals() }

// Ledger returns the ledger the client accounts to.
func (c *Client) Ledger() *Ledger { return c.ledger }

// ErrAttemptTimeout is wrapped by the error of an attempt that got no
// complete reply within Options.Timeout.
var ErrAttemptTimeout = errors.New("model call attempt timed out")

// Chat sends one request, retrying as configured, and returns the reply.
// Errors wrap *APIError (status, provider message, whether retryable),
// ErrCircuitOpen, or the caller's context error.
func (c *Client) Chat(ctx context.Context, req Request) (Response, error) {
	model := req.Model
	if model == "" {
		model = c.opts.Model
	}
	if model == "" {
		return Response{}, fmt.Errorf("%s call to %s: no model: set the model in the client's options or the request", c.role, c.service)
	}
	if len(req.Messages) == 0 {
		return Response{}, fmt.Errorf("%s call to %s model %s: no messages: send at least one user message", c.role, c.service, model)
	}
	probe, ok := c.breaker.allow(c.now())
	if !ok {
		h := c.breaker.health(c.now())
		c.opts.Metrics.observeCall(c.role, c.service, model, outcomeOpen, 0, Usage{}, 0, 0)
		return Response{}, fmt.Errorf("%s call to %s model %s: %w (until %s; last error: %s)",
			c.role, c.service, model, ErrCircuitOpen, h.OpenUntil.UTC().Format(time.RFC3339), h.LastError)
	}
	if probe {
		c.opts.Metrics.setBreaker(c.role, c.service, StateHalfOpen)
	}
	req.usageAccounting = c.usage
	body, err := c.wire.encode(&req, model)
	if err != nil {
		c.breaker.release(probe)
		return Response{}, fmt.Errorf("%s call to %s model %s: encode request: %w", c.role, c.service, model, err)
	}
	return c.call(ctx, model, req.RunID, probe, c.wire.endpoint(c.base, model), body, nil, c.wire.decode)
}

// call sends body to endpoint with retries and accounts the outcome:
// breaker, ledger, metrics, logs.
func (c *Client) call(ctx context.Context, model, runID string, probe bool, endpoint string, body body, headers map[string]string,
	decode func([]byte) (Response, error)) (Response, error) {
	req := &Request{RunID: runID}

	bo := &retryBackOff{exp: backoff.ExponentialBackOff{
		InitialInterval:     c.opts.RetryBase,
		RandomizationFactor: 0.5,
		Multiplier:          1.5,
		MaxInterval:         c.opts.RetryMaxDelay,
	}}
	attempts := 0
	op := func() (Response, error) {
		attempts++
		resp, err := c.attempt(ctx, endpoint, body, headers, decode)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return resp, backoff.Permanent(err)
		}
		var ae *APIError
		if errors.As(err, &ae) {
			if !ae.Retryable {
				return resp, backoff.Permanent(err)
			}
			if ae.RetryAfter > 0 {
				if dl, ok := ctx.Deadline(); ok && time.Until(dl) < ae.RetryAfter {
					return resp, backoff.Permanent(err) // the wait would outlive the caller
				}
				bo.after = ae.RetryAfter
			}
		}
		if uint(attempts) < c.tries {
			c.log.DebugContext(ctx, "model call attempt failed, retrying", keyRole, c.role, keyProvider, c.service,
				keyModel, model, keyAttempt, attempts, keyErr, err.Error())
		}
		return resp, err
	}
	resp, err := backoff.Retry(ctx, op,
		backoff.WithBackOff(bo),
		backoff.WithMaxTries(c.tries),
		backoff.WithMaxElapsedTime(0))
	if err != nil {
		return Response{}, c.failed(ctx, req, model, attempts, probe, err)
	}
	resp.Attempts = attempts
	if resp.Model == "" {
		resp.Model = model
	}
	c.price(&resp, model)
	c.ledger.add(req.RunID, true, resp.Usage, resp.CostUSD, resp.CostKnown)
	c.opts.Metrics.observeCall(c.role, c.service, model, outcomeOK, attempts, resp.Usage, resp.CostUSD, resp.Latency)
	if !resp.CostKnown {
		c.opts.Metrics.observeUnpriced(c.role, c.service, model)
	}
	if c.breaker.success() {
		c.log.InfoContext(ctx, "model backend recovered, circuit breaker closed", keyRole, c.role, keyProvider, c.service)
		c.opts.Metrics.setBreaker(c.role, c.service, StateClosed)
	}
	c.log.DebugContext(ctx, "model call", keyRole, c.role, keyProvider, c.service, keyModel, resp.Model,
		keyAttempts, attempts, keyLatency, resp.Latency.Milliseconds(), keyTokensIn, resp.Usage.InputTokens,
		keyTokensOut, resp.Usage.OutputTokens, keyCost, resp.CostUSD, keyCostFrom, resp.CostSource, keyRunID, req.RunID)
	return resp, nil
}

// price sets resp's cost: the provider's own figure, else the price table's
// for the model that answered or the one asked for, else free for a local
// model server, else unknown.
func (c *Client) price(resp *Response, model string) {
	switch p, ok := c.prices.lookup(resp.Model); {
	case resp.ProviderCost != nil:
		resp.CostUSD, resp.CostSource = *resp.ProviderCost, CostProvider
	case ok:
		resp.CostUSD, resp.CostSource = p.Cost(resp.Usage), CostTable
	default:
		if p, ok := c.prices.lookup(model); ok {
			resp.CostUSD, resp.CostSource = p.Cost(resp.Usage), CostTable
		} else if c.local {
			resp.CostUSD, resp.CostSource = 0, CostLocal
		} else {
			resp.CostUSD, resp.CostSource = 0, CostUnknown
		}
	}
	resp.CostKnown = resp.CostSource != CostUnknown
}

// ErrUnpriced is wrapped by CheckPriced's error: the cost of the model's
// calls would be unknown.
var ErrUnpriced = errors.New("no price for the model and the endpoint reports no cost")

// CheckPriced reports whether the cost of model's calls (the client's
// default model when "") will be known: the endpoint reports its own cost
// (UsageAccounting), the price table has the model, or the endpoint is a
// local model server (a loopback URL called without a key), which is free.
// A cost limit cannot be kept without it; the error wraps ErrUnpriced.
func (c *Client) CheckPriced(model string) error {
	if model == "" {
		model = c.opts.Model
	}
	if _, ok := c.prices.lookup(model); ok || c.usage || c.local {
		return nil
	}
	return fmt.Errorf("%s model %q on %s: %w", c.role, model, c.service, ErrUnpriced)
}

// isOpenRouter reports whether host is OpenRouter's, whose chat completions
// report their own cost on request.
func isOpenRouter(host string) bool {
	host = strings.ToLower(host)
	return host == "openrouter.ai" || strings.HasSuffix(host, ".openrouter.ai")
}

// isLoopback reports whether host is a loopback name or address.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// failed accounts a failed call and wraps its error.
func (c *Client) failed(ctx context.Context, req *Request, model string, attempts int, probe bool, err error) error {
	tries := "1 attempt"
	if attempts != 1 {
		tries = fmt.Sprintf("%d attempts", attempts)
	}
	err = fmt.Errorf("%s call to %s model %s (%s): %w", c.role, c.service, model, tries, err)
	if errors.Is(ctx.Err(), context.Canceled) {
		// The caller gave up: nothing learned about the backend. (A caller's
		// deadline that expired while the backend was slow does count.)
		c.breaker.release(probe)
		c.opts.Metrics.observeCall(c.role, c.service, model, outcomeCanceled, attempts, Usage{}, 0, 0)
		return err
	}
	c.ledger.add(req.RunID, false, Usage{}, 0, true)
	c.opts.Metrics.observeCall(c.role, c.service, model, outcomeError, attempts, Usage{}, 0, 0)
	if !breakerCounts(err) {
		if c.breaker.success() {
			c.opts.Metrics.setBreaker(c.role, c.service, StateClosed)
		}
		return err
	}
	if c.breaker.failure(c.now(), err.Error()) {
		h := c.breaker.health(c.now())
		c.log.WarnContext(ctx, "model backend keeps failing, circuit breaker open", keyRole, c.role, keyProvider, c.service,
			keyUntil, h.OpenUntil, keyErr, err.Error())
		c.opts.Metrics.setBreaker(c.role, c.service, StateOpen)
	}
	return err
}

// retryBackOff is jittered exponential backoff whose next delay a 429's
// Retry-After can replace.
type retryBackOff struct {
	exp   backoff.ExponentialBackOff
	after time.Duration
}

func (b *retryBackOff) NextBackOff() time.Duration {
	if d := b.after; d > 0 {
		b.after = 0
		return d
	}
	return b.exp.NextBackOff()
}

func (b *retryBackOff) Reset() { b.exp.Reset(); b.after = 0 }

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// attempt makes one HTTP exchange under its own timeout.
func (c *Client) attempt(ctx context.Context, endpoint string, body body, headers map[string]string, decode func([]byte) (Response, error)) (Response, error) {
	actx, cancel := context.WithTimeoutCause(ctx, c.opts.Timeout, ErrAttemptTimeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(actx, http.MethodPost, endpoint, body.reader())
	if err != nil {
		return Response{}, fmt.Errorf("build request to %s: %w", c.service, err)
	}
	hreq.ContentLength = int64(body.Len())
	hreq.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(body.reader()), nil }
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	hreq.Header.Set("User-Agent", "acu")
	for k, v := range c.wire.headers {
		hreq.Header.Set(k, v)
	}
	if c.key != "" {
		c.wire.auth(hreq.Header, c.key)
	}
	for k, v := range c.opts.Headers {
		hreq.Header.Set(k, v)
	}
	for k, v := range headers {
		hreq.Header.Set(k, v)
	}
	start := time.Now()
	hresp, err := c.http.Do(hreq)
	if err != nil {
		return Response{}, c.transportError(actx, err)
	}
	defer hresp.Body.Close()
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= 1<<20 {
			bufPool.Put(buf)
		}
	}()
	n, err := buf.ReadFrom(io.LimitReader(hresp.Body, c.maxBytes+1))
	if err != nil {
		return Response{}, c.transportError(actx, err)
	}
	data := buf.Bytes()
	if hresp.StatusCode < 200 || hresp.StatusCode > 299 {
		return Response{}, c.statusError(hresp, data)
	}
	if n > c.maxBytes {
		return Response{}, &APIError{Status: hresp.StatusCode, Provider: c.service, Retryable: false,
			Message: fmt.Sprintf("reply larger than %d bytes", c.maxBytes), Hint: "raise MaxResponseBytes or lower max tokens"}
	}
	resp, err := decode(data)
	if err != nil {
		var ae *APIError
		if errors.As(err, &ae) {
			ae.Provider = c.service
			ae.Message = c.scrub(ae.Message)
			if ae.Status == 0 {
				ae.Status = hresp.StatusCode
			}
			return Response{}, ae
		}
		return Response{}, &APIError{Status: hresp.StatusCode, Provider: c.service, Retryable: true,
			Message: c.scrub("malformed reply: " + err.Error())}
	}
	resp.Latency = time.Since(start)
	return resp, nil
}

func (c *Client) transportError(actx context.Context, err error) error {
	msg := err.Error()
	if errors.Is(context.Cause(actx), ErrAttemptTimeout) {
		msg = fmt.Sprintf("no complete reply within the %s per-attempt timeout", c.opts.Timeout)
		err = fmt.Errorf("%w: %w", ErrAttemptTimeout, err)
	}
	return &APIError{Provider: c.service, Message: c.scrub(msg), Retryable: true, Err: err}
}

func (c *Client) statusError(hresp *http.Response, body []byte) error {
	code := hresp.StatusCode
	ae := &APIError{
		Status:    code,
		Provider:  c.service,
		Message:   c.scrub(providerMessage(body, code)),
		Retryable: retryableStatus(code),
		Hint:      hintFor(code, c.opts.KeyEnv),
	}
	if code == http.StatusUnauthorized || code == http.StatusForbidden ||
		(code == http.StatusBadRequest && strings.Contains(strings.ToLower(ae.Message), "api key")) {
		ae.auth = true
		ae.Hint = hintFor(http.StatusUnauthorized, c.opts.KeyEnv)
	}
	if d, ok := parseRetryAfter(hresp.Header.Get("Retry-After"), time.Now()); ok && ae.Retryable {
		ae.RetryAfter = min(d, c.opts.RetryAfterCap)
		if ae.RetryAfter == 0 {
			ae.RetryAfter = time.Millisecond
		}
	}
	return ae
}

// scrub removes the API key from text that came from outside (providers echo
// keys in "invalid key sk-..." messages).
func (c *Client) scrub(s string) string {
	if len(c.key) < 4 || !strings.Contains(s, c.key) {
		return s
	}
	return strings.ReplaceAll(s, c.key, "REDACTED")
}
