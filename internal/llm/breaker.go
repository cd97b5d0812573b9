package llm

import (
	"sync"
	"time"
)

// BreakerOptions tune a client's circuit breaker.
type BreakerOptions struct {
	// Failures is how many consecutive failed calls open the breaker;
	// 0 means 5, negative disables the breaker.
	Failures int
	// CoolDown is how long the breaker stays open before one probe call is
	// let through (half-open); 0 means 30 s.
	CoolDown time.Duration
}

// Breaker states, as Health reports them.
const (
	StateClosed   = "closed"
	StateOpen     = "open"
	StateHalfOpen = "half-open"
)

// Health is a client's breaker state, for /health and acu doctor.
type Health struct {
	State               string // StateClosed, StateOpen or StateHalfOpen
	ConsecutiveFailures int
	OpenUntil           time.Time // zero unless open
	LastError           string    // the last failure, keys scrubbed; kept after recovery
}

// breaker counts consecutive failed calls. Closed lets every call through;
// open refuses all until openUntil; then half-open lets exactly one probe
// through, whose success closes it and whose failure opens it again.
type breaker struct {
	threshold int
	coolDown  time.Duration

	mu        sync.Mutex
	state     string
	failures  int
	openUntil time.Time
	probing   bool
	lastErr   string
}

func newBreaker(o BreakerOptions) *breaker {
	b := &breaker{threshold: o.Failures, coolDown: o.CoolDown, state: StateClosed}
	if b.threshold == 0 {
		b.threshold = 5
	}
	if b.coolDown <= 0 {
		b.coolDown = 30 * time.Second
	}
	return b
}

// allow reports whether a call may go ahead; probe is true when the call is
// the half-open probe, which must end in success, failure or release.
func (b *breaker) allow(now time.Time) (probe bool, ok bool) {
	if b.threshold < 0 {
		return false, true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case StateClosed:
		return false, true
	case StateOpen:
		if now.Before(b.openUntil) {
			return false, false
		}
		b.state = StateHalfOpen
	}
	if b.probing {
		return false, false
	}
	b.probing = true
	return true, true
}

// success records a call that reached a healthy backend; it reports whether
// the state changed.
func (b *breaker) success() (changed bool) {
	if b.threshold < 0 {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	changed = b.state != StateClosed
	b.state, b.failures, b.probing, b.openUntil = StateClosed, 0, false, time.Time{}
	return changed
}

// failure records a failed call; it reports whether the breaker opened.
func (b *breaker) failure(now time.Time, msg string) (opened bool) {
	if b.threshold < 0 {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures++
	b.lastErr = msg
	if b.state == StateHalfOpen || (b.state == StateClosed && b.failures >= b.threshold) {
		b.state, b.probing, b.openUntil = StateOpen, false, now.Add(b.coolDown)
		return true
	}
	return false
}

// release ends a call that says nothing about the backend (the caller gave
// up); a half-open probe slot is handed back.
func (b *breaker) release(probe bool) {
	if !probe || b.threshold < 0 {
		return
	}
	b.mu.Lock()
	b.probing = false
	b.mu.Unlock()
}

func (b *breaker) health(now time.Time) Health {
	b.mu.Lock()
	defer b.mu.Unlock()
	h := Health{State: b.state, ConsecutiveFailures: b.failures, LastError: b.lastErr}
	if b.state == StateOpen {
		if now.Before(b.openUntil) {
			h.OpenUntil = b.openUntil
		} else {
			h.State = StateHalfOpen
		}
	}
	return h
}

// stateValue is the breaker gauge's value: 0 closed, 1 half-open, 2 open.
func stateValue(s string) float64 {
	switch s {
	case StateHalfOpen:
		return 1
	case StateOpen:
		return 2
	}
	return 0
}
