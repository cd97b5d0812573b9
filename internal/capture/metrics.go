package capture

import (
	"sort"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

type stats struct {
	shm, getImage, reused, joined, unchanged, recycled, damageReads, reconnects, damage, nanos atomic.Uint64
	keptBands, wholeBands                                                                      atomic.Uint64
}

func (st *stats) observe(viaSHM bool, d time.Duration) {
	if viaSHM {
		st.shm.Add(1)
	} else {
		st.getImage.Add(1)
	}
	st.nanos.Add(uint64(d))
}

// Stats are a display's capture counters since the hub started.
type Stats struct {
	Display string
	// Captures is how many times the screen was read (SHM + GetImage).
	Captures, SHM, GetImage uint64
	// Reused counts calls served from the cached frame because XDamage
	// reported no change; Joined counts calls that joined a capture in
	// flight; Unchanged counts reads whose pixels equalled the cached frame.
	Reused, Joined, Unchanged uint64
	// Recycled counts reads copied into the buffer of a frame nothing
	// referenced any more, instead of a new one.
	Recycled uint64
	// DamageReads counts reads of only the rows XDamage reported changed
	// (the rest of the screen kept from earlier reads).
	DamageReads uint64
	// KeptBands counts the bands (frame.HashBand rows) of whole reads
	// found unchanged since the read before, out of WholeBands read
	// whole: by their bytes, with the Go hash (they keep their hashes
	// instead of being hashed again), or by their hashes, with the
	// vectorised one (frame.FastHash); either way they are not copied
	// into a recycled buffer that holds them already.
	KeptBands, WholeBands uint64
	Reconnects            uint64
	DamageEvents          uint64
	// CaptureTime is the total time spent reading the screen (with the
	// privacy mask and hash).
	CaptureTime time.Duration
}

// Stats returns the counters of every display the hub has used, by name.
func (h *Hub) Stats() []Stats {
	h.mu.Lock()
	out := make([]Stats, 0, len(h.sources))
	for name, s := range h.sources {
		st := &s.st
		shm, gi := st.shm.Load(), st.getImage.Load()
		out = append(out, Stats{Display: name, Captures: shm + gi, SHM: shm, GetImage: gi,
			Reused: st.reused.Load(), Joined: st.joined.Load(), Unchanged: st.unchanged.Load(),
			Recycled: st.recycled.Load(), DamageReads: st.damageReads.Load(),
			KeptBands: st.keptBands.Load(), WholeBands: st.wholeBands.Load(),
			Reconnects: st.reconnects.Load(), DamageEvents: st.damage.Load(),
			CaptureTime: time.Duration(st.nanos.Load())})
	}
	h.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Display < out[j].Display })
	return out
}

// StatsFor returns one display's counters (zero if never used).
func (h *Hub) StatsFor(display string) Stats {
	for _, s := range h.Stats() {
		if s.Display == display {
			return s
		}
	}
	return Stats{Display: display}
}

var (
	descReads      = prometheus.NewDesc("acu_capture_reads_total", "Screen reads by method (shm, getimage).", []string{"display", "method"}, nil)
	descReused     = prometheus.NewDesc("acu_capture_reused_total", "Captures served from the cached frame (no damage since).", []string{"display"}, nil)
	descJoined     = prometheus.NewDesc("acu_capture_joined_total", "Captures that joined a capture in flight.", []string{"display"}, nil)
	descUnchanged  = prometheus.NewDesc("acu_capture_unchanged_total", "Screen reads whose pixels equalled the cached frame.", []string{"display"}, nil)
	descRecycled   = prometheus.NewDesc("acu_capture_recycled_total", "Screen reads copied into a recycled buffer (one no frame referenced any more).", []string{"display"}, nil)
	descDamageRead = prometheus.NewDesc("acu_capture_damage_reads_total", "Screen reads of only the rows XDamage reported changed.", []string{"display"}, nil)
	descReconnects = prometheus.NewDesc("acu_capture_reconnects_total", "Reconnections after the X server went away.", []string{"display"}, nil)
	descDamage     = prometheus.NewDesc("acu_capture_damage_events_total", "XDamage events received.", []string{"display"}, nil)
	descSeconds    = prometheus.NewDesc("acu_capture_read_seconds_total", "Time spent reading the screen.", []string{"display"}, nil)
)

type collector struct{ h *Hub }

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descReads, descReused, descJoined, descUnchanged, descRecycled, descDamageRead, descReconnects, descDamage, descSeconds} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.h.Stats() {
		ch <- prometheus.MustNewConstMetric(descReads, prometheus.CounterValue, float64(s.SHM), s.Display, "shm")
		ch <- prometheus.MustNewConstMetric(descReads, prometheus.CounterValue, float64(s.GetImage), s.Display, "getimage")
		ch <- prometheus.MustNewConstMetric(descReused, prometheus.CounterValue, float64(s.Reused), s.Display)
		ch <- prometheus.MustNewConstMetric(descJoined, prometheus.CounterValue, float64(s.Joined), s.Display)
		ch <- prometheus.MustNewConstMetric(descUnchanged, prometheus.CounterValue, float64(s.Unchanged), s.Display)
		ch <- prometheus.MustNewConstMetric(descRecycled, prometheus.CounterValue, float64(s.Recycled), s.Display)
		ch <- prometheus.MustNewConstMetric(descDamageRead, prometheus.CounterValue, float64(s.DamageReads), s.Display)
		ch <- prometheus.MustNewConstMetric(descReconnects, prometheus.CounterValue, float64(s.Reconnects), s.Display)
		ch <- prometheus.MustNewConstMetric(descDamage, prometheus.CounterValue, float64(s.DamageEvents), s.Display)
		ch <- prometheus.MustNewConstMetric(descSeconds, prometheus.CounterValue, s.CaptureTime.Seconds(), s.Display)
	}
}
