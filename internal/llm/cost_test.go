package llm_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/secret"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
)

func TestPriceLookup(t *testing.T) {
	table := llm.DefaultPrices()
	tests := []struct {
		model string
		want  llm.Price
		ok    bool
	}{
		{"google/gemini-2.0-flash-lite-001", llm.Price{0.075, 0.30}, true},
		{"gemini-2.0-flash-lite-001", llm.Price{0.075, 0.30}, true},
		{"models/gemini-2.0-flash-001", llm.Price{0.10, 0.40}, true},
		{"Google/Gemini-2.5-Flash-Lite", llm.Price{0.10, 0.40}, true},
		{"anthropic/claude-haiku-4-5", llm.Price{1, 5}, true},
		{"claude-haiku-4-5-20251001", llm.Price{1, 5}, true},
		{"openrouter/unknown-model", llm.Price{}, false},
		{"", llm.Price{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			got, ok := table.Lookup(tt.model)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Lookup(%q) = %v, %v, want %v, %v", tt.model, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestCostAccounting: cost per call, per run and in total, with a shared
// ledger across two clients and a price override.
func TestCostAccounting(t *testing.T) {
	ledger := llm.NewLedger()
	usage := llm.Usage{InputTokens: 1000, OutputTokens: 500}
	judge, _ := newClient(t, llm.OpenAI, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "NO", Usage: usage}
	}, func(o *llm.Options) {
		o.Model = "google/gemini-2.0-flash-lite-001"
		o.Ledger = ledger
		o.Name = "judge"
	})
	agent, srv := newClient(t, llm.Anthropic, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "ok", Usage: usage}
	}, func(o *llm.Options) {
		o.Model = "claude-haiku-4-5"
		o.Ledger = ledger
		o.Name = "agent"
		o.Prices = llm.PriceTable{"anthropic/claude-haiku-4-5": {InputPerMTok: 2, OutputPerMTok: 10}} // override
	})
	judgeCost := 1000*0.075/1e6 + 500*0.30/1e6
	agentCost := 1000*2.0/1e6 + 500*10.0/1e6

	call := func(c *llm.Client, run string, want float64) {
		t.Helper()
		r := ask("q")
		r.RunID = run
		resp, err := c.Chat(t.Context(), r)
		if err != nil {
			t.Fatalf("Chat: %v", err)
		}
		if !near(resp.CostUSD, want) {
			t.Errorf("CostUSD = %v, want %v", resp.CostUSD, want)
		}
	}
	call(judge, "a", judgeCost)
	call(judge, "a", judgeCost)
	call(agent, "a", agentCost)
	call(judge, "b", judgeCost)
	call(agent, "", agentCost)
	srv.Fail(llmtest.Fault{Kind: llmtest.Status, Status: 400})
	r := ask("q")
	r.RunID = "b"
	if _, err := agent.Chat(t.Context(), r); err == nil {
		t.Fatal("want the 400")
	}

	for _, tt := range []struct {
		run  string
		want float64
	}{{"a", 2*judgeCost + agentCost}, {"b", judgeCost}, {"", 3*judgeCost + 2*agentCost}, {"unknown", 0}} {
		if got := judge.Cost(tt.run); !near(got, tt.want) {
			t.Errorf("Cost(%q) = %v, want %v", tt.run, got, tt.want)
		}
	}
	if got := ledger.Run("b"); got.Calls != 1 || got.Failures != 1 {
		t.Errorf("Run(b) = %+v, want 1 call and 1 failure", got)
	}
	tot := agent.Totals()
	tot.CostUSD = 0
	if diff := cmp.Diff(llm.Totals{Calls: 5, Failures: 1, InputTokens: 5000, OutputTokens: 2500}, tot); diff != "" {
		t.Errorf("Totals (-want +got):\n%s", diff)
	}
	ledger.Forget("a")
	if got := ledger.Cost("a"); got != 0 {
		t.Errorf("Cost(a) after Forget = %v, want 0", got)
	}
}

func TestLedgerBounded(t *testing.T) {
	l := llm.NewLedger()
	l.MaxRuns = 3
	c, _ := newClient(t, llm.OpenAI, nil, func(o *llm.Options) { o.Ledger = l; o.Model = "gemini-2.0-flash-001" })
	for i := range 5 {
		r := ask("q")
		r.RunID = fmt.Sprint("run", i)
		if _, err := c.Chat(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	if l.Cost("run0") != 0 || l.Cost("run1") != 0 || l.Cost("run4") == 0 {
		t.Errorf("ledger kept the wrong runs: run0 %v run1 %v run4 %v", l.Cost("run0"), l.Cost("run1"), l.Cost("run4"))
	}
	if l.Totals().Calls != 5 {
		t.Errorf("total calls = %d, want 5", l.Totals().Calls)
	}
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := llm.NewMetrics(reg)
	c, srv := newClient(t, llm.Gemini, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "YES", Usage: llm.Usage{InputTokens: 100, OutputTokens: 10}}
	}, func(o *llm.Options) {
		o.Metrics = m
		o.Name = "judge"
		o.Model = "gemini-2.0-flash-lite-001"
		o.MaxRetries = -1
		o.Breaker.Failures = 1
	})
	if _, err := c.Chat(t.Context(), ask("q")); err != nil {
		t.Fatal(err)
	}
	srv.Fail(llmtest.Fault{Kind: llmtest.Status, Status: 500})
	_, _ = c.Chat(t.Context(), ask("q"))
	_, _ = c.Chat(t.Context(), ask("q")) // refused: breaker open

	got := gather(t, reg)
	model := `model="gemini-2.0-flash-lite-001"`
	want := map[string]float64{
		`acu_llm_calls_total{` + model + `,outcome="ok",provider="gemini",role="judge"}`:           1,
		`acu_llm_calls_total{` + model + `,outcome="error",provider="gemini",role="judge"}`:        1,
		`acu_llm_calls_total{` + model + `,outcome="circuit_open",provider="gemini",role="judge"}`: 1,
		`acu_llm_tokens_total{direction="in",` + model + `,provider="gemini",role="judge"}`:        100,
		`acu_llm_tokens_total{direction="out",` + model + `,provider="gemini",role="judge"}`:       10,
		`acu_llm_cost_usd_total{` + model + `,provider="gemini",role="judge"}`:                     100*0.075/1e6 + 10*0.30/1e6,
		`acu_llm_call_duration_seconds_count{` + model + `,provider="gemini",role="judge"}`:        1,
		`acu_llm_breaker_state{provider="gemini",role="judge"}`:                                    2,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || !near(g, v) {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
}

// gather flattens a registry into "name{labels}" -> value.
func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			key := "{" + strings.Join(labels, ",") + "}"
			switch mf.GetType().String() {
			case "COUNTER":
				out[mf.GetName()+key] = m.GetCounter().GetValue()
			case "GAUGE":
				out[mf.GetName()+key] = m.GetGauge().GetValue()
			case "HISTOGRAM":
				out[mf.GetName()+"_count"+key] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

// TestKeyNeverLeaks: the key appears in no log line, no error, and no
// printed form of the options, even when the provider echoes it.
func TestKeyNeverLeaks(t *testing.T) {
	const key = "sk-secret-ABCDEF0123456789"
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			c, srv := newClient(t, p, nil, func(o *llm.Options) {
				o.APIKey = secret.String(key)
				o.Logger = log
				o.Breaker.Failures = 1
			})
			// The fake expects llmtest.Key, so this is refused; OpenAI's
			// message echoes the key sent.
			_, err1 := c.Chat(t.Context(), ask("q"))
			if err1 == nil {
				t.Fatal("wrong key accepted")
			}
			// The provider echoes the key in a server error too.
			srv.SetKey(key)
			srv.Fail(llmtest.Fault{Kind: llmtest.Status, Status: 500, Message: "upstream said: bad key " + key, Times: -1})
			_, _ = c.Chat(t.Context(), ask("q")) // refused by the open breaker
			c2, _ := llm.New(func() llm.Options {
				o := srv.Options()
				o.APIKey, o.Logger, o.MaxRetries = secret.String(key), log, 1
				return o
			}())
			_, err2 := c2.Chat(t.Context(), ask("q"))
			if !strings.Contains(err2.Error(), "upstream said: bad key REDACTED") {
				t.Errorf("error %q: want the provider's message with the key scrubbed", err2)
			}
			health := fmt.Sprintf("%+v", c.Health())
			opts := srv.Options()
			opts.APIKey = secret.String(key)
			printed := fmt.Sprintf("%v %+v %#v", opts, opts, opts)
			var ae *llm.APIError
			errors.As(err2, &ae)
			for name, s := range map[string]string{
				"logs": logs.String(), "error 1": err1.Error(), "error 2": err2.Error(),
				"health": health, "options": printed, "api error": fmt.Sprintf("%+v", ae),
			} {
				if strings.Contains(s, key) {
					t.Errorf("%s leak the key: %s", name, s)
				}
			}
			if !strings.Contains(logs.String(), "retrying") {
				t.Errorf("expected a debug line about retrying, logs:\n%s", logs.String())
			}
		})
	}
}

// TestProviderReportedCost: with usage accounting the request carries
// OpenRouter's "usage":{"include":true}, and the reply's usage.cost (credits,
// which are US dollars) is the call's cost, over the price table and for a
// model the table does not know.
func TestProviderReportedCost(t *testing.T) {
	for _, tc := range []struct {
		name, model string
	}{
		{"unpriced model", "some-lab/unpriced-model"},
		{"priced model", "google/gemini-2.0-flash-lite-001"}, // the provider's figure wins over the table
	} {
		t.Run(tc.name, func(t *testing.T) {
			ledger := llm.NewLedger()
			c, srv := newClient(t, llm.OpenAI, func(llmtest.Request) llmtest.Reply {
				return llmtest.Reply{Text: "YES", Usage: llm.Usage{InputTokens: 1e6, OutputTokens: 1e6}, CostUSD: llmtest.Cost(0.0123)}
			}, func(o *llm.Options) { o.Model, o.UsageAccounting, o.Ledger = tc.model, true, ledger })
			if err := c.CheckPriced(""); err != nil {
				t.Errorf("CheckPriced = %v, want nil: the endpoint reports its cost", err)
			}
			r := ask("q")
			r.RunID = "run"
			resp, err := c.Chat(t.Context(), r)
			if err != nil {
				t.Fatal(err)
			}
			if !srv.Last().UsageInclude || !bytes.Contains(srv.Last().Body, []byte(`"usage":{"include":true}`)) {
				t.Errorf("request body %s: want \"usage\":{\"include\":true}", srv.Last().Body)
			}
			if !resp.CostKnown || resp.CostSource != llm.CostProvider || !near(resp.CostUSD, 0.0123) {
				t.Errorf("cost = %v known %v from %q, want 0.0123 known from the provider", resp.CostUSD, resp.CostKnown, resp.CostSource)
			}
			if got := ledger.Run("run"); !near(got.CostUSD, 0.0123) || got.Unpriced != 0 {
				t.Errorf("ledger = %+v, want $0.0123 and no unpriced call", got)
			}
		})
	}
}

// TestUnpricedCostIsUnknown: a model with no price, on an endpoint that
// reports no cost and is not a local server, costs "unknown", not $0; the
// ledger and the metrics count it; CheckPriced says so before any call.
// A loopback endpoint called without a key is a local model server: free.
func TestUnpricedCostIsUnknown(t *testing.T) {
	reg := prometheus.NewRegistry()
	ledger := llm.NewLedger()
	c, srv := newClient(t, llm.OpenAI, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "YES", Usage: llm.Usage{InputTokens: 1e6, OutputTokens: 1e6}}
	}, func(o *llm.Options) {
		o.Model, o.Ledger, o.Metrics, o.Name = "some-lab/unpriced-model", ledger, llm.NewMetrics(reg), "planner"
	})
	if err := c.CheckPriced(""); !errors.Is(err, llm.ErrUnpriced) || !strings.Contains(err.Error(), "some-lab/unpriced-model") {
		t.Errorf("CheckPriced = %v, want ErrUnpriced naming the model", err)
	}
	r := ask("q")
	r.RunID = "run"
	resp, err := c.Chat(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(srv.Last().Body, []byte(`"usage"`)) {
		t.Errorf("request body %s asks for usage accounting, which only OpenRouter understands", srv.Last().Body)
	}
	if resp.CostKnown || resp.CostSource != llm.CostUnknown || resp.CostUSD != 0 {
		t.Errorf("cost = %v known %v from %q, want unknown", resp.CostUSD, resp.CostKnown, resp.CostSource)
	}
	if got := ledger.Run("run"); got.Unpriced != 1 || got.CostKnown() {
		t.Errorf("ledger = %+v, want 1 unpriced call and CostKnown false", got)
	}
	if got := gather(t, reg)[`acu_llm_unpriced_calls_total{model="some-lab/unpriced-model",provider="openai",role="planner"}`]; got != 1 {
		t.Errorf("acu_llm_unpriced_calls_total = %v, want 1", got)
	}

	srv.SetKey("")
	local, err := llm.New(llm.Options{Provider: llm.OpenAI, BaseURL: srv.URL, Model: "some-lab/unpriced-model", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := local.CheckPriced(""); err != nil {
		t.Errorf("local CheckPriced = %v, want nil (a loopback server without a key is free)", err)
	}
	resp, err = local.Chat(t.Context(), ask("q"))
	if err != nil {
		t.Fatal(err)
	}
	if !resp.CostKnown || resp.CostSource != llm.CostLocal || resp.CostUSD != 0 {
		t.Errorf("local cost = %v known %v from %q, want 0 known (local)", resp.CostUSD, resp.CostKnown, resp.CostSource)
	}
}
