package relay

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/guard"
	"github.com/acu-dev/acu/internal/guard/guardtest"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/store"
)

const sampleOCR = "export function buildContextWindow(feedBuffer, senseBuffer) {\n  const now = Date.now();\n  // TODO: fix idle detection"
const sampleFeed = `{"text":"[PERIODIC] (normal)\nContext (1 entries):\n[2s ago, openrouter] So what we need to fix is the idle detection in the agent loop","priority":"normal"}`

const sampleReply = `{"hud":"Fixing idle detection in IDEA","digest":"User is in IntelliJ IDEA editing buildContextWindow(feedBuffer, senseBuffer). A TODO says to fix idle detection. The user said the idle detection in the agent loop needs fixing. No errors visible."}`

// TestSeedSection11 is the seed's manual test, automated: sense and feed
// samples, a tick, both outputs; then a tick with nothing new is skipped.
func TestSeedSection11(t *testing.T) {
	h := newHarness(t, llmtest.Text(sampleReply), nil)
	now := time.Now().UnixMilli()
	h.post(t, "/sense", senseBody("text", "idea", sampleOCR, now))
	h.post(t, "/feed", sampleFeed)

	if got := h.r.Tick(t.Context()); got != TickAnalyzed {
		t.Fatalf("Tick() = %v, want analyzed", got)
	}
	prompt := h.model.Last().Text()
	for _, want := range []string{
		"Active app: IntelliJ IDEA",
		"App history: IntelliJ IDEA",
		"[IntelliJ IDEA] export function buildContextWindow(feedBuffer, senseBuffer) {   const now = Date.now();   // TODO: fix idle detection",
		"Audio transcript (newest last):\nSo what we need to fix is the idle detection in the agent loop",
	} {
		if !strings.Contains(prompt, want) {
			t.Errorf("prompt lacks %q:\n%s", want, prompt)
		}
	}
	if req := h.model.Last(); req.Model != "google/gemini-2.5-flash-lite" || req.MaxTokens != 200 || req.Temperature != 0.3 {
		t.Errorf("request model=%q max_tokens=%d temperature=%v, want the seed's defaults", req.Model, req.MaxTokens, req.Temperature)
	}

	var last struct {
		OK     bool  `json:"ok"`
		Result Entry `json:"result"`
	}
	h.getJSON(t, "/agent/last", &last)
	e := last.Result
	if !last.OK || e.ID != 1 || e.HUD != "Fixing idle detection in IDEA" || !strings.Contains(e.Digest, "TODO says to fix idle detection") {
		t.Errorf("/agent/last = %+v", last)
	}
	if len(strings.Fields(e.HUD)) > 15 || len(e.Digest) <= len(e.HUD) {
		t.Errorf("hud %q should be short and digest %q rich", e.HUD, e.Digest)
	}
	wantCtx := EntryContext{CurrentApp: "IntelliJ IDEA", AppHistory: []string{"IntelliJ IDEA"}, AudioCount: 1, ScreenCount: 1}
	if fmt.Sprint(e.Context) != fmt.Sprint(wantCtx) || !e.Pushed || e.Model != "google/gemini-2.5-flash-lite" || e.TokensIn == 0 || e.TokensOut == 0 || !e.ParsedOK {
		t.Errorf("/agent/last result = %+v, want context %+v, pushed, model, tokens", e, wantCtx)
	}

	var dg struct {
		OK     bool   `json:"ok"`
		Digest Digest `json:"digest"`
	}
	h.getJSON(t, "/agent/digest", &dg)
	if !dg.OK || dg.Digest.ID != 1 || dg.Digest.Digest != e.Digest || dg.Digest.CurrentApp != "IntelliJ IDEA" ||
		len(dg.Digest.AppHistory) != 1 || dg.Digest.AppHistory[0].TS != now {
		t.Errorf("/agent/digest = %+v", dg)
	}

	var feed feedList
	h.getJSON(t, "/feed", &feed)
	if n := len(feed.Items); n != 1 || feed.Items[0].Text != "[🧠] Fixing idle detection in IDEA" || feed.Items[0].Source != "agent" {
		t.Errorf("/feed = %+v, want only the agent's line (transcripts are not shown)", feed.Items)
	}

	calls := h.model.Calls()
	if got := h.r.Tick(t.Context()); got != TickIdle {
		t.Fatalf("second Tick() = %v, want idle", got)
	}
	var health Health
	h.getJSON(t, "/health", &health)
	if health.Agent.IdleSkips != 1 || h.model.Calls() != calls || health.Agent.TotalCalls != 1 {
		t.Errorf("after an idle tick: idleSkips=%d totalCalls=%d model calls %d -> %d; want 1, 1, no new call",
			health.Agent.IdleSkips, health.Agent.TotalCalls, calls, h.model.Calls())
	}
	if health.Messages != 2 || health.SenseEvents != 1 || health.Agent.LastAnalysis == nil || health.Agent.LastDigest == nil ||
		health.Agent.TotalTokens.In == 0 || health.Agent.EstimatedCost <= 0 || health.Agent.CostUnknown || health.Agent.UnpricedCalls != 0 ||
		health.Agent.Model != "google/gemini-2.5-flash-lite" {
		t.Errorf("/health = %+v", health)
	}
}

// TestIdleWithFullRing: once the sense ring holds 30 events its length
// stops changing; new events must still count as new.
func TestIdleWithFullRing(t *testing.T) {
	h := newHarness(t, llmtest.Text(sampleReply), nil)
	now := time.Now().UnixMilli()
	for i := range SenseCapacity + 5 {
		h.post(t, "/sense", senseBody("text", "code", fmt.Sprintf("line %d", i), now))
	}
	if got := h.r.Tick(t.Context()); got != TickAnalyzed {
		t.Fatalf("Tick() = %v, want analyzed", got)
	}
	if got := h.r.Tick(t.Context()); got != TickIdle {
		t.Fatalf("Tick() with nothing new = %v, want idle", got)
	}
	if n := h.r.Health().SenseEvents; n != SenseCapacity {
		t.Fatalf("sense events = %d, want a full ring of %d", n, SenseCapacity)
	}
	h.post(t, "/sense", senseBody("text", "code", "one more", now))
	if got := h.r.Tick(t.Context()); got != TickAnalyzed {
		t.Errorf("Tick() after an event into a full ring = %v, want analyzed", got)
	}
	// The same for the feed's ring of 100.
	for i := range FeedCapacity + 1 {
		h.r.AddFeed(fmt.Sprintf("[PERIODIC]\n[1s ago, openrouter] chunk %d", i), "", "")
	}
	h.r.Tick(t.Context())
	h.r.Tick(t.Context())
	h.r.AddFeed("[PERIODIC]\n[1s ago, openrouter] newest", "", "")
	if got := h.r.Tick(t.Context()); got != TickAnalyzed {
		t.Errorf("Tick() after a message into a full feed = %v, want analyzed", got)
	}
}

func TestEmptyWindowSkipped(t *testing.T) {
	clk := &fakeClock{t: time.Now()}
	h := newHarness(t, llmtest.Text(sampleReply), func(o *Options) { o.Now = clk.now })
	h.post(t, "/feed", `{"text":"hello, not a transcript"}`)
	if got := h.r.Tick(t.Context()); got != TickEmpty {
		t.Fatalf("Tick() = %v, want empty (no transcript, no screen)", got)
	}
	h.post(t, "/sense", senseBody("text", "code", "x", clk.t.UnixMilli()))
	clk.t = clk.t.Add(3 * time.Minute) // the event leaves the 2-minute window
	h.r.mu.Lock()
	h.r.senseVersion++
	h.r.mu.Unlock()
	if got := h.r.Tick(t.Context()); got != TickEmpty {
		t.Fatalf("Tick() with an event older than AGENT_MAX_AGE_MS = %v, want empty", got)
	}
	if h.model.Calls() != 0 {
		t.Errorf("model called %d times, want 0", h.model.Calls())
	}
	if s := h.r.Health().Agent; s.IdleSkips != 2 || s.EmptySkips != 2 {
		t.Errorf("idleSkips=%d emptySkips=%d, want 2, 2", s.IdleSkips, s.EmptySkips)
	}
}

func TestHUDPushRules(t *testing.T) {
	h := newHarness(t, llmtest.Script(
		`{"hud":"Reading logs","digest":"d1"}`,
		`{"hud":"Reading logs","digest":"d2"}`,
		`{"hud":"Idle","digest":"d3"}`,
		`{"digest":"d4"}`,
		`{"hud":"Writing tests","digest":"d5"}`,
	), nil)
	var pushed []bool
	for i := range 5 {
		h.post(t, "/sense", senseBody("text", "code", fmt.Sprintf("screen %d", i), time.Now().UnixMilli()))
		if got := h.r.Tick(t.Context()); got != TickAnalyzed {
			t.Fatalf("tick %d = %v", i, got)
		}
		e, _ := h.r.Last()
		pushed = append(pushed, e.Pushed)
	}
	if want := []bool{true, false, false, false, true}; fmt.Sprint(pushed) != fmt.Sprint(want) {
		t.Errorf("pushed = %v, want %v (repeat, Idle and — are not pushed)", pushed, want)
	}
	var feed feedList
	h.getJSON(t, "/feed", &feed)
	if len(feed.Items) != 2 || feed.Items[1].Text != "[🧠] Writing tests" {
		t.Errorf("feed = %+v", feed.Items)
	}
	// The loop's own push is not new input.
	if got := h.r.Tick(t.Context()); got != TickIdle {
		t.Errorf("Tick() after only the loop's own push = %v, want idle", got)
	}
	// pushToFeed off.
	c := h.r.Config()
	c.PushToFeed = false
	if err := h.r.SetConfig(c); err != nil {
		t.Fatal(err)
	}
	h.model.SetHandler(llmtest.Text(`{"hud":"Something else","digest":"d"}`))
	h.post(t, "/sense", senseBody("text", "code", "more", time.Now().UnixMilli()))
	h.r.Tick(t.Context())
	if e, _ := h.r.Last(); e.Pushed || len(h.r.Feed(0)) != 2 {
		t.Errorf("with pushToFeed=false the line was pushed: %+v", e)
	}
}

// TestModelFaults: markdown-wrapped JSON, plain text, garbage, 500s and a
// hang; the loop goes on, errors show in /health.
func TestModelFaults(t *testing.T) {
	h := newHarness(t, nil, func(o *Options) { o.CallTimeout = 2 * time.Second })
	feedEvent := func(i int) {
		h.post(t, "/sense", senseBody("text", "code", fmt.Sprintf("screen %d", i), time.Now().UnixMilli()))
	}
	cases := []struct {
		name       string
		reply      string
		fault      *llmtest.Fault
		want       TickOutcome
		hud        string
		digest     string
		parsedOK   bool
		wantErrors int64
	}{
		{name: "markdown", reply: "```json\n{\"hud\":\"Fenced\",\"digest\":\"Fenced digest\"}\n```", want: TickAnalyzed, hud: "Fenced", digest: "Fenced digest", parsedOK: true},
		{name: "prose around JSON", reply: "Sure! {\"hud\":\"Embedded\",\"digest\":\"x\"} hope it helps", want: TickAnalyzed, hud: "Embedded", digest: "x", parsedOK: true},
		{name: "plain text", reply: "The user is reading a long document about Go generics and taking notes in a second window", want: TickAnalyzed,
			hud:    "The user is reading a long document about Go generics and taking notes in a seco",
			digest: "The user is reading a long document about Go generics and taking notes in a second window"},
		{name: "garbage", reply: "{\"hud\": [unterminated", want: TickAnalyzed, hud: "{\"hud\": [unterminated", digest: "{\"hud\": [unterminated"},
		{name: "500", fault: &llmtest.Fault{Kind: llmtest.Status, Status: 500, Message: "upstream exploded"}, want: TickFailed, wantErrors: 1},
		{name: "malformed body", fault: &llmtest.Fault{Kind: llmtest.Malformed}, want: TickFailed, wantErrors: 2},
		{name: "hang", fault: &llmtest.Fault{Kind: llmtest.Hang}, want: TickFailed, wantErrors: 3},
		{name: "recovers", reply: `{"hud":"Back","digest":"ok"}`, want: TickAnalyzed, hud: "Back", digest: "ok", parsedOK: true, wantErrors: 3},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h.model.SetHandler(llmtest.Text(tc.reply))
			if tc.fault != nil {
				h.model.Fail(*tc.fault)
			}
			feedEvent(i)
			if got := h.r.Tick(t.Context()); got != tc.want {
				t.Fatalf("Tick() = %v, want %v", got, tc.want)
			}
			hl := h.r.Health().Agent
			if hl.Errors != tc.wantErrors {
				t.Errorf("errors = %d, want %d (lastError %v)", hl.Errors, tc.wantErrors, hl.LastError)
			}
			if tc.want != TickAnalyzed {
				if hl.LastError == nil || hl.LastErrorAt == nil {
					t.Errorf("/health lastError not set")
				}
				return
			}
			e, _ := h.r.Last()
			if e.HUD != tc.hud || e.Digest != tc.digest || e.ParsedOK != tc.parsedOK {
				t.Errorf("entry hud=%q digest=%q parsedOk=%v, want %q %q %v", e.HUD, e.Digest, e.ParsedOK, tc.hud, tc.digest, tc.parsedOK)
			}
		})
	}
}

func TestFallbackModels(t *testing.T) {
	h := newHarness(t, func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: `{"hud":"From ` + r.Model + `","digest":"d"}`}
	}, func(o *Options) { o.Agent.FallbackModels = []string{"backup/one", "backup/two"} })
	h.model.Fail(llmtest.Fault{Kind: llmtest.Status, Status: 503}, llmtest.Fault{Kind: llmtest.Status, Status: 400, Message: "no such model"})
	h.post(t, "/sense", senseBody("text", "code", "x", time.Now().UnixMilli()))
	if got := h.r.Tick(t.Context()); got != TickAnalyzed {
		t.Fatalf("Tick() = %v, want analyzed by the second fallback", got)
	}
	e, _ := h.r.Last()
	var models []string
	for _, r := range h.model.Requests() {
		models = append(models, r.Model)
	}
	if e.Model != "backup/two" || e.HUD != "From backup/two" || fmt.Sprint(models) != "[google/gemini-2.5-flash-lite backup/one backup/two]" {
		t.Errorf("entry model %q hud %q, requests %v", e.Model, e.HUD, models)
	}
	if hl := h.r.Health().Agent; hl.FallbackCalls != 1 || hl.Errors != 0 {
		t.Errorf("fallbackCalls=%d errors=%d, want 1, 0", hl.FallbackCalls, hl.Errors)
	}
}

// TestRunNoOverlap: a model slower than the interval never gets two ticks
// at once, and the loop goes on after errors.
func TestRunNoOverlap(t *testing.T) {
	var inFlight, most, calls atomic.Int64
	h := newHarness(t, func(llmtest.Request) llmtest.Reply {
		n := inFlight.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(250 * time.Millisecond) // longer than the interval
		inFlight.Add(-1)
		calls.Add(1)
		return llmtest.Reply{Text: `{"hud":"x","digest":"y"}`}
	}, func(o *Options) { o.Agent.IntervalMs = 100 })
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- h.r.Run(ctx) }()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				h.r.AddFeed(fmt.Sprintf("[PERIODIC]\n[1s ago, openrouter] chunk %d", i), "", "")
			}
		}
	})
	waitFor(t, "three analysis calls", func() bool { return calls.Load() >= 3 })
	close(stop)
	wg.Wait()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if most.Load() != 1 {
		t.Errorf("at most %d calls were in flight at once, want 1", most.Load())
	}
}

// TestDebounce: with AGENT_DEBOUNCE_MS a tick follows new input without
// waiting for the interval.
func TestDebounce(t *testing.T) {
	h := newHarness(t, llmtest.Text(sampleReply), func(o *Options) {
		o.Agent.IntervalMs = 3600 * 1000
		o.Agent.DebounceMs = 50
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- h.r.Run(ctx) }()
	h.post(t, "/sense", senseBody("text", "code", "typed", time.Now().UnixMilli()))
	waitFor(t, "a debounced tick", func() bool { _, ok := h.r.Last(); return ok })
	cancel()
	<-done
}

func TestNoModel(t *testing.T) {
	r, err := New(t.Context(), Options{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	r.AddFeed("[PERIODIC]\n[1s ago, openrouter] hi", "", "")
	if got := r.Tick(t.Context()); got != TickNoModel {
		t.Errorf("Tick() without a model = %v", got)
	}
	if r.Health().Agent.HasModel {
		t.Error("hasModel = true")
	}
}

// TestHistorySurvivesRestart: results are kept in the store and restored.
func TestHistorySurvivesRestart(t *testing.T) {
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "acu.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h := newHarness(t, llmtest.Text(sampleReply), func(o *Options) { o.History = db })
	h.post(t, "/sense", senseBody("text", "idea", sampleOCR, time.Now().UnixMilli()))
	h.r.Tick(t.Context())
	before, _ := h.r.Last()

	h2 := newHarness(t, llmtest.Text(`{"hud":"Later","digest":"later"}`), func(o *Options) { o.History = db })
	if h2.r.Epoch() == h.r.Epoch() {
		t.Error("epoch did not change across a restart")
	}
	var last struct {
		Result Entry `json:"result"`
	}
	h2.getJSON(t, "/agent/last", &last)
	if fmt.Sprint(last.Result) != fmt.Sprint(before) {
		t.Errorf("after restart /agent/last = %+v, want %+v", last.Result, before)
	}
	var dg struct {
		Digest *Digest `json:"digest"`
	}
	h2.getJSON(t, "/agent/digest", &dg)
	if dg.Digest == nil || dg.Digest.ID != before.ID {
		t.Errorf("after restart /agent/digest = %+v", dg.Digest)
	}
	h2.post(t, "/sense", senseBody("text", "idea", "new", time.Now().UnixMilli()))
	h2.r.Tick(t.Context())
	var hist struct {
		Results []Entry `json:"results"`
	}
	h2.getJSON(t, "/agent/history?limit=5", &hist)
	if len(hist.Results) != 2 || hist.Results[0].ID != 2 || hist.Results[0].HUD != "Later" || hist.Results[1].ID != 1 {
		t.Errorf("/agent/history = %+v, want ids 2, 1 newest first", hist.Results)
	}
}

func TestHTTPValidation(t *testing.T) {
	h := newHarness(t, nil, nil)
	big := `{"type":"text","ts":1,"ocr":"` + strings.Repeat("a", MaxSenseBody) + `"}`
	cases := []struct {
		name, method, path, body string
		want                     int
		field                    string
	}{
		{"sense not JSON", "POST", "/sense", "not json", 400, ""},
		{"sense array", "POST", "/sense", `[1,2]`, 400, ""},
		{"sense empty", "POST", "/sense", ``, 400, ""},
		{"sense no type", "POST", "/sense", `{"ts":1}`, 400, "type"},
		{"sense no ts", "POST", "/sense", `{"type":"text"}`, 400, "ts"},
		{"sense ts string", "POST", "/sense", `{"type":"text","ts":"x"}`, 400, ""},
		{"sense bad meta", "POST", "/sense", `{"type":"text","ts":1,"meta":{"ssim":"high"}}`, 400, "meta"},
		{"sense two objects", "POST", "/sense", `{"type":"text","ts":1}{}`, 400, ""},
		{"sense over 2 MB", "POST", "/sense", big, 413, ""},
		{"sense ok", "POST", "/sense", `{"type":"visual","ts":1769901200000,"meta":{"app":"code","ssim":0.7},"roi":{"x":1}}`, 200, ""},
		{"feed no text", "POST", "/feed", `{"priority":"high"}`, 400, "text"},
		{"feed not JSON", "POST", "/feed", `{`, 400, ""},
		{"feed text not string", "POST", "/feed", `{"text":5}`, 400, ""},
		{"feed ok", "POST", "/feed", `{"text":"hi","priority":"high"}`, 200, ""},
		{"after not a number", "GET", "/feed?after=x", "", 400, "after"},
		{"after negative", "GET", "/sense?after=-1", "", 400, "after"},
		{"history limit", "GET", "/agent/history?limit=0", "", 400, "limit"},
		{"config unknown field", "POST", "/agent/config", `{"intervalSeconds":5}`, 400, "intervalSeconds"},
		{"config bad interval", "POST", "/agent/config", `{"intervalMs":5}`, 400, "intervalMs"},
		{"config bad temperature", "POST", "/agent/config", `{"temperature":9}`, 400, "temperature"},
		{"config bad maxAge", "POST", "/agent/config", `{"maxAge":1}`, 400, "maxAge"},
		{"config wrong type", "POST", "/agent/config", `{"enabled":"yes"}`, 400, ""},
		{"config key refused", "POST", "/agent/config", `{"openrouterApiKey":"sk-or-x"}`, 400, "openrouterApiKey"},
		{"config ok", "POST", "/agent/config", `{"intervalMs":60000,"model":"m/x","maxAge":60000,"fallbackModels":["a/b"],"pushToFeed":false}`, 200, ""},
		{"unknown route", "GET", "/nope", "", 404, ""},
		{"wrong method", "DELETE", "/feed", "", 404, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.want == http.StatusRequestEntityTooLarge {
				// The relay answers 413 before reading the body; asking
				// first keeps the client from writing 2 MB into a closed
				// connection (a reset, not the answer).
				hdr = []string{"Expect", "100-continue"}
			}
			code, b := h.do(t, tc.method, tc.path, tc.body, hdr...)
			if code != tc.want {
				t.Fatalf("%s %s = %d %s, want %d", tc.method, tc.path, code, clipRunes(string(b), 200), tc.want)
			}
			if code >= 400 && code != 405 {
				var eb struct {
					Error struct{ Code, Message, Field string } `json:"error"`
				}
				if err := json.Unmarshal(b, &eb); err != nil || eb.Error.Message == "" || eb.Error.Field != tc.field {
					t.Errorf("error body %s: want a JSON error with field %q", b, tc.field)
				}
			}
		})
	}
	c := h.r.Config()
	if c.IntervalMs != 60000 || c.Model != "m/x" || c.MaxAgeMs != 60000 || c.PushToFeed || fmt.Sprint(c.FallbackModels) != "[a/b]" {
		t.Errorf("config after POST = %+v", c)
	}
	var sense struct {
		Events []map[string]any `json:"events"`
	}
	h.getJSON(t, "/sense", &sense)
	if len(sense.Events) != 1 {
		t.Fatalf("sense = %+v", sense)
	}
	raw := sense.Events[0]
	if raw["id"] != float64(1) || raw["roi"] == nil || raw["receivedAt"] == nil || raw["type"] != "visual" {
		t.Errorf("served sense event %v: want the client's fields plus id and receivedAt", raw)
	}
}

func TestAfterAndEpoch(t *testing.T) {
	h := newHarness(t, nil, nil)
	for i := range 5 {
		h.post(t, "/feed", fmt.Sprintf(`{"text":"m%d"}`, i))
		h.post(t, "/sense", senseBody("visual", "code", "", int64(i+1)))
	}
	h.post(t, "/sense", `{"type":"text","ts":9,"id":77,"receivedAt":1}`)
	var feed feedList
	h.getJSON(t, "/feed?after=3", &feed)
	if len(feed.Items) != 2 || feed.Items[0].ID != 4 || feed.Epoch != h.r.Epoch() || len(feed.Messages) != 2 {
		t.Errorf("/feed?after=3 = %+v", feed)
	}
	var sense struct {
		Items []map[string]any `json:"items"`
		Epoch string           `json:"epoch"`
	}
	h.getJSON(t, "/sense?after=4", &sense)
	if len(sense.Items) != 2 || sense.Items[0]["id"] != float64(5) || sense.Items[1]["id"] != float64(6) || sense.Epoch == "" {
		t.Errorf("/sense?after=4 = %+v", sense)
	}
	h.getJSON(t, "/sense?after=100", &sense)
	if len(sense.Items) != 0 {
		t.Errorf("/sense?after=100 = %+v, want none", sense.Items)
	}
}

// TestGuardAndToken: every route but the HUD page's files and its login
// needs the token or a HUD page's session; the token is required; foreign
// Hosts and Origins are refused; /?token= gives nothing.
func TestGuardAndToken(t *testing.T) {
	h := newHarness(t, nil, nil)
	for _, p := range []string{"/health", "/feed", "/sense", "/agent/digest", "/agent/config", "/feed/stream"} {
		if code, _ := h.do(t, "GET", p, "", "Authorization", ""); code != 401 {
			t.Errorf("GET %s without token = %d, want 401", p, code)
		}
	}
	for _, p := range []string{"/feed", "/sense", "/agent/config", "/auth/link"} {
		if code, _ := h.do(t, "POST", p, `{}`, "Authorization", ""); code != 401 {
			t.Errorf("POST %s without token = %d, want 401", p, code)
		}
	}
	if code, _ := h.do(t, "GET", "/health", "", "Authorization", "Bearer wrong"); code != 401 {
		t.Errorf("wrong token = %d, want 401", code)
	}
	if code, _ := h.do(t, "GET", "/health", ""); code != 200 {
		t.Errorf("with token = %d, want 200", code)
	}
	for _, p := range []string{"/", "/hud", "/hud.js", "/hud.css", "/session.js"} {
		if code, _ := h.do(t, "GET", p, "", "Authorization", ""); code != 200 {
			t.Errorf("GET %s (static) without token = %d, want 200", p, code)
		}
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(h.srv.URL + "/?token=" + testToken)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || len(resp.Cookies()) != 0 || resp.Header.Get("Set-Cookie") != "" {
		t.Errorf("GET /?token= = %d %v, want the page and no cookie", resp.StatusCode, resp.Header)
	}
	if code, _ := h.do(t, "GET", "/health", "", "Authorization", "", "Cookie", "acu_relay="+testToken); code != 401 {
		t.Errorf("the token as the old cookie = %d, want 401", code)
	}
	if code, _ := h.do(t, "POST", "/feed", `{"text":"x"}`, "Origin", "http://evil.example"); code != 403 {
		t.Errorf("cross-origin POST = %d, want 403", code)
	}
	if code, _ := h.do(t, "POST", "/feed", `{"text":"x"}`, "Origin", "http://127.0.0.1:1"); code != 403 {
		t.Errorf("POST from another local port = %d, want 403", code)
	}
	if code, _ := h.do(t, "GET", "/health", "", "Host", "evil.example"); code != 403 {
		t.Errorf("foreign Host = %d, want 403", code)
	}
	if _, err := New(t.Context(), Options{}); err == nil {
		t.Error("New without a token succeeded")
	}
	if _, err := New(t.Context(), Options{Guard: guard.Guard{ListenHost: "0.0.0.0"}, Token: "t"}); err != nil {
		t.Errorf("New beyond loopback with a token: %v", err)
	}
}

// TestLoginLink: POST /auth/link needs the token itself (not a session)
// and answers a URL whose fragment holds a code; POST /auth/session swaps
// the code once for a session that works as X-Acu-Session only.
func TestLoginLink(t *testing.T) {
	h := newHarness(t, nil, nil)
	code, body := h.do(t, "POST", "/auth/link", "")
	var link LoginLink
	if code != 200 || json.Unmarshal(body, &link) != nil {
		t.Fatalf("POST /auth/link = %d %s", code, body)
	}
	loginCode, ok := strings.CutPrefix(link.URL, h.srv.URL+"/#code=")
	if !ok || link.ExpiresAt.IsZero() {
		t.Fatalf("link = %+v, want %s/#code=…", link, h.srv.URL)
	}
	code, body = h.do(t, "POST", "/auth/session", `{"code":"`+loginCode+`"}`, "Authorization", "")
	var sess guard.SessionResponse
	if code != 200 || json.Unmarshal(body, &sess) != nil || sess.Session == "" {
		t.Fatalf("POST /auth/session = %d %s", code, body)
	}
	guardtest.CheckStolen(t, h.srv.URL+"/agent/digest", sess.Session, "acu_relay")
	if code, _ := h.do(t, "POST", "/auth/session", `{"code":"`+loginCode+`"}`, "Authorization", ""); code != 401 {
		t.Errorf("second exchange = %d, want 401", code)
	}
	if code, _ := h.do(t, "POST", "/auth/link", "", "Authorization", "", guard.SessionHeader, sess.Session); code != 401 {
		t.Errorf("POST /auth/link with a session = %d, want 401: only the token mints links", code)
	}
}

func TestFeedStream(t *testing.T) {
	h := newHarness(t, nil, nil)
	h.post(t, "/feed", `{"text":"before"}`)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", h.srv.URL+"/feed/stream", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q", ct)
	}
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	h.post(t, "/feed", `{"text":"[PERIODIC] hidden"}`)
	h.post(t, "/feed", `{"text":"after","priority":"urgent"}`)
	var got []string
	for l := range lines {
		if strings.HasPrefix(l, "data: ") || strings.HasPrefix(l, "id: ") {
			got = append(got, l)
		}
		if strings.Contains(l, `"after"`) {
			break
		}
	}
	want := []string{`data: {"epoch":"` + h.r.Epoch() + `"}`, "id: 1", `data: {"id":1,"text":"before","priority":"normal","ts":`, "id: 3", `data: {"id":3,"text":"after","priority":"urgent","ts":`}
	if len(got) != len(want) {
		t.Fatalf("stream = %q, want %q", got, want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("stream line %d = %q, want prefix %q", i, got[i], want[i])
		}
	}
	cancel()
	// Resume with Last-Event-ID.
	req, _ = http.NewRequestWithContext(t.Context(), "GET", h.srv.URL+"/feed/stream?all=true", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Last-Event-ID", "1")
	ctx2, cancel2 := context.WithCancel(t.Context())
	defer cancel2()
	resp2, err := http.DefaultClient.Do(req.WithContext(ctx2))
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	sc := bufio.NewScanner(resp2.Body)
	var ids []string
	for sc.Scan() && len(ids) < 2 {
		if l := sc.Text(); strings.HasPrefix(l, "id: ") {
			ids = append(ids, l)
		}
	}
	if fmt.Sprint(ids) != "[id: 2 id: 3]" {
		t.Errorf("resumed ids = %v, want 2 and 3", ids)
	}
}

var _ = llm.OpenAI

// TestRuntimeConfigWakesLoop: a loop started disabled makes no call; POST
// /agent/config turning it on (with a short interval) starts the ticks.
func TestRuntimeConfigWakesLoop(t *testing.T) {
	h := newHarness(t, llmtest.Text(sampleReply), func(o *Options) {
		o.Agent.Enabled = false
		o.Agent.IntervalMs = 3600 * 1000
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- h.r.Run(ctx) }()
	h.post(t, "/sense", senseBody("text", "code", "x", time.Now().UnixMilli()))
	if got := h.r.Tick(t.Context()); got != TickDisabled {
		t.Errorf("Tick() while disabled = %v", got)
	}
	h.post(t, "/agent/config", `{"enabled":true,"intervalMs":100}`)
	waitFor(t, "a tick after enabling", func() bool { _, ok := h.r.Last(); return ok })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Config struct {
			Enabled    bool  `json:"enabled"`
			IntervalMs int64 `json:"intervalMs"`
			MaxAge     int64 `json:"maxAge"`
			HasModel   bool  `json:"hasModel"`
		} `json:"config"`
	}
	h.getJSON(t, "/agent/config", &cfg)
	if !cfg.Config.Enabled || cfg.Config.IntervalMs != 100 || cfg.Config.MaxAge != 120000 || !cfg.Config.HasModel {
		t.Errorf("/agent/config = %+v", cfg.Config)
	}
}

// TestCostUnknown: an analysis model with no price, on an endpoint that
// reports no cost, makes /health say costUnknown with the unpriced calls
// counted, instead of an estimatedCost of a silent $0.
func TestCostUnknown(t *testing.T) {
	h := newHarness(t, llmtest.Text(sampleReply), func(o *Options) { o.Agent.Model = "some-lab/unpriced-model" })
	h.post(t, "/sense", senseBody("text", "idea", sampleOCR, time.Now().UnixMilli()))
	h.post(t, "/feed", sampleFeed)
	if got := h.r.Tick(t.Context()); got != TickAnalyzed {
		t.Fatalf("Tick() = %v, want analyzed", got)
	}
	var health Health
	h.getJSON(t, "/health", &health)
	if a := health.Agent; !a.CostUnknown || a.UnpricedCalls != 1 || a.EstimatedCost != 0 || a.TotalCalls != 1 {
		t.Errorf("/health agent = costUnknown %v, unpricedCalls %d, estimatedCost %v, totalCalls %d; want true, 1, 0, 1",
			a.CostUnknown, a.UnpricedCalls, a.EstimatedCost, a.TotalCalls)
	}
}
