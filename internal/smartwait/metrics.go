package smartwait

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// counter is a plain counter exported to Prometheus through a CounterFunc,
// so Stats can read it without the client model.
type counter struct{ atomic.Uint64 }

func (c *counter) Inc() { c.Add(1) }

// outcomes are the end statuses counted by acu_smartwait_resolutions_total.
var outcomes = []string{StatusResolved, StatusTimeout, StatusCancelled, StatusError}

// metrics are the engine's counters and Prometheus instruments.
type metrics struct {
	judgeCalls  counter
	judgeErrors counter
	unparsed    counter
	skipped     counter
	deduped     counter
	// deferred counts changes not judged at once because the last
	// judgement ended less than a poll interval ago (the poll judges the
	// newest frame then).
	deferred      counter
	captureErrors counter
	// persistRetries counts failed writes of an outcome (notification,
	// run end) that are being retried.
	persistRetries counter
	resolutions    map[string]*counter
	liveJobs       atomic.Int64
	detection      prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		resolutions: make(map[string]*counter, len(outcomes)),
		detection: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "acu_smartwait_detection_latency_seconds",
			Help:    "From the change notification (or poll) that led to a YES to the verdict.",
			Buckets: []float64{.05, .1, .2, .3, .4, .5, .75, 1, 1.5, 2, 3, 5, 10},
		}),
	}
	for _, o := range outcomes {
		m.resolutions[o] = new(counter)
	}
	if reg == nil {
		return m
	}
	cf := func(name, help string, c *counter) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(c.Load()) })
	}
	cs := []prometheus.Collector{
		cf("acu_smartwait_judge_calls_total", "Judge backend calls made by wait jobs.", &m.judgeCalls),
		cf("acu_smartwait_judge_errors_total", "Judge backend calls that failed.", &m.judgeErrors),
		cf("acu_smartwait_judge_unparsed_total", "Judge replies that were not a clean YES or NO (empty, refusal, garbage): retried, never cached.", &m.unparsed),
		cf("acu_smartwait_skipped_by_hash_total", "Evaluations skipped: content hash and criteria equal the job's last judgement.", &m.skipped),
		cf("acu_smartwait_changes_deferred_total", "Screen changes left to the next poll because the last judgement ended less than a poll interval ago.", &m.deferred),
		cf("acu_smartwait_deduped_total", "Verdicts reused from a judgement of the same (criteria, content hash).", &m.deduped),
		cf("acu_smartwait_outcome_write_retries_total", "Failed writes of a wait's outcome (notification, run end), each retried until it succeeds.", &m.persistRetries),
		cf("acu_smartwait_capture_errors_total", "Failed captures of a wait job's target.", &m.captureErrors),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "acu_smartwait_live_jobs", Help: "Wait jobs being watched."},
			func() float64 { return float64(m.liveJobs.Load()) }),
		m.detection,
	}
	for _, o := range outcomes {
		c := m.resolutions[o]
		cs = append(cs, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "acu_smartwait_resolutions_total", Help: "Wait jobs ended, by outcome.",
			ConstLabels: prometheus.Labels{"outcome": o},
		}, func() float64 { return float64(c.Load()) }))
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			if _, dup := err.(prometheus.AlreadyRegisteredError); !dup {
				panic(err) // programming error: clashing metric names
			}
		}
	}
	return m
}

func (m *metrics) resolved(status string) {
	if c, ok := m.resolutions[status]; ok {
		c.Inc()
	}
}

func (m *metrics) snapshot() Stats {
	s := Stats{
		JudgeCalls:    m.judgeCalls.Load(),
		JudgeErrors:   m.judgeErrors.Load(),
		Unparsed:      m.unparsed.Load(),
		SkippedByHash: m.skipped.Load(),
		Deduped:       m.deduped.Load(),
		Resolutions:   map[string]uint64{},
	}
	for o, c := range m.resolutions {
		if v := c.Load(); v > 0 {
			s.Resolutions[o] = v
		}
	}
	return s
}
