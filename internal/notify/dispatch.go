package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/acu-dev/acu/internal/store"
)

// Outbox is the durable queue the dispatcher delivers from; *store.DB
// satisfies it.
type Outbox interface {
	Enqueue(ctx context.Context, it store.OutboxItem) (id int64, inserted bool, err error)
	DueOutbox(ctx context.Context, now time.Time, limit int) ([]store.OutboxItem, error)
	// ClaimOutbox leases a due item for one attempt; false when another
	// dispatcher won it or it changed since it was read.
	ClaimOutbox(ctx context.Context, id int64, attempts int, owner string, now, until time.Time) (bool, error)
	RecordAttempt(ctx context.Context, id int64, ok bool, errMsg string, next time.Time) error
	// DeadLetter records a last failed attempt and sets the row aside.
	DeadLetter(ctx context.Context, id int64, errMsg string) (store.OutboxItem, error)
}

// DefaultMaxAttempts is how many attempts a row gets before it is
// dead-lettered: with the default backoff (1 s doubling to 5 min) about
// four hours of retries.
const DefaultMaxAttempts = 50

// Enqueuer is the part of Outbox that Enqueue needs.
type Enqueuer interface {
	Enqueue(ctx context.Context, it store.OutboxItem) (id int64, inserted bool, err error)
}

// payload is the JSON kept in an outbox row besides its message.
type payload struct {
	Event string `json:"event,omitempty"`
	Key   string `json:"key,omitempty"` // the notification's key, without ":<notifier>"
}

// Enqueue writes one outbox row per notifier for n, keyed
// "<n.Key>:<notifier>", so a notification enqueued twice (a retry of the
// caller, a replay after restart) is delivered once per notifier. It returns
// how many rows were new.
func Enqueue(ctx context.Context, ob Enqueuer, n Notification, notifiers []string) (inserted int, err error) {
	if n.Key == "" {
		return 0, errors.New("enqueue notification: empty key: give each notification a stable key such as <run id>:<event>")
	}
	p, err := json.Marshal(payload{Event: n.Event, Key: n.Key})
	if err != nil {
		return 0, fmt.Errorf("enqueue notification %q: %w", n.Key, err)
	}
	for _, name := range notifiers {
		_, ok, err := ob.Enqueue(ctx, store.OutboxItem{
			Key: n.Key + ":" + name, Notifier: name, RunID: n.RunID, Message: n.Message, Payload: p,
		})
		if err != nil {
			return inserted, fmt.Errorf("enqueue notification %q for %s: %w", n.Key, name, err)
		}
		if ok {
			inserted++
		}
	}
	return inserted, nil
}

// Backoff is the retry schedule: the delay before attempt n+1 after n failed
// attempts is Initial*Multiplier^(n-1), capped at Max, spread by ±Jitter.
// It depends only on the attempt count stored in the outbox, so it carries
// over restarts.
type Backoff struct {
	Initial    time.Duration // default 1s
	Max        time.Duration // default 5m
	Multiplier float64       // default 2
	Jitter     float64       // 0..1, default 0.5: a delay d becomes uniform in [d(1-J), d(1+J)]
}

func (b Backoff) withDefaults() Backoff {
	if b.Initial <= 0 {
		b.Initial = time.Second
	}
	if b.Max <= 0 {
		b.Max = 5 * time.Minute
	}
	if b.Max < b.Initial {
		b.Max = b.Initial
	}
	if b.Multiplier < 1 {
		b.Multiplier = 2
	}
	if b.Jitter <= 0 || b.Jitter > 1 {
		b.Jitter = 0.5
	}
	return b
}

// Delay returns the wait after failed attempts (1 or more), with r a
// uniform random number in [0, 1).
func (b Backoff) Delay(failed int, r float64) time.Duration {
	b = b.withDefaults()
	d := float64(b.Initial) * math.Pow(b.Multiplier, float64(max(failed, 1)-1))
	d = min(d, float64(b.Max))
	d *= 1 - b.Jitter + 2*b.Jitter*r
	return time.Duration(min(d, float64(b.Max)))
}

// DispatcherOptions configures a Dispatcher.
type DispatcherOptions struct {
	// Notifiers deliver rows by their Name. Rows naming another notifier
	// fail with ErrNoNotifier and are retried, so configuring it and
	// restarting delivers them.
	Notifiers []Notifier
	// PollInterval is the backstop for rows nobody kicked about (default 1s).
	PollInterval time.Duration
	// PerNotifier bounds concurrent deliveries per notifier (default 4), so
	// a hung notifier holds only its own slots.
	PerNotifier int
	// Batch is how many due rows one poll reads (default 256).
	Batch   int
	Backoff Backoff
	// MaxAttempts is how many failed attempts a row gets before it is
	// dead-lettered (DefaultMaxAttempts when 0; negative: retry forever). A
	// PermanentError dead-letters at once; a row naming an unconfigured
	// notifier is never dead-lettered (configuring it delivers the row).
	MaxAttempts int
	// Owner names this dispatcher in the outbox's leases: the process's
	// owner id (store.Owner), so a lease of a process that died is free as
	// soon as the process's own lease ends. Random when empty.
	Owner string
	// Lease is how long one attempt holds its item against every other
	// dispatcher on the database (default 5 min, longer than any notifier's
	// attempt timeout). A dispatcher killed mid-attempt leaves the item to
	// be delivered again once the lease (or its owner's) ends.
	Lease time.Duration
	// Clock is the time used for due times; default time.Now.
	Clock func() time.Time
	// Logger gets delivered (Info) and failed (Warn) attempts.
	Logger *slog.Logger
	// Registerer, when set, gets the acu_notify_* metrics.
	Registerer prometheus.Registerer
}

// Dispatcher delivers due outbox rows through their notifiers, at least
// once, recording every attempt in the outbox. All state lives in the
// outbox: a new Dispatcher on the same database resumes where a stopped or
// crashed one left off.
type Dispatcher struct {
	ob        Outbox
	notifiers map[string]Notifier
	names     []string
	poll      time.Duration
	per       int
	batch     int
	maxTries  int
	backoff   Backoff
	clock     func() time.Time
	log       *slog.Logger
	owner     string
	lease     time.Duration

	kick    chan struct{} // Kick: rows were enqueued
	done    chan struct{} // a delivery finished: slots freed
	running atomic.Bool

	mu       sync.Mutex
	inflight map[int64]bool
	slots    map[string]chan struct{}
	retryAt  time.Time // earliest retry this process scheduled
	// A due-rows read that began before an attempt was recorded may still
	// show that row as due: finished maps a row to the sequence number of its
	// last recorded attempt, so such stale rows are skipped, not redelivered.
	finishSeq uint64
	finished  map[int64]uint64

	attempts *prometheus.CounterVec
	duration *prometheus.HistogramVec
	dead     *prometheus.CounterVec
}

// NewDispatcher returns a dispatcher over ob; call Run to start it.
func NewDispatcher(ob Outbox, opts DispatcherOptions) (*Dispatcher, error) {
	d := &Dispatcher{
		ob:        ob,
		notifiers: make(map[string]Notifier, len(opts.Notifiers)),
		poll:      opts.PollInterval,
		per:       opts.PerNotifier,
		batch:     opts.Batch,
		maxTries:  opts.MaxAttempts,
		backoff:   opts.Backoff.withDefaults(),
		clock:     opts.Clock,
		log:       opts.Logger,
		owner:     opts.Owner,
		lease:     opts.Lease,
		kick:      make(chan struct{}, 1),
		done:      make(chan struct{}, 1),
		inflight:  make(map[int64]bool),
		finished:  make(map[int64]uint64),
		slots:     make(map[string]chan struct{}),
	}
	for _, n := range opts.Notifiers {
		name := n.Name()
		if _, dup := d.notifiers[name]; dup {
			return nil, fmt.Errorf("notify: two notifiers named %q: give each a distinct name", name)
		}
		d.notifiers[name] = n
		d.names = append(d.names, name)
	}
	if d.poll <= 0 {
		d.poll = time.Second
	}
	if d.per <= 0 {
		d.per = 4
	}
	if d.batch <= 0 {
		d.batch = 256
	}
	if d.clock == nil {
		d.clock = time.Now
	}
	if d.owner == "" {
		d.owner = fmt.Sprintf("dispatcher-%016x", rand.Uint64())
	}
	if d.lease <= 0 {
		d.lease = 5 * time.Minute
	}
	if d.maxTries == 0 {
		d.maxTries = DefaultMaxAttempts
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	d.attempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "acu_notify_attempts_total",
		Help: "Notification delivery attempts by notifier and result (delivered, failed).",
	}, []string{"notifier", "result"})
	d.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "acu_notify_attempt_duration_seconds",
		Help:    "Duration of notification delivery attempts by notifier.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"notifier"})
	d.dead = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "acu_notify_dead_letters_total",
		Help: "Notifications given up on (dead-lettered) by notifier: too many failed attempts, or a failure no retry can fix.",
	}, []string{"notifier"})
	if r := opts.Registerer; r != nil {
		for _, c := range []prometheus.Collector{d.attempts, d.duration, d.dead} {
			if err := r.Register(c); err != nil {
				return nil, fmt.Errorf("notify: register metrics: %w", err)
			}
		}
	}
	return d, nil
}

// Names returns the configured notifiers' names, in order.
func (d *Dispatcher) Names() []string { return slices.Clone(d.names) }

// Notify enqueues n for every configured notifier and wakes the dispatcher.
// It returns once the rows are durable; delivery happens in Run.
func (d *Dispatcher) Notify(ctx context.Context, n Notification) error {
	_, err := Enqueue(ctx, d.ob, n, d.names)
	d.Kick()
	return err
}

// Kick wakes the dispatcher to look for due rows now. It never blocks.
func (d *Dispatcher) Kick() {
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

// Run delivers until ctx is done, then cancels deliveries in flight, records
// them as interrupted (due again at once, so the next start delivers them)
// and returns nil. Errors reading the outbox are logged and retried.
func (d *Dispatcher) Run(ctx context.Context) error {
	if !d.running.CompareAndSwap(false, true) {
		return errors.New("notify: dispatcher already running: run one per process")
	}
	defer d.running.Store(false)
	var wg sync.WaitGroup
	defer wg.Wait()

	d.log.Info("notify dispatcher started", "notifiers", d.names)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		timer.Reset(d.dispatch(ctx, &wg))
		select {
		case <-ctx.Done():
			return nil
		case <-d.kick:
		case <-d.done:
		case <-timer.C:
		}
	}
}

// dispatch starts a delivery for every due row not in flight whose notifier
// has a free slot, and returns how long to sleep at most.
func (d *Dispatcher) dispatch(ctx context.Context, wg *sync.WaitGroup) time.Duration {
	d.mu.Lock()
	readSeq := d.finishSeq
	d.mu.Unlock()
	now := d.clock()
	items, err := d.ob.DueOutbox(ctx, now, d.batch)
	if err != nil {
		if ctx.Err() == nil {
			d.log.Warn("notify: read due notifications; retrying", "err", err)
		}
		return d.poll
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for id, seq := range d.finished {
		if seq <= readSeq {
			delete(d.finished, id) // recorded before this read began: the read saw it
		}
	}
	for _, it := range items {
		if d.inflight[it.ID] {
			continue
		}
		if _, stale := d.finished[it.ID]; stale {
			continue // recorded while this read ran; the next poll sees its new state
		}
		slot, ok := d.slots[it.Notifier]
		if !ok {
			slot = make(chan struct{}, d.per)
			d.slots[it.Notifier] = slot
		}
		select {
		case slot <- struct{}{}:
		default:
			continue // this notifier is busy; a finishing delivery wakes us
		}
		d.inflight[it.ID] = true
		wg.Add(1)
		go d.deliver(ctx, wg, it, slot)
	}
	wait := d.poll
	switch {
	case d.retryAt.IsZero():
	case !d.retryAt.After(now):
		d.retryAt = time.Time{} // due now: this poll has read it
	case d.retryAt.Sub(now) < wait:
		wait = d.retryAt.Sub(now)
	}
	return wait
}

func (d *Dispatcher) deliver(ctx context.Context, wg *sync.WaitGroup, it store.OutboxItem, slot chan struct{}) {
	defer wg.Done()
	var p payload
	if len(it.Payload) > 0 {
		_ = json.Unmarshal(it.Payload, &p) // a foreign payload only loses event and key
	}
	now := d.clock()
	won, err := d.ob.ClaimOutbox(ctx, it.ID, it.Attempts, d.owner, now, now.Add(d.lease))
	if err != nil || !won {
		if err != nil && ctx.Err() == nil {
			d.log.Warn("notify: claim a due notification; retrying", "key", it.Key, "err", err)
		}
		d.finish(it.ID, slot)
		return
	}
	dl := Delivery{
		ID: it.ID, Key: it.Key, BaseKey: p.Key, Notifier: it.Notifier, RunID: it.RunID,
		Event: p.Event, Message: it.Message, Attempt: it.Attempts + 1, Created: it.CreatedAt,
	}

	start := time.Now()
	err = d.attempt(ctx, dl)
	took := time.Since(start)
	d.duration.WithLabelValues(it.Notifier).Observe(took.Seconds())

	ok := err == nil
	var (
		errMsg string
		next   time.Time
	)
	if !ok {
		d.attempts.WithLabelValues(it.Notifier, "failed").Inc()
		errMsg = truncate(err.Error(), 2048)
		delay := d.backoff.Delay(dl.Attempt, rand.Float64())
		var ra *RetryAfterError
		if errors.As(err, &ra) {
			delay = min(max(delay, ra.After), d.backoff.Max)
		}
		if ctx.Err() != nil {
			errMsg = truncate("interrupted by shutdown: "+errMsg, 2048)
			delay = 0
		}
		next = d.clock().Add(delay)
	} else {
		d.attempts.WithLabelValues(it.Notifier, "delivered").Inc()
	}

	dead := !ok && ctx.Err() == nil && d.giveUp(dl.Attempt, err)

	// Record even when shutting down: the attempt happened.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	var rerr error
	if dead {
		_, rerr = d.ob.DeadLetter(rctx, it.ID, errMsg)
	} else {
		rerr = d.ob.RecordAttempt(rctx, it.ID, ok, errMsg, next)
	}
	cancel()

	attrs := []any{"notifier", it.Notifier, "key", it.Key, "run_id", it.RunID, "attempt", dl.Attempt, "took", took}
	switch {
	case rerr != nil && dead:
		d.log.Error("notify: could not dead-letter a notification; retrying", append(attrs, "err", rerr, "attempt_err", errMsg)...)
	case dead:
		d.dead.WithLabelValues(it.Notifier).Inc()
		d.log.Error("notification dead-lettered: giving up; see `acu doctor`", append(attrs, "err", errMsg)...)
	case rerr != nil && ok:
		d.log.Error("notify: delivered but could not record it; it will be delivered again", append(attrs, "err", rerr)...)
	case rerr != nil:
		d.log.Error("notify: could not record a failed attempt; retrying", append(attrs, "err", rerr, "attempt_err", errMsg)...)
	case ok:
		d.log.Info("notification delivered", attrs...)
	default:
		d.log.Warn("notification attempt failed; will retry", append(attrs, "err", errMsg, "next_at", next)...)
	}

	d.mu.Lock()
	if !ok && !dead && (d.retryAt.IsZero() || next.Before(d.retryAt)) {
		d.retryAt = next
	}
	d.mu.Unlock()
	d.finish(it.ID, slot)
}

// finish takes item id out of flight, frees its notifier slot and wakes the
// loop.
func (d *Dispatcher) finish(id int64, slot chan struct{}) {
	d.mu.Lock()
	delete(d.inflight, id)
	d.finishSeq++
	d.finished[id] = d.finishSeq
	d.mu.Unlock()
	<-slot
	select {
	case d.done <- struct{}{}:
	default:
	}
}

// giveUp reports whether a failed attempt number n should dead-letter its
// row: a PermanentError, or the last allowed attempt. A row whose notifier
// is not configured is kept: configuring it and restarting delivers it.
func (d *Dispatcher) giveUp(n int, err error) bool {
	if errors.Is(err, ErrNoNotifier) {
		return false
	}
	if _, perm := errors.AsType[*PermanentError](err); perm {
		return true
	}
	return d.maxTries > 0 && n >= d.maxTries
}

// attempt runs one delivery, turning a notifier's panic into an error.
func (d *Dispatcher) attempt(ctx context.Context, dl Delivery) (err error) {
	n, ok := d.notifiers[dl.Notifier]
	if !ok {
		return fmt.Errorf("notifier %q: %w (configured: %v); configure it, and the notification is delivered at the next attempt", dl.Notifier, ErrNoNotifier, d.names)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("notifier %q panicked: %v", dl.Notifier, r)
			d.log.Error("notify: notifier panicked", "notifier", dl.Notifier, "panic", r, "stack", string(debug.Stack()))
		}
	}()
	return n.Notify(ctx, dl)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary.
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
