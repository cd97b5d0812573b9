package runs

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	started     *prometheus.CounterVec
	ended       *prometheus.CounterVec
	events      prometheus.Counter
	batches     prometheus.Counter
	dropped     prometheus.Counter
	lagged      prometheus.Counter
	subscribers prometheus.Gauge
	live        prometheus.GaugeFunc
}

func newMetrics(r *Registry) *metrics {
	return &metrics{
		started: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "acu_runs_started_total", Help: "Runs started, by kind.",
		}, []string{"kind"}),
		ended: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "acu_runs_ended_total", Help: "Runs ended, by kind and final status.",
		}, []string{"kind", "status"}),
		events: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "acu_run_events_total", Help: "Progress events appended to live runs.",
		}),
		batches: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "acu_run_event_commits_total", Help: "Transactions that stored progress events (group commit: one may hold many events).",
		}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "acu_run_events_dropped_total", Help: "Events that arrived after their run's end and were dropped.",
		}),
		lagged: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "acu_run_subscriber_lagged_total", Help: "Times a subscriber's live queue overflowed (it then catches up from the store).",
		}),
		subscribers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "acu_run_subscribers", Help: "Open event subscriptions.",
		}),
		live: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "acu_runs_live", Help: "Runs live in this process.",
		}, func() float64 {
			r.mu.Lock()
			defer r.mu.Unlock()
			return float64(len(r.live))
		}),
	}
}

func (m *metrics) register(reg prometheus.Registerer) error {
	var errs []error
	for _, c := range []prometheus.Collector{m.started, m.ended, m.events, m.batches, m.dropped, m.lagged, m.subscribers, m.live} {
		errs = append(errs, reg.Register(c))
	}
	return errors.Join(errs...)
}
