package llm

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the model clients' Prometheus series. Create them once per
// registry and share them between clients; a nil *Metrics records nothing.
//
//	acu_llm_calls_total{role,provider,model,outcome}    outcome: ok, error, canceled, circuit_open
//	acu_llm_retries_total{role,provider,model}          attempts after the first
//	acu_llm_tokens_total{role,provider,model,direction} direction: in, out
//	acu_llm_cost_usd_total{role,provider,model}         calls whose cost is known
//	acu_llm_unpriced_calls_total{role,provider,model}   successful calls whose cost is unknown
//	acu_llm_call_duration_seconds{role,provider,model}  successful attempts
//	acu_llm_breaker_state{role,provider}                0 closed, 1 half-open, 2 open
type Metrics struct {
	calls    *prometheus.CounterVec
	retries  *prometheus.CounterVec
	tokens   *prometheus.CounterVec
	cost     *prometheus.CounterVec
	unpriced *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	breaker  *prometheus.GaugeVec
}

// Outcome label values of acu_llm_calls_total.
const (
	outcomeOK       = "ok"
	outcomeError    = "error"
	outcomeCanceled = "canceled"
	outcomeOpen     = "circuit_open"
)

// NewMetrics creates the series and registers them with reg (when non-nil).
// It panics if they are already registered there, like MustRegister.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "acu", Subsystem: "llm", Name: "calls_total",
			Help: "Model calls by role, provider, model and outcome (ok, error, canceled, circuit_open).",
		}, []string{"role", "provider", "model", "outcome"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "acu", Subsystem: "llm", Name: "retries_total",
			Help: "Model call attempts after the first.",
		}, []string{"role", "provider", "model"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "acu", Subsystem: "llm", Name: "tokens_total",
			Help: "Tokens reported by the provider, by direction (in, out).",
		}, []string{"role", "provider", "model", "direction"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "acu", Subsystem: "llm", Name: "cost_usd_total",
			Help: "Cost of model calls in US dollars: the provider's own figure, else the price table's (unpriced calls are left out).",
		}, []string{"role", "provider", "model"}),
		unpriced: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "acu", Subsystem: "llm", Name: "unpriced_calls_total",
			Help: "Successful model calls whose cost is unknown: no provider figure and no price (set ACU_MODEL_PRICES).",
		}, []string{"role", "provider", "model"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "acu", Subsystem: "llm", Name: "call_duration_seconds",
			Help:    "Wall time of successful model call attempts.",
			Buckets: []float64{0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 20, 60},
		}, []string{"role", "provider", "model"}),
		breaker: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "acu", Subsystem: "llm", Name: "breaker_state",
			Help: "Circuit breaker state per client: 0 closed, 1 half-open, 2 open.",
		}, []string{"role", "provider"}),
	}
	if reg != nil {
		reg.MustRegister(m.calls, m.retries, m.tokens, m.cost, m.unpriced, m.latency, m.breaker)
	}
	return m
}

func (m *Metrics) observeCall(role, provider, model, outcome string, attempts int, u Usage, cost float64, latency time.Duration) {
	if m == nil {
		return
	}
	m.calls.WithLabelValues(role, provider, model, outcome).Inc()
	if attempts > 1 {
		m.retries.WithLabelValues(role, provider, model).Add(float64(attempts - 1))
	}
	if outcome != outcomeOK {
		return
	}
	m.tokens.WithLabelValues(role, provider, model, "in").Add(float64(u.InputTokens))
	m.tokens.WithLabelValues(role, provider, model, "out").Add(float64(u.OutputTokens))
	m.cost.WithLabelValues(role, provider, model).Add(cost)
	m.latency.WithLabelValues(role, provider, model).Observe(latency.Seconds())
}

func (m *Metrics) observeUnpriced(role, provider, model string) {
	if m == nil {
		return
	}
	m.unpriced.WithLabelValues(role, provider, model).Inc()
}

func (m *Metrics) setBreaker(role, provider, state string) {
	if m == nil {
		return
	}
	m.breaker.WithLabelValues(role, provider).Set(stateValue(state))
}
