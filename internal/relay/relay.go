package relay

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/guard"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/secret"
	"github.com/acu-dev/acu/internal/store"
)

// Buffer sizes of the seed.
const (
	FeedCapacity  = 100
	SenseCapacity = 30
	AgentCapacity = 50
	// MaxSenseBody is the largest accepted POST /sense body (the seed's 2 MB).
	MaxSenseBody = 2 << 20
	// MaxFeedBody is the largest accepted POST /feed body.
	MaxFeedBody = 1 << 20
)

// DefaultPort is the seed's relay port.
const DefaultPort = 18791

// Model is the one call the analysis loop needs; *llm.Client satisfies it.
type Model interface {
	Chat(ctx context.Context, req llm.Request) (llm.Response, error)
}

// History keeps analysis results across restarts; *store.DB satisfies it.
type History interface {
	AppendRelayResult(ctx context.Context, r store.RelayResult) error
	RelayResults(ctx context.Context, limit int) ([]store.RelayResult, error)
}

// AgentConfig is the analysis loop's runtime configuration (the seed's
// AGENT_* variables), readable and changeable at /agent/config.
type AgentConfig struct {
	Enabled        bool     `json:"enabled"`
	IntervalMs     int64    `json:"intervalMs"`
	Model          string   `json:"model"`
	MaxAgeMs       int64    `json:"maxAgeMs"`
	MaxTokens      int      `json:"maxTokens"`
	Temperature    float64  `json:"temperature"`
	PushToFeed     bool     `json:"pushToFeed"`
	LogVerbose     bool     `json:"logVerbose"`
	DebounceMs     int64    `json:"debounceMs"`
	FallbackModels []string `json:"fallbackModels"`
}

// DefaultAgentConfig returns the seed's defaults.
func DefaultAgentConfig() AgentConfig {
	return AgentConfig{Enabled: true, IntervalMs: 30000, Model: "google/gemini-2.5-flash-lite", MaxAgeMs: 120000,
		MaxTokens: 200, Temperature: 0.3, PushToFeed: true, FallbackModels: []string{}}
}

// Options configure a Relay.
type Options struct {
	// Agent is the analysis loop's initial configuration; the zero value
	// means DefaultAgentConfig.
	Agent AgentConfig
	// Model answers the analysis calls (Request.Model names the model of
	// each attempt: Agent.Model, then each fallback). Nil: the loop never
	// calls a model (no API key), and says so in /health.
	Model Model
	// CallTimeout bounds one model call, fallbacks each getting their own;
	// default 30 s.
	CallTimeout time.Duration
	// History, when set, keeps analysis results across restarts.
	History History
	// Guard holds the Host and Origin checks (ListenHost: the configured
	// host). A page on another site can never post to the relay.
	Guard guard.Guard
	// Token is required as "Authorization: Bearer" by every route but the
	// HUD page's files and its login; the HUD page gets a session of its
	// own from a one-time link (LoginURL, POST /auth/link). Required: the
	// relay serves the screen's text (cmd/acu generates one by default).
	Token secret.String
	// Open lets requests without the token or a session reach the seed's
	// routes (/feed, /sense, /agent/*, /health), for the origin's clients,
	// which send none (ACU_RELAY_AUTH=none). POST /auth/link still needs
	// the token. Serve then refuses a listener that is not on loopback.
	Open bool
	// Logger; nil discards.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Heartbeat is the SSE keep-alive interval; default 15 s.
	Heartbeat time.Duration
}

// FeedItem is one /feed message.
type FeedItem struct {
	ID       int64  `json:"id"`
	Text     string `json:"text"`
	Priority string `json:"priority"`
	TS       int64  `json:"ts"`
	Source   string `json:"source,omitempty"`
}

// SenseEvent is one /sense event: the fields the loop reads, and the event
// as served (every field the client sent, plus id and receivedAt).
type SenseEvent struct {
	ID         int64
	Type       string
	TS         int64
	OCR        string
	App        string
	SSIM       *float64
	ReceivedAt int64
	raw        json.RawMessage
	meta       json.RawMessage // raw without image data (?meta_only=true); nil when raw has none
}

// MarshalJSON returns the event as the client sent it, with id and
// receivedAt.
func (e SenseEvent) MarshalJSON() ([]byte, error) { return e.raw, nil }

// EntryContext summarises the window an entry was made from.
type EntryContext struct {
	CurrentApp  string   `json:"currentApp"`
	AppHistory  []string `json:"appHistory"`
	AudioCount  int      `json:"audioCount"`
	ScreenCount int      `json:"screenCount"`
}

// Entry is one analysis result (/agent/last, /agent/history).
type Entry struct {
	ID        int64        `json:"id"`
	TS        int64        `json:"ts"`
	HUD       string       `json:"hud"`
	Digest    string       `json:"digest"`
	Context   EntryContext `json:"context"`
	Pushed    bool         `json:"pushed"`
	Model     string       `json:"model"`
	LatencyMs int64        `json:"latencyMs"`
	TokensIn  int          `json:"tokensIn"`
	TokensOut int          `json:"tokensOut"`
	ParsedOK  bool         `json:"parsedOk"`
}

// Digest is the latest rich description for the assistant (/agent/digest).
type Digest struct {
	ID         int64       `json:"id"`
	TS         int64       `json:"ts"`
	Digest     string      `json:"digest"`
	CurrentApp string      `json:"currentApp"`
	AppHistory []AppSwitch `json:"appHistory"`
	LatencyMs  int64       `json:"latencyMs"`
}

type stats struct {
	totalCalls    int64
	tokensIn      int64
	tokensOut     int64
	cost          float64
	unpriced      int64 // calls whose cost was unknown
	lastAnalysis  int64
	idleSkips     int64
	emptySkips    int64
	errors        int64
	lastError     string
	lastErrorAt   int64
	parseFailures int64
	fallbackCalls int64
	busySkips     int64
	noModelSkips  int64
	ticks         int64
}

// Relay is the feed and sense relay with its analysis loop and HUD page.
type Relay struct {
	opts     Options
	log      *slog.Logger
	now      func() time.Time
	epoch    string
	h        http.Handler
	sessions *guard.Sessions

	mu           sync.Mutex
	feed         ring[FeedItem]
	feedNext     int64
	feedVersion  uint64
	feedWake     chan struct{} // closed and replaced when the feed grows
	sense        ring[SenseEvent]
	senseNext    int64
	senseVersion uint64
	cfg          AgentConfig
	agent        ring[Entry]
	agentNext    int64
	lastPushed   string
	tickFeedV    uint64
	tickSenseV   uint64
	digest       *Digest
	st           stats
	lastInput    time.Time

	input   chan struct{} // new input, for debounced ticks
	changed chan struct{} // configuration changed
	tickMu  sync.Mutex    // one tick at a time
}

// New checks opts and returns a Relay; with History set it restores the
// last analysis results.
func New(ctx context.Context, opts Options) (*Relay, error) {
	if opts.Agent.Model == "" && opts.Agent.IntervalMs == 0 {
		opts.Agent = DefaultAgentConfig()
	}
	if err := validAgent(opts.Agent); err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 30 * time.Second
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 15 * time.Second
	}
	if !opts.Token.Set() {
		return nil, errors.New("relay: a token is required: set ACU_RELAY_TOKEN, or let acu generate one")
	}
	r := &Relay{opts: opts, log: opts.Logger, now: opts.Now, cfg: opts.Agent, sessions: guard.NewSessions(opts.Now),
		feed: newRing[FeedItem](FeedCapacity), sense: newRing[SenseEvent](SenseCapacity), agent: newRing[Entry](AgentCapacity),
		feedNext: 1, senseNext: 1, agentNext: 1, feedWake: make(chan struct{}),
		input: make(chan struct{}, 1), changed: make(chan struct{}, 1)}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.cfg.FallbackModels == nil {
		r.cfg.FallbackModels = []string{}
	}
	var b [3]byte
	_, _ = rand.Read(b[:])
	r.epoch = strconv.FormatInt(r.now().UnixMilli(), 36) + "-" + hex.EncodeToString(b[:])
	if opts.History != nil {
		if err := r.restore(ctx); err != nil {
			return nil, err
		}
	}
	r.h = r.routes()
	return r, nil
}

// restore loads the newest results from History.
func (r *Relay) restore(ctx context.Context) error {
	rs, err := r.opts.History.RelayResults(ctx, AgentCapacity)
	if err != nil {
		return fmt.Errorf("relay: restore analysis history: %w", err)
	}
	for i := len(rs) - 1; i >= 0; i-- { // oldest first
		var e Entry
		if err := json.Unmarshal(rs[i].Entry, &e); err != nil {
			r.log.Warn("skipping unreadable stored analysis result", "id", rs[i].ID, "err", err)
			continue
		}
		e.ID = rs[i].ID
		r.agent.push(e.ID, e)
		r.agentNext = e.ID + 1
		if len(rs[i].Digest) > 0 {
			var d Digest
			if json.Unmarshal(rs[i].Digest, &d) == nil {
				r.digest = &d
			}
		}
		if e.Pushed {
			r.lastPushed = e.HUD
		}
	}
	return nil
}

// Epoch changes at every start so pollers notice a restart.
func (r *Relay) Epoch() string { return r.epoch }

// Handler returns the relay's HTTP handler, guards included.
func (r *Relay) Handler() http.Handler { return r.h }

// Serve serves the relay's HTTP API on l until ctx ends.
func (r *Relay) Serve(ctx context.Context, l net.Listener) error {
	if r.opts.Open && !loopbackListener(l) {
		return fmt.Errorf("relay: refusing to serve without a token on %s: a relay without a token (ACU_RELAY_AUTH=none) listens on loopback only", l.Addr())
	}
	srv := &http.Server{Handler: r.h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return ctx },
		ErrorLog:    slog.NewLogLogger(r.log.Handler(), slog.LevelDebug)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	err := srv.Serve(l)
	<-done
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("relay: serve on %s: %w", l.Addr(), err)
}

// loopbackListener reports whether l accepts connections from this
// machine only.
func loopbackListener(l net.Listener) bool {
	a, ok := l.Addr().(*net.TCPAddr)
	return ok && a.IP.IsLoopback()
}

// AddFeed appends a feed message (what POST /feed does) and returns it.
func (r *Relay) AddFeed(text, priority, source string) FeedItem {
	if priority == "" {
		priority = "normal"
	}
	r.mu.Lock()
	it := FeedItem{ID: r.feedNext, Text: text, Priority: priority, TS: r.now().UnixMilli(), Source: source}
	r.pushFeedLocked(it)
	if source != "agent" {
		r.lastInput = r.now()
	}
	r.mu.Unlock()
	if source != "agent" {
		r.poke()
	}
	return it
}

func (r *Relay) pushFeedLocked(it FeedItem) {
	r.feed.push(it.ID, it)
	r.feedNext = it.ID + 1
	r.feedVersion++
	close(r.feedWake)
	r.feedWake = make(chan struct{})
}

// poke tells the loop that input arrived.
func (r *Relay) poke() {
	select {
	case r.input <- struct{}{}:
	default:
	}
}

// senseIn is what POST /sense reads from the client's event.
type senseIn struct {
	Type string          `json:"type"`
	TS   json.Number     `json:"ts"`
	OCR  *string         `json:"ocr"`
	Meta json.RawMessage `json:"meta"`
}

type senseMeta struct {
	App  string   `json:"app"`
	SSIM *float64 `json:"ssim"`
}

// errBadEvent says what is wrong with a posted sense event.
type errBadEvent struct{ field, msg string }

func (e *errBadEvent) Error() string { return e.msg }

// AddSense parses one posted sense event and appends it.
func (r *Relay) AddSense(body []byte) (SenseEvent, error) {
	var in senseIn
	if err := json.Unmarshal(body, &in); err != nil {
		return SenseEvent{}, &errBadEvent{"", "body must be one JSON object: " + jsonProblem(err)}
	}
	if in.Type == "" {
		return SenseEvent{}, &errBadEvent{"type", "missing type: want \"text\", \"visual\" or \"context\""}
	}
	ts, err := in.TS.Float64()
	if in.TS == "" || err != nil || ts <= 0 {
		return SenseEvent{}, &errBadEvent{"ts", "missing ts: want the event time in unix milliseconds"}
	}
	ev := SenseEvent{Type: in.Type, TS: int64(ts)}
	if in.OCR != nil {
		ev.OCR = *in.OCR
	}
	if len(in.Meta) > 0 && string(in.Meta) != "null" {
		var m senseMeta
		if err := json.Unmarshal(in.Meta, &m); err != nil {
			return SenseEvent{}, &errBadEvent{"meta", "meta must be an object with app (string) and ssim (number): " + jsonProblem(err)}
		}
		ev.App, ev.SSIM = m.App, m.SSIM
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return SenseEvent{}, &errBadEvent{"", "body must be a JSON object"}
	}
	stripped := stripImages(trimmed) // outside the lock: events carry images of hundreds of KB
	r.mu.Lock()
	ev.ID = r.senseNext
	ev.ReceivedAt = r.now().UnixMilli()
	ev.raw = senseJSON(trimmed, ev.ID, ev.ReceivedAt)
	if stripped != nil {
		ev.meta = senseJSON(stripped, ev.ID, ev.ReceivedAt)
	}
	r.sense.push(ev.ID, ev)
	r.senseNext++
	r.senseVersion++
	r.lastInput = r.now()
	r.mu.Unlock()
	r.poke()
	return ev, nil
}

// senseJSON builds {"id":N, ...client fields..., "receivedAt":M} from the
// client's object; a client's own id or receivedAt is replaced.
func senseJSON(obj []byte, id, receivedAt int64) json.RawMessage {
	if bytes.Contains(obj, []byte(`"id"`)) || bytes.Contains(obj, []byte(`"receivedAt"`)) {
		var m map[string]json.RawMessage
		if json.Unmarshal(obj, &m) == nil {
			delete(m, "id")
			delete(m, "receivedAt")
			obj, _ = json.Marshal(m)
		}
	}
	inner := bytes.TrimSpace(obj[1 : len(obj)-1])
	b := make([]byte, 0, len(obj)+48)
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, id, 10)
	if len(inner) > 0 {
		b = append(b, ',')
		b = append(b, inner...)
	}
	b = append(b, `,"receivedAt":`...)
	b = strconv.AppendInt(b, receivedAt, 10)
	b = append(b, '}')
	return b
}

func jsonProblem(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("invalid JSON at byte %d", se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s must be %s, not %s", te.Field, te.Type, te.Value)
	}
	if errors.Is(err, io.EOF) {
		return "empty body"
	}
	return err.Error()
}

// Config returns the analysis loop's current configuration.
func (r *Relay) Config() AgentConfig {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cfg
	c.FallbackModels = append([]string{}, c.FallbackModels...)
	return c
}

// SetConfig replaces the analysis loop's configuration after validating it.
func (r *Relay) SetConfig(c AgentConfig) error {
	if err := validAgent(c); err != nil {
		return err
	}
	if c.FallbackModels == nil {
		c.FallbackModels = []string{}
	}
	r.mu.Lock()
	r.cfg = c
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
	return nil
}

// ConfigError names the invalid field of an AgentConfig.
type ConfigError struct {
	Field string
	Msg   string
}

func (e *ConfigError) Error() string { return e.Field + ": " + e.Msg }

func validAgent(c AgentConfig) error {
	switch {
	case c.IntervalMs < 100 || c.IntervalMs > 24*3600*1000:
		return &ConfigError{"intervalMs", "must be 100..86400000 milliseconds (AGENT_INTERVAL_MS)"}
	case strings.TrimSpace(c.Model) == "" || len(c.Model) > 200:
		return &ConfigError{"model", "must be a model name such as google/gemini-2.5-flash-lite (AGENT_MODEL)"}
	case c.MaxAgeMs < 1000 || c.MaxAgeMs > 24*3600*1000:
		return &ConfigError{"maxAgeMs", "must be 1000..86400000 milliseconds (AGENT_MAX_AGE_MS)"}
	case c.MaxTokens < 1 || c.MaxTokens > 32768:
		return &ConfigError{"maxTokens", "must be 1..32768 (AGENT_MAX_TOKENS)"}
	case c.Temperature < 0 || c.Temperature > 2:
		return &ConfigError{"temperature", "must be 0..2 (AGENT_TEMPERATURE)"}
	case c.DebounceMs < 0 || c.DebounceMs > 3600*1000:
		return &ConfigError{"debounceMs", "must be 0 (off) ..3600000 milliseconds (AGENT_DEBOUNCE_MS)"}
	case len(c.FallbackModels) > 8:
		return &ConfigError{"fallbackModels", "at most 8 fallback models (AGENT_FALLBACK_MODELS)"}
	}
	for _, m := range c.FallbackModels {
		if strings.TrimSpace(m) == "" || len(m) > 200 {
			return &ConfigError{"fallbackModels", "each fallback must be a model name"}
		}
	}
	return nil
}

// Feed returns the feed messages after id, oldest first.
func (r *Relay) Feed(after int64) []FeedItem {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.feed.after(nil, after)
}

// Sense returns the sense events after id, oldest first.
func (r *Relay) Sense(after int64) []SenseEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sense.after(nil, after)
}

// Context returns the context window the next tick would see.
func (r *Relay) Context() ContextWindow {
	r.mu.Lock()
	feed := r.feed.after(nil, 0)
	sense := r.sense.after(nil, 0)
	maxAge := r.cfg.MaxAgeMs
	r.mu.Unlock()
	return BuildContextWindow(feed, sense, r.now().UnixMilli(), maxAge)
}

// Last returns the newest analysis result.
func (r *Relay) Last() (Entry, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.agent.last()
}

// LatestDigest returns the newest digest.
func (r *Relay) LatestDigest() (Digest, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.digest == nil {
		return Digest{}, false
	}
	return *r.digest, true
}
