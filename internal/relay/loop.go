package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/store"
)

// TickOutcome says what one tick did.
type TickOutcome int

// Tick outcomes.
const (
	TickAnalyzed TickOutcome = iota + 1 // the model answered; an entry was stored
	TickIdle                            // nothing new since the last tick
	TickEmpty                           // nothing in the context window
	TickFailed                          // every model failed (counted in /health)
	TickBusy                            // another tick was running
	TickNoModel                         // no model configured (no API key)
	TickDisabled                        // AGENT_ENABLED=false
)

func (o TickOutcome) String() string {
	switch o {
	case TickAnalyzed:
		return "analyzed"
	case TickIdle:
		return "idle"
	case TickEmpty:
		return "empty"
	case TickFailed:
		return "failed"
	case TickBusy:
		return "busy"
	case TickNoModel:
		return "no_model"
	case TickDisabled:
		return "disabled"
	}
	return "unknown"
}

// Run runs the analysis loop until ctx ends: a tick every IntervalMs, or
// DebounceMs after new input when debouncing is on (still at least one tick
// per interval while input keeps coming). Ticks never overlap: the next
// one is scheduled after the previous one ends. A model error is logged and
// counted, never fatal.
func (r *Relay) Run(ctx context.Context) error {
	last := r.now()
	// ticked is when the last tick ran (zero before the first): input
	// that came before the loop started (a /sense posted while the daemon
	// was starting) still gets its debounced tick.
	var ticked time.Time
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		r.mu.Lock()
		cfg := r.cfg
		input := r.lastInput
		r.mu.Unlock()
		next := last.Add(time.Duration(cfg.IntervalMs) * time.Millisecond)
		if cfg.DebounceMs > 0 && input.After(ticked) {
			if d := input.Add(time.Duration(cfg.DebounceMs) * time.Millisecond); d.Before(next) {
				next = d
			}
		}
		timer.Reset(max(next.Sub(r.now()), 0))
		select {
		case <-ctx.Done():
			return nil
		case <-r.changed:
			continue
		case <-r.input:
			continue
		case <-timer.C:
		}
		if !cfg.Enabled {
			last, ticked = r.now(), r.now()
			continue
		}
		r.Tick(ctx)
		last, ticked = r.now(), r.now()
	}
}

// Tick runs one analysis step now: build the context window, skip when
// nothing is new or the window is empty, otherwise call the model (then
// each fallback), store the entry, push the hud line and update the digest.
func (r *Relay) Tick(ctx context.Context) TickOutcome {
	if !r.tickMu.TryLock() {
		r.mu.Lock()
		r.st.busySkips++
		r.mu.Unlock()
		return TickBusy
	}
	defer r.tickMu.Unlock()

	r.mu.Lock()
	r.st.ticks++
	cfg := r.cfg
	cfg.FallbackModels = append([]string(nil), cfg.FallbackModels...)
	if !cfg.Enabled {
		r.mu.Unlock()
		return TickDisabled
	}
	if r.opts.Model == nil {
		r.st.noModelSkips++
		r.mu.Unlock()
		return TickNoModel
	}
	// Idle check on monotonic version counters: buffer lengths stop
	// changing once a ring is full.
	if r.feedVersion == r.tickFeedV && r.senseVersion == r.tickSenseV {
		r.st.idleSkips++
		r.mu.Unlock()
		if cfg.LogVerbose {
			r.log.Info("analysis: no new events, skipping")
		}
		return TickIdle
	}
	r.tickFeedV, r.tickSenseV = r.feedVersion, r.senseVersion
	feed := r.feed.after(nil, 0)
	sense := r.sense.after(nil, 0)
	r.mu.Unlock()

	cw := BuildContextWindow(feed, sense, r.now().UnixMilli(), cfg.MaxAgeMs)
	if cw.AudioCount == 0 && cw.ScreenCount == 0 {
		r.mu.Lock()
		r.st.idleSkips++
		r.st.emptySkips++
		r.mu.Unlock()
		if cfg.LogVerbose {
			r.log.Info("analysis: empty context window, skipping")
		}
		return TickEmpty
	}

	prompt := BuildPrompt(cw)
	start := r.now()
	resp, model, err := r.call(ctx, cfg, prompt)
	latency := r.now().Sub(start).Milliseconds()
	if err != nil {
		r.mu.Lock()
		r.st.errors++
		r.st.lastError = err.Error()
		r.st.lastErrorAt = r.now().UnixMilli()
		r.mu.Unlock()
		r.log.Warn("analysis: model call failed; the loop goes on", "err", err)
		return TickFailed
	}
	reply := ParseReply(resp.Text)

	apps := make([]string, len(cw.AppHistory))
	hist := make([]AppSwitch, len(cw.AppHistory))
	for i, a := range cw.AppHistory {
		apps[i] = NormalizeAppName(a.App)
		hist[i] = AppSwitch{App: apps[i], TS: a.TS}
	}
	r.mu.Lock()
	now := r.now().UnixMilli()
	e := Entry{ID: r.agentNext, TS: now, HUD: reply.HUD, Digest: reply.Digest,
		Context: EntryContext{CurrentApp: NormalizeAppName(cw.CurrentApp), AppHistory: apps, AudioCount: cw.AudioCount, ScreenCount: cw.ScreenCount},
		Model:   model, LatencyMs: latency, TokensIn: resp.Usage.InputTokens, TokensOut: resp.Usage.OutputTokens, ParsedOK: reply.ParsedOK}
	r.agentNext++
	r.st.totalCalls++
	r.st.tokensIn += int64(e.TokensIn)
	r.st.tokensOut += int64(e.TokensOut)
	r.st.cost += resp.CostUSD
	if !resp.CostKnown {
		r.st.unpriced++
	}
	r.st.lastAnalysis = now
	if !reply.ParsedOK {
		r.st.parseFailures++
	}
	if cfg.PushToFeed && e.HUD != noValue && e.HUD != "Idle" && e.HUD != r.lastPushed {
		r.pushFeedLocked(FeedItem{ID: r.feedNext, Text: "[🧠] " + e.HUD, Priority: "normal", TS: now, Source: "agent"})
		// The loop's own line is not new input for the next tick.
		r.tickFeedV = r.feedVersion
		r.lastPushed = e.HUD
		e.Pushed = true
	}
	r.agent.push(e.ID, e)
	d := Digest{ID: e.ID, TS: e.TS, Digest: e.Digest, CurrentApp: e.Context.CurrentApp, AppHistory: hist, LatencyMs: latency}
	r.digest = &d
	r.mu.Unlock()

	if cfg.LogVerbose {
		r.log.Info("analysis", "id", e.ID, "latency_ms", latency, "model", model, "hud", e.HUD, "digest", clipRunes(e.Digest, 100), "pushed", e.Pushed)
	}
	if r.opts.History != nil {
		eb, _ := json.Marshal(e)
		db, _ := json.Marshal(d)
		if err := r.opts.History.AppendRelayResult(ctx, store.RelayResult{ID: e.ID, At: time.UnixMilli(e.TS).UTC(), Entry: eb, Digest: db}); err != nil {
			r.log.Warn("analysis: keep result in the store", "id", e.ID, "err", err)
		}
	}
	return TickAnalyzed
}

// call asks the configured model, then each fallback in order, each under
// its own timeout.
func (r *Relay) call(ctx context.Context, cfg AgentConfig, prompt string) (llm.Response, string, error) {
	models := append([]string{cfg.Model}, cfg.FallbackModels...)
	var errs []string
	for i, m := range models {
		cctx, cancel := context.WithTimeout(ctx, r.opts.CallTimeout)
		resp, err := r.opts.Model.Chat(cctx, llm.Request{Model: m, MaxTokens: cfg.MaxTokens, Temperature: cfg.Temperature,
			Messages: []llm.Message{{Role: "user", Text: prompt}}})
		cancel()
		if err == nil {
			if i > 0 {
				r.mu.Lock()
				r.st.fallbackCalls++
				r.mu.Unlock()
			}
			if resp.Model == "" {
				resp.Model = m
			}
			return resp, m, nil
		}
		if ctx.Err() != nil {
			return llm.Response{}, m, ctx.Err()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %s", r.opts.CallTimeout)
		}
		errs = append(errs, fmt.Sprintf("%s: %v", m, err))
		if i+1 < len(models) {
			r.log.Info("analysis: model failed, trying the next fallback", "model", m, "err", err)
		}
	}
	return llm.Response{}, "", fmt.Errorf("analysis call: every model failed (%s); check AGENT_MODEL, AGENT_BASE_URL and the API key", strings.Join(errs, "; "))
}

// Health is the /health body.
type Health struct {
	OK          bool        `json:"ok"`
	Epoch       string      `json:"epoch"`
	Messages    int         `json:"messages"`
	SenseEvents int         `json:"senseEvents"`
	Agent       AgentHealth `json:"agent"`
}

// Tokens counts tokens in and out.
type Tokens struct {
	In  int64 `json:"in"`
	Out int64 `json:"out"`
}

// AgentHealth is the analysis loop's part of /health.
type AgentHealth struct {
	Enabled       bool    `json:"enabled"`
	HasModel      bool    `json:"hasModel"`
	LastAnalysis  *int64  `json:"lastAnalysis"`
	LastDigest    *string `json:"lastDigest"`
	TotalCalls    int64   `json:"totalCalls"`
	TotalTokens   Tokens  `json:"totalTokens"`
	EstimatedCost float64 `json:"estimatedCost"`
	// CostUnknown is true once a call's cost was unknown (no provider
	// figure, no price): EstimatedCost is then only the known part, and
	// UnpricedCalls counts the rest.
	CostUnknown    bool     `json:"costUnknown"`
	UnpricedCalls  int64    `json:"unpricedCalls"`
	Model          string   `json:"model"`
	IdleSkips      int64    `json:"idleSkips"`
	EmptySkips     int64    `json:"emptySkips"`
	BusySkips      int64    `json:"busySkips"`
	Ticks          int64    `json:"ticks"`
	Errors         int64    `json:"errors"`
	LastError      *string  `json:"lastError"`
	LastErrorAt    *int64   `json:"lastErrorAt"`
	ParseFailures  int64    `json:"parseFailures"`
	FallbackCalls  int64    `json:"fallbackCalls"`
	IntervalMs     int64    `json:"intervalMs"`
	DebounceMs     int64    `json:"debounceMs"`
	FallbackModels []string `json:"fallbackModels"`
}

// Health returns the /health body.
func (r *Relay) Health() Health {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := Health{OK: true, Epoch: r.epoch, Messages: r.feed.len(), SenseEvents: r.sense.len(), Agent: AgentHealth{
		Enabled: r.cfg.Enabled, HasModel: r.opts.Model != nil, TotalCalls: r.st.totalCalls,
		TotalTokens:   Tokens{In: r.st.tokensIn, Out: r.st.tokensOut},
		EstimatedCost: float64(int64(r.st.cost*1e6+0.5)) / 1e6, CostUnknown: r.st.unpriced > 0, UnpricedCalls: r.st.unpriced, Model: r.cfg.Model,
		IdleSkips: r.st.idleSkips, EmptySkips: r.st.emptySkips, BusySkips: r.st.busySkips, Ticks: r.st.ticks,
		Errors: r.st.errors, ParseFailures: r.st.parseFailures, FallbackCalls: r.st.fallbackCalls,
		IntervalMs: r.cfg.IntervalMs, DebounceMs: r.cfg.DebounceMs, FallbackModels: append([]string{}, r.cfg.FallbackModels...)}}
	if r.st.lastAnalysis != 0 {
		v := r.st.lastAnalysis
		h.Agent.LastAnalysis = &v
	}
	if r.digest != nil {
		v := clipRunes(r.digest.Digest, 200)
		h.Agent.LastDigest = &v
	}
	if r.st.lastError != "" {
		v, at := r.st.lastError, r.st.lastErrorAt
		h.Agent.LastError, h.Agent.LastErrorAt = &v, &at
	}
	return h
}
