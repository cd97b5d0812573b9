package relay

import (
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/guard"
)

//go:embed web
var webFS embed.FS

// loginHint tells a browser user how to get a new HUD link.
const loginHint = "run `acu relay open` for a new one-time link"

// pageCSP is the HUD page's policy: its own scripts and styles, nothing
// inline, requests to the relay only.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// routes lists every route of the relay. The HUD page and its files are
// static and open; everything else needs the token, or the session a HUD
// page got for the code of a one-time link (guard.Sessions).
func (r *Relay) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /feed", r.handlePostFeed)
	mux.HandleFunc("GET /feed", r.handleGetFeed)
	mux.HandleFunc("GET /feed/stream", r.handleFeedStream)
	mux.HandleFunc("POST /sense", r.handlePostSense)
	mux.HandleFunc("GET /sense", r.handleGetSense)
	mux.HandleFunc("GET /agent/digest", r.handleDigest)
	mux.HandleFunc("GET /agent/last", r.handleLast)
	mux.HandleFunc("GET /agent/history", r.handleHistory)
	mux.HandleFunc("GET /agent/context", r.handleContext)
	mux.HandleFunc("GET /agent/config", r.handleGetConfig)
	mux.HandleFunc("POST /agent/config", r.handlePostConfig)
	mux.HandleFunc("GET /health", r.handleHealth)
	mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		guard.WriteError(w, http.StatusNotFound, "not_found", "", fmt.Sprintf("no route %s %s: see docs/relay.md for the relay's endpoints", req.Method, req.URL.Path))
	})
	outer := http.NewServeMux()
	sub, _ := fs.Sub(webFS, "web")
	files := http.FileServerFS(sub)
	outer.HandleFunc("GET /{$}", r.handleHUD)
	outer.HandleFunc("GET /hud", r.handleHUD)
	outer.Handle("GET /hud.js", files)
	outer.Handle("GET /hud.css", files)
	outer.HandleFunc(guard.ScriptPattern, guard.Script)
	outer.Handle(guard.ExchangePattern, r.sessions.Exchange(loginHint))
	outer.Handle("POST /auth/link", r.tokenOnly(http.HandlerFunc(r.handleLoginLink)))
	outer.Handle("/", r.auth(mux))
	return r.opts.Guard.Wrap(outer)
}

// bearer reports whether the request carries the token.
func (r *Relay) bearer(req *http.Request) bool {
	got, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(r.opts.Token.Reveal())) == 1
}

// auth requires the token (Authorization: Bearer) or a HUD page's session
// (X-Acu-Session), unless the relay is open (ACU_RELAY_AUTH=none). Cookies
// count for nothing.
func (r *Relay) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.opts.Open || r.bearer(req) || r.sessions.Valid(req) {
			next.ServeHTTP(w, req)
			return
		}
		guard.Unauthorized(w, "acu-relay", "missing or wrong token: send Authorization: Bearer <token> (ACU_RELAY_TOKEN, or the relay-token file in acu's state directory); in a browser, "+loginHint)
	})
}

// tokenOnly requires the token itself: a browser session cannot mint links.
func (r *Relay) tokenOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.bearer(req) {
			next.ServeHTTP(w, req)
			return
		}
		guard.Unauthorized(w, "acu-relay", "missing or wrong token: send Authorization: Bearer <token> (ACU_RELAY_TOKEN, or the relay-token file in acu's state directory)")
	})
}

// LoginLink is POST /auth/link's answer: a one-time URL of the HUD page.
type LoginLink struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires_at"`
}

// LoginURL returns a one-time URL (valid guard.LoginCodeTTL) that opens the
// HUD page in a browser; base is the relay's URL, such as
// "http://127.0.0.1:18791". The page swaps the code in its fragment for a
// session of its own and never sees the token.
func (r *Relay) LoginURL(base string) LoginLink {
	u, exp := r.sessions.LoginURL(base, "")
	return LoginLink{URL: u, ExpiresAt: exp.UTC()}
}

func (r *Relay) handleLoginLink(w http.ResponseWriter, req *http.Request) {
	scheme := "http"
	if req.TLS != nil {
		scheme = "https"
	}
	writeJSON(w, http.StatusOK, r.LoginURL(scheme+"://"+req.Host))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		guard.WriteError(w, http.StatusInternalServerError, "internal", "", "encode the answer")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// readBody reads at most limit bytes; ok is false when it answered an error.
func readBody(w http.ResponseWriter, req *http.Request, limit int64, what string) ([]byte, bool) {
	if req.ContentLength > limit {
		guard.WriteError(w, http.StatusRequestEntityTooLarge, "too_large", "", fmt.Sprintf("%s body is larger than %d bytes", what, limit))
		return nil, false
	}
	// A body trickled in slowly must not hold a connection for ever.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(30 * time.Second))
	b, err := io.ReadAll(http.MaxBytesReader(w, req.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			guard.WriteError(w, http.StatusRequestEntityTooLarge, "too_large", "", fmt.Sprintf("%s body is larger than %d bytes", what, limit))
			return nil, false
		}
		guard.WriteError(w, http.StatusBadRequest, "invalid", "", "read the request body: "+err.Error())
		return nil, false
	}
	return b, true
}

func afterParam(w http.ResponseWriter, req *http.Request) (int64, bool) {
	v := req.URL.Query().Get("after")
	if v == "" {
		return 0, true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		guard.WriteError(w, http.StatusBadRequest, "invalid", "after", fmt.Sprintf("after must be an id (a whole number from 0), got %q", v))
		return 0, false
	}
	return n, true
}

type feedIn struct {
	Text     *string `json:"text"`
	Priority string  `json:"priority"`
}

func (r *Relay) handlePostFeed(w http.ResponseWriter, req *http.Request) {
	b, ok := readBody(w, req, MaxFeedBody, "feed")
	if !ok {
		return
	}
	var in feedIn
	if err := json.Unmarshal(b, &in); err != nil {
		guard.WriteError(w, http.StatusBadRequest, "invalid", "", "body must be a JSON object {text, priority}: "+jsonProblem(err))
		return
	}
	if in.Text == nil || strings.TrimSpace(*in.Text) == "" {
		guard.WriteError(w, http.StatusBadRequest, "invalid", "text", "text is required: the message to show")
		return
	}
	if len(in.Priority) > 32 {
		guard.WriteError(w, http.StatusBadRequest, "invalid", "priority", "priority must be a short word: low, normal, high or urgent")
		return
	}
	it := r.AddFeed(*in.Text, in.Priority, "")
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "id": it.ID})
}

// feedList is GET /feed's answer: items, and the seed clients' messages.
type feedList struct {
	Items    []FeedItem `json:"items"`
	Messages []FeedItem `json:"messages"`
	Epoch    string     `json:"epoch"`
}

// overlay drops [PERIODIC] transcript items, which stay in the buffer for
// the analysis loop, unless all is set.
func overlay(items []FeedItem, all bool) []FeedItem {
	if all {
		return items
	}
	out := items[:0]
	for _, it := range items {
		if !strings.HasPrefix(it.Text, "[PERIODIC]") {
			out = append(out, it)
		}
	}
	return out
}

func (r *Relay) handleGetFeed(w http.ResponseWriter, req *http.Request) {
	after, ok := afterParam(w, req)
	if !ok {
		return
	}
	items := overlay(r.Feed(after), req.URL.Query().Get("all") == "true")
	if items == nil {
		items = []FeedItem{}
	}
	writeJSON(w, http.StatusOK, feedList{Items: items, Messages: items, Epoch: r.epoch})
}

func (r *Relay) handlePostSense(w http.ResponseWriter, req *http.Request) {
	b, ok := readBody(w, req, MaxSenseBody, "sense")
	if !ok {
		return
	}
	ev, err := r.AddSense(b)
	if err != nil {
		var be *errBadEvent
		field := ""
		if errors.As(err, &be) {
			field = be.field
		}
		guard.WriteError(w, http.StatusBadRequest, "invalid", field, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "id": ev.ID})
}

type senseList struct {
	Items  []SenseEvent `json:"items"`
	Events []SenseEvent `json:"events"`
	Epoch  string       `json:"epoch"`
}

func (r *Relay) handleGetSense(w http.ResponseWriter, req *http.Request) {
	after, ok := afterParam(w, req)
	if !ok {
		return
	}
	evs := r.Sense(after)
	if evs == nil {
		evs = []SenseEvent{}
	}
	if metaOnly(req) {
		evs = metaView(evs)
	}
	writeJSON(w, http.StatusOK, senseList{Items: evs, Events: evs, Epoch: r.epoch})
}

func (r *Relay) handleDigest(w http.ResponseWriter, _ *http.Request) {
	var d *Digest
	if v, ok := r.LatestDigest(); ok {
		d = &v
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "digest": d})
}

func (r *Relay) handleLast(w http.ResponseWriter, _ *http.Request) {
	var e *Entry
	if v, ok := r.Last(); ok {
		e = &v
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "result": e})
}

func (r *Relay) handleHistory(w http.ResponseWriter, req *http.Request) {
	limit := 10
	if v := req.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			guard.WriteError(w, http.StatusBadRequest, "invalid", "limit", fmt.Sprintf("limit must be a whole number from 1 to %d, got %q", AgentCapacity, v))
			return
		}
		limit = min(n, AgentCapacity)
	}
	r.mu.Lock()
	res := r.agent.tail(make([]Entry, 0, limit), limit)
	r.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "results": res})
}

func (r *Relay) handleContext(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "context": r.Context()})
}

// publicConfig is the configuration as /agent/config shows it.
type publicConfig struct {
	AgentConfig
	MaxAge   int64 `json:"maxAge"` // the seed's name of maxAgeMs
	HasModel bool  `json:"hasModel"`
}

func (r *Relay) configBody() map[string]any {
	c := r.Config()
	return map[string]any{"ok": true, "config": publicConfig{AgentConfig: c, MaxAge: c.MaxAgeMs, HasModel: r.opts.Model != nil}}
}

func (r *Relay) handleGetConfig(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, r.configBody())
}

// configIn is a partial update; absent fields keep their value.
type configIn struct {
	Enabled          *bool     `json:"enabled"`
	IntervalMs       *int64    `json:"intervalMs"`
	MaxIntervalMs    *int64    `json:"maxIntervalMs"`
	Model            *string   `json:"model"`
	MaxAge           *int64    `json:"maxAge"`
	MaxAgeMs         *int64    `json:"maxAgeMs"`
	MaxTokens        *int      `json:"maxTokens"`
	Temperature      *float64  `json:"temperature"`
	PushToFeed       *bool     `json:"pushToFeed"`
	LogVerbose       *bool     `json:"logVerbose"`
	DebounceMs       *int64    `json:"debounceMs"`
	FallbackModels   *[]string `json:"fallbackModels"`
	OpenRouterAPIKey *string   `json:"openrouterApiKey"`
}

func (r *Relay) handlePostConfig(w http.ResponseWriter, req *http.Request) {
	b, ok := readBody(w, req, 16<<10, "config")
	if !ok {
		return
	}
	var in configIn
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		field := ""
		if _, f, ok := strings.Cut(err.Error(), "json: unknown field "); ok {
			field = strings.Trim(f, `"`)
			guard.WriteError(w, http.StatusBadRequest, "invalid", field, fmt.Sprintf("unknown field %q: accepted are enabled, intervalMs, model, maxAge, maxTokens, temperature, pushToFeed, logVerbose, debounceMs, fallbackModels", field))
			return
		}
		guard.WriteError(w, http.StatusBadRequest, "invalid", field, "body must be a JSON object of config fields: "+jsonProblem(err))
		return
	}
	if in.OpenRouterAPIKey != nil {
		guard.WriteError(w, http.StatusBadRequest, "invalid", "openrouterApiKey", "the API key is not set over HTTP: set OPENROUTER_API_KEY in the relay's environment and restart it")
		return
	}
	c := r.Config()
	set := func(dst *int64, v *int64) {
		if v != nil {
			*dst = *v
		}
	}
	if in.Enabled != nil {
		c.Enabled = *in.Enabled
	}
	set(&c.IntervalMs, in.IntervalMs)
	set(&c.IntervalMs, in.MaxIntervalMs)
	if in.Model != nil {
		c.Model = strings.TrimSpace(*in.Model)
	}
	set(&c.MaxAgeMs, in.MaxAge)
	set(&c.MaxAgeMs, in.MaxAgeMs)
	if in.MaxTokens != nil {
		c.MaxTokens = *in.MaxTokens
	}
	if in.Temperature != nil {
		c.Temperature = *in.Temperature
	}
	if in.PushToFeed != nil {
		c.PushToFeed = *in.PushToFeed
	}
	if in.LogVerbose != nil {
		c.LogVerbose = *in.LogVerbose
	}
	set(&c.DebounceMs, in.DebounceMs)
	if in.FallbackModels != nil {
		c.FallbackModels = *in.FallbackModels
	}
	if err := r.SetConfig(c); err != nil {
		var ce *ConfigError
		field := ""
		if errors.As(err, &ce) {
			field = ce.Field
			if field == "maxAgeMs" && in.MaxAge != nil {
				field = "maxAge"
			}
		}
		guard.WriteError(w, http.StatusBadRequest, "invalid", field, err.Error())
		return
	}
	r.log.Info("analysis configuration changed", "model", c.Model, "interval_ms", c.IntervalMs, "enabled", c.Enabled)
	writeJSON(w, http.StatusOK, r.configBody())
}

func (r *Relay) handleHealth(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, r.Health())
}

func (r *Relay) handleHUD(w http.ResponseWriter, req *http.Request) {
	b, err := webFS.ReadFile("web/index.html")
	if err != nil {
		guard.WriteError(w, http.StatusInternalServerError, "internal", "", "the HUD page is missing from this build")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", pageCSP)
	_, _ = w.Write(b)
}

// handleFeedStream pushes feed items as Server-Sent Events: an id on every
// event (Last-Event-ID or ?after= resumes), heartbeats, one "hello" event
// with the epoch first.
func (r *Relay) handleFeedStream(w http.ResponseWriter, req *http.Request) {
	after, ok := afterParam(w, req)
	if !ok {
		return
	}
	if v := req.Header.Get("Last-Event-ID"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			guard.WriteError(w, http.StatusBadRequest, "invalid", "Last-Event-ID", fmt.Sprintf("Last-Event-ID must be a feed id, got %q", v))
			return
		}
		after = n
	}
	if req.URL.Query().Get("after") == "" && req.Header.Get("Last-Event-ID") == "" && req.URL.Query().Get("replay") != "true" {
		// A fresh stream starts at the newest item (shown) unless asked to
		// replay everything.
		r.mu.Lock()
		if it, ok := r.feed.last(); ok {
			after = it.ID - 1
		}
		r.mu.Unlock()
	}
	all := req.URL.Query().Get("all") == "true"
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprintf(w, "retry: 1000\nevent: hello\ndata: {\"epoch\":%q}\n\n", r.epoch); err != nil {
		return
	}
	if rc.Flush() != nil {
		return
	}
	hb := time.NewTicker(r.opts.Heartbeat)
	defer hb.Stop()
	var buf []FeedItem
	for {
		r.mu.Lock()
		buf = r.feed.after(buf[:0], after)
		wake := r.feedWake
		r.mu.Unlock()
		if len(buf) > 0 {
			after = buf[len(buf)-1].ID
			_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
			for _, it := range overlay(buf, all) {
				b, _ := json.Marshal(it)
				if _, err := fmt.Fprintf(w, "id: %d\nevent: feed\ndata: %s\n\n", it.ID, b); err != nil {
					return
				}
			}
			if rc.Flush() != nil {
				return
			}
			continue
		}
		select {
		case <-req.Context().Done():
			return
		case <-hb.C:
			_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		case <-wake:
		}
	}
}
