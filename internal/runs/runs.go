package runs

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acu-dev/acu/internal/store"
	"github.com/prometheus/client_golang/prometheus"
)

// Run statuses. A live run is StatusRunning, or StatusOrphaned while its
// host's daemon is gone (a fleet); the others are final.
const (
	StatusRunning   = "running"
	StatusOrphaned  = store.StatusOrphaned
	StatusResolved  = "resolved"
	StatusCompleted = "completed"
	StatusTimeout   = "timeout"
	StatusCancelled = "cancelled"
	StatusError     = "error" // ends with lifecycle phase "error"
)

// StreamLifecycle is the stream carrying each run's start and end. Only the
// registry writes to it.
const StreamLifecycle = "lifecycle"

// StreamOwnership carries a run's changes of hands in a fleet (phase
// orphaned; see Ownership).
const StreamOwnership = store.StreamOwnership

// Ownership phases: a run created on one daemon for another host is
// claimed by that host's daemon; a run whose host's daemon died is
// orphaned, and resumed when that host's next daemon takes it back.
const (
	PhaseClaimed  = "claimed"
	PhaseOrphaned = "orphaned"
	PhaseResumed  = "resumed"
)

// Lifecycle phases.
const (
	PhaseStart = "start"
	PhaseEnd   = "end"
	PhaseError = "error"
)

// RestartMessage is the error of a run that Recover ended because no owner
// claimed it after a restart.
const RestartMessage = "daemon restarted while the run was live"

// OwnerLostMessage is the error of a run that Recover ended because the
// process that owned it (program, pid, host) stopped while it was live.
func OwnerLostMessage(program string, pid int, host string) string {
	return fmt.Sprintf("its owner process stopped while the run was live (acu %s, pid %d on %s)", program, pid, host)
}

// Errors callers branch on. ErrNotFound and ErrEnded are the store's, so
// errors.Is works whichever layer returned them.
var (
	ErrNotFound    = store.ErrNotFound
	ErrEnded       = store.ErrEnded
	ErrExists      = store.ErrExists
	ErrWaitTimeout = errors.New("wait timed out before the run ended")
)

// Run is one unit of work. It is live while EndedAt is zero.
type Run struct {
	ID         string          `json:"id"`
	Kind       string          `json:"kind"`
	SessionKey string          `json:"sessionKey,omitempty"`
	TaskID     string          `json:"taskId,omitempty"`
	Status     string          `json:"status"`
	StartedAt  time.Time       `json:"startedAt"`
	EndedAt    time.Time       `json:"endedAt,omitzero"`
	Error      string          `json:"error,omitempty"`
	Spec       json.RawMessage `json:"spec,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	UpdatedAt  time.Time       `json:"updatedAt"`
	// Owner is the id of the process instance that owns the live run (see
	// Own); empty for runs of a registry that owns nothing.
	Owner string `json:"owner,omitempty"`
	// Host is the host whose daemon runs it (see StartOptions.Host).
	Host string `json:"host,omitempty"`
	// Creator is the principal whose request started the run (see
	// WithCreator); empty when none did.
	Creator string `json:"creator,omitempty"`
}

// Live reports whether the run has not ended.
func (r Run) Live() bool { return r.EndedAt.IsZero() }

// Event is one entry of the event stream.
type Event struct {
	Cursor int64           `json:"cursor"`
	RunID  string          `json:"runId"`
	Seq    int64           `json:"seq"`
	Stream string          `json:"stream"`
	At     time.Time       `json:"at"`
	Data   json.RawMessage `json:"data,omitempty"`
}

// Lifecycle is the data of a lifecycle event.
type Lifecycle struct {
	Phase     string    `json:"phase"`
	StartedAt time.Time `json:"startedAt"`
	EndedAt   time.Time `json:"endedAt,omitzero"`
	Status    string    `json:"status"`
	Error     string    `json:"error,omitempty"`
}

// Result is what Wait returns: how the run ended.
type Result struct {
	RunID     string    `json:"runId"`
	Status    string    `json:"status"`
	StartedAt time.Time `json:"startedAt"`
	EndedAt   time.Time `json:"endedAt"`
	Error     string    `json:"error,omitempty"`
}

// Store is what the registry needs from storage; *store.DB satisfies it.
type Store interface {
	CreateRunEvent(ctx context.Context, r store.Run, ev store.Event) (store.Event, error)
	AppendEvents(ctx context.Context, evs []store.Event) ([]error, error)
	EndRunEvent(ctx context.Context, end store.RunEnd, ev store.Event) (store.Run, store.Event, error)
	UpdateRunSpec(ctx context.Context, id string, spec json.RawMessage) error
	GetRun(ctx context.Context, id string) (store.Run, error)
	ListRuns(ctx context.Context, f store.RunFilter) ([]store.Run, error)
	CountRuns(ctx context.Context, f store.RunFilter) (int, error)
	LiveRuns(ctx context.Context) ([]store.Run, error)
	UnownedRuns(ctx context.Context, now time.Time, host string) ([]store.Run, error)
	TakeRun(ctx context.Context, id, from, to string) error
	TakeUnowned(ctx context.Context, ids []string, to string, evs map[string]store.Event) (map[string]bool, []store.Event, error)
	RegisterOwner(ctx context.Context, o store.Owner) error
	RenewOwner(ctx context.Context, id string, until time.Time) error
	StopOwner(ctx context.Context, id string) error
	ExpireOwner(ctx context.Context, id string) error
	GetOwner(ctx context.Context, id string) (store.Owner, error)
	Owners(ctx context.Context, now time.Time) ([]store.Owner, error)
	OrphanRun(ctx context.Context, id, from string, ev store.Event) (store.Run, store.Event, error)
	LiveOwners(ctx context.Context, now time.Time) ([]store.Owner, error)
	EventsAfter(ctx context.Context, cursor int64, f store.EventFilter) ([]store.Event, error)
	LastCursor(ctx context.Context) (int64, error)
}

// Options configures a Registry. The zero value is usable.
type Options struct {
	Logger *slog.Logger     // discarded when nil
	Clock  func() time.Time // time.Now when nil
	// Epoch identifies this process's registry to clients, so they notice a
	// restart; random when empty.
	Epoch string
	// Registerer receives the registry's metrics; none are registered when nil.
	Registerer prometheus.Registerer
	// SubscriberBuffer is each subscriber's live queue length (default 256).
	// A subscriber that falls further behind catches up from the store.
	SubscriberBuffer int
	// OnOrphaned is called once, fleet-wide, for each run this registry
	// marks orphaned (its host's daemon died), with the owner that was
	// lost: the daemon notifies it.
	OnOrphaned func(run Run, lost Owner)
	// OnEndedElsewhere is called when a run live in this process is ended
	// by another process (a cancel through another daemon, or the offline
	// CLI): its engine stops working on it.
	OnEndedElsewhere func(run Run)
}

// Registry owns the live runs of this process and their event stream.
type Registry struct {
	st     Store
	log    *slog.Logger
	clock  func() time.Time
	epoch  string
	subBuf int
	m      *metrics

	// wmu is held across each store write and the publication of its event,
	// so events reach subscribers in cursor order.
	wmu sync.Mutex
	// published is the cursor up to which every event, this process's and
	// others', has been published (unknownCursor before the first); see
	// tail.go. Guarded by wmu.
	published int64

	mu      sync.Mutex  // guards the maps below and owner
	owner   store.Owner // set by Own
	live    map[string]Run
	kick    chan struct{} // Kick: Sweep now
	wake    chan struct{} // WakeTail: read other processes' events now
	waiters map[string]*waiter
	subs    map[*sub]struct{}

	dropped atomic.Uint64

	onOrphan func(Run, Owner)
	onElse   func(Run)

	// Group commit of Emit: events queue here while a leader commits the
	// previous batch in one transaction.
	qmu     sync.Mutex
	queue   []*pending
	leading bool
}

// pending is one queued Emit.
type pending struct {
	ev   store.Event
	err  error
	lead bool          // promoted to commit the next batch
	wake chan struct{} // committed, or promoted
}

type waiter struct {
	done chan struct{} // closed on the run's end
	run  Run           // the ended run, set before done is closed
}

// New returns a registry over st.
func New(st Store, opts Options) *Registry {
	r := &Registry{
		st:      st,
		log:     opts.Logger,
		clock:   opts.Clock,
		epoch:   opts.Epoch,
		subBuf:  opts.SubscriberBuffer,
		live:    map[string]Run{},
		waiters: map[string]*waiter{},
		subs:    map[*sub]struct{}{},
		kick:    make(chan struct{}, 1),
		wake:    make(chan struct{}, 1),

		published: unknownCursor,
		onOrphan:  opts.OnOrphaned,
		onElse:    opts.OnEndedElsewhere,
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.clock == nil {
		r.clock = time.Now
	}
	if r.epoch == "" {
		r.epoch = randomID(12)
	}
	if r.subBuf <= 0 {
		r.subBuf = 256
	}
	r.m = newMetrics(r)
	if opts.Registerer != nil {
		if err := r.m.register(opts.Registerer); err != nil {
			r.log.Warn("run metrics not registered", slog.Any("error", err))
		}
	}
	return r
}

// Epoch identifies this process's registry.
func (r *Registry) Epoch() string { return r.epoch }

// Dropped returns how many events arrived after their run's end and were
// dropped.
func (r *Registry) Dropped() uint64 { return r.dropped.Load() }

func (r *Registry) now() time.Time { return r.clock().UTC().Truncate(time.Millisecond) }

// StartOptions describes a new run.
type StartOptions struct {
	ID         string // generated when empty; letters, digits, '_', '-', '.', at most 64
	Kind       string // required: "wait", "agent", "task", ...
	SessionKey string
	TaskID     string
	Spec       any // marshalled to JSON; json.RawMessage is stored as is
	// Host, when it names another host than this registry's owner, starts
	// the run there: it is stored unowned for that host's daemon to claim
	// (through its Recover, woken at once on PostgreSQL) and is not live in
	// this process. Empty: this registry's host.
	Host string
	// Creator is who started the run; empty: CreatorOf(ctx).
	Creator string
}

type creatorKey struct{}

// WithCreator marks ctx as a request of principal id (a token's id): runs
// started under it record id as their creator, whose token may then cancel
// or change them without a wider scope.
func WithCreator(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, creatorKey{}, id)
}

// CreatorOf is the principal WithCreator put in ctx, or "".
func CreatorOf(ctx context.Context) string {
	id, _ := ctx.Value(creatorKey{}).(string)
	return id
}

// Compiled on first use, not at start-up: every acu process would pay for
// them, screenshots included.
var (
	idRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`) })
	kindRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9]{0,11}$`) })
	b32    = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)
)

func randomID(n int) string {
	var b [10]byte
	rand.Read(b[:])
	return b32.EncodeToString(b[:])[:n]
}

// NewID returns a fresh run id for kind.
func NewID(kind string) string {
	prefix := "run"
	if kindRE().MatchString(kind) {
		prefix = kind
	}
	return prefix + "_" + randomID(12)
}

// Start persists a new live run with its lifecycle start event (seq 1) and
// registers it.
func (r *Registry) Start(ctx context.Context, o StartOptions) (Run, error) {
	if o.Kind == "" {
		return Run{}, errors.New("start run: kind is required")
	}
	if o.ID != "" && !idRE().MatchString(o.ID) {
		return Run{}, fmt.Errorf("start run %q: id must be 1-64 letters, digits, '_', '-' or '.'", o.ID)
	}
	spec, err := marshal(o.Spec)
	if err != nil {
		return Run{}, fmt.Errorf("start %s run: spec: %w", o.Kind, err)
	}
	for attempt := 0; ; attempt++ {
		id := o.ID
		if id == "" {
			id = NewID(o.Kind)
		}
		now := r.now()
		self := r.self()
		run := Run{ID: id, Kind: o.Kind, SessionKey: o.SessionKey, TaskID: o.TaskID, Status: StatusRunning,
			StartedAt: now, Spec: spec, UpdatedAt: now, Owner: self.ID, Host: self.Host, Creator: o.Creator}
		if run.Creator == "" {
			run.Creator = CreatorOf(ctx)
		}
		remote := o.Host != "" && o.Host != self.Host
		if remote {
			run.Owner, run.Host = "", o.Host
		}
		data, _ := json.Marshal(Lifecycle{Phase: PhaseStart, StartedAt: now, Status: StatusRunning})

		r.wmu.Lock()
		ev, err := r.st.CreateRunEvent(ctx, store.Run(run), store.Event{Stream: StreamLifecycle, At: now, Data: data})
		if err != nil {
			r.wmu.Unlock()
			if errors.Is(err, ErrExists) && o.ID == "" && attempt < 3 {
				continue // a random id collided
			}
			return Run{}, fmt.Errorf("start %s run: %w", o.Kind, err)
		}
		r.publishLocalLocked(ctx, Event(ev), func() {
			if !remote {
				r.live[id] = run
			}
		})
		r.wmu.Unlock()
		if remote {
			r.wakeHost(ctx, o.Host)
		}

		r.m.started.WithLabelValues(run.Kind).Inc()
		r.log.LogAttrs(ctx, slog.LevelInfo, "run started", slog.String(keyRunID, id), slog.String(keyKind, run.Kind))
		return run, nil
	}
}

// Emit appends a progress event to a live run's stream and delivers it to
// subscribers once it is persisted. After the run's end the event is
// dropped, counted, and ErrEnded returned; callers may ignore that error.
// Concurrent Emits share transactions (group commit); ctx is checked on
// entry, after which the call waits for its batch's commit.
func (r *Registry) Emit(ctx context.Context, runID, stream string, data any) (Event, error) {
	if stream == "" || stream == StreamLifecycle {
		return Event{}, fmt.Errorf("emit to run %q: stream must be set and not %q", runID, StreamLifecycle)
	}
	raw, err := marshal(data)
	if err != nil {
		return Event{}, fmt.Errorf("emit %s event to run %q: %w", stream, runID, err)
	}
	r.mu.Lock()
	_, live := r.live[runID]
	r.mu.Unlock()
	if !live {
		// Not live here: unknown, ended, or left live by a previous process
		// and not yet recovered. Read before taking the write lock so a
		// stream of late events costs no write.
		run, err := r.st.GetRun(ctx, runID)
		if err != nil {
			return Event{}, fmt.Errorf("emit %s event to run %q: %w", stream, runID, err)
		}
		if !run.Live() {
			return Event{}, r.drop(ctx, runID, stream)
		}
	}

	if err := ctx.Err(); err != nil {
		return Event{}, fmt.Errorf("emit %s event to run %q: %w", stream, runID, err)
	}
	sev, err := r.append(store.Event{RunID: runID, Stream: stream, At: r.now(), Data: raw})
	if err != nil {
		if errors.Is(err, ErrEnded) {
			return Event{}, r.drop(ctx, runID, stream)
		}
		return Event{}, err
	}
	r.m.events.Inc()
	return Event(sev), nil
}

// append persists and publishes ev with group commit: the first writer to
// find no commit in progress leads, committing everything queued so far in
// one transaction; writers arriving meanwhile queue for the next batch,
// which the first of them leads. Each returns once its own event is
// committed and published. The transaction is not tied to any caller's
// context, since it carries other callers' events.
func (r *Registry) append(ev store.Event) (store.Event, error) {
	p := &pending{ev: ev, wake: make(chan struct{}, 1)}
	r.qmu.Lock()
	r.queue = append(r.queue, p)
	if r.leading {
		r.qmu.Unlock()
		<-p.wake
		if !p.lead {
			return p.ev, p.err
		}
		r.qmu.Lock()
	} else {
		r.leading = true
	}
	batch := r.queue
	if len(batch) > maxBatch {
		batch, r.queue = batch[:maxBatch:maxBatch], slices.Clone(batch[maxBatch:])
	} else {
		r.queue = nil
	}
	r.qmu.Unlock()

	r.commit(batch)

	r.qmu.Lock()
	if len(r.queue) > 0 {
		next := r.queue[0]
		next.lead = true
		next.wake <- struct{}{}
	} else {
		r.leading = false
	}
	r.qmu.Unlock()
	return p.ev, p.err
}

// maxBatch bounds one group-commit transaction, so no writer waits behind
// an unbounded batch. A variable so a test can make batches overflow.
var maxBatch = 256

// commit stores a batch in one transaction, publishes the stored events in
// cursor order, and wakes the batch's writers.
func (r *Registry) commit(batch []*pending) {
	evs := make([]store.Event, len(batch))
	for i, p := range batch {
		evs[i] = p.ev
	}
	r.wmu.Lock()
	errs, err := r.st.AppendEvents(context.Background(), evs)
	if err == nil {
		for i := range evs {
			if errs[i] == nil {
				r.publishLocalLocked(context.Background(), Event(evs[i]), nil)
			}
		}
	}
	r.wmu.Unlock()
	r.m.batches.Inc()
	for i, p := range batch {
		p.ev = evs[i]
		if err != nil {
			p.err = err
		} else {
			p.err = errs[i]
		}
		p.wake <- struct{}{}
	}
}

func (r *Registry) drop(ctx context.Context, runID, stream string) error {
	r.dropped.Add(1)
	r.m.dropped.Inc()
	r.log.LogAttrs(ctx, slog.LevelDebug, "late event dropped", slog.String(keyRunID, runID), slog.String(keyStream, stream))
	return fmt.Errorf("emit %s event to run %q: %w", stream, runID, ErrEnded)
}

// End ends a live run with status (resolved, timeout, cancelled, completed,
// or error) and appends its final lifecycle event (phase "error" when status
// is "error", else "end") in the same transaction. It then clears the run
// from the registry and wakes its waiters and subscribers. Ending a run
// twice returns ErrEnded and emits nothing.
func (r *Registry) End(ctx context.Context, runID, status, errMsg string, result any) (Run, error) {
	if status == "" || status == StatusRunning {
		return Run{}, fmt.Errorf("end run %q: status must be a final status, not %q", runID, status)
	}
	raw, err := marshal(result)
	if err != nil {
		return Run{}, fmt.Errorf("end run %q: result: %w", runID, err)
	}
	r.mu.Lock()
	cur, live := r.live[runID]
	r.mu.Unlock()
	if !live {
		sr, err := r.st.GetRun(ctx, runID)
		if err != nil {
			return Run{}, fmt.Errorf("end run %q: %w", runID, err)
		}
		if cur = Run(sr); !cur.Live() {
			return Run{}, fmt.Errorf("end run %q: %w", runID, ErrEnded)
		}
	}
	now := r.now()
	phase := PhaseEnd
	if status == StatusError {
		phase = PhaseError
	}
	data, _ := json.Marshal(Lifecycle{Phase: phase, StartedAt: cur.StartedAt, EndedAt: now, Status: status, Error: errMsg})

	r.wmu.Lock()
	sr, sev, err := r.st.EndRunEvent(ctx, store.RunEnd{ID: runID, Status: status, Error: errMsg, Result: raw, EndedAt: now},
		store.Event{Stream: StreamLifecycle, At: now, Data: data})
	if err != nil {
		r.wmu.Unlock()
		return Run{}, fmt.Errorf("end run %q: %w", runID, err)
	}
	run := Run(sr)
	r.publishLocalLocked(ctx, Event(sev), func() {
		delete(r.live, runID)
		if w := r.waiters[runID]; w != nil {
			w.run = run
			close(w.done)
			delete(r.waiters, runID)
		}
	})
	r.wmu.Unlock()

	r.m.ended.WithLabelValues(run.Kind, status).Inc()
	lvl := slog.LevelInfo
	if status == StatusError {
		lvl = slog.LevelWarn
	}
	r.log.LogAttrs(ctx, lvl, "run ended", slog.String(keyRunID, runID), slog.String(keyKind, run.Kind),
		slog.String(keyStatus, status), slog.String(keyError, errMsg))
	return run, nil
}

// Wait blocks until the run ends and returns how it ended. An ended run
// returns at once (from the store); an unknown run returns ErrNotFound. A
// positive timeout bounds the wait with ErrWaitTimeout, which says nothing
// about the run itself; ctx's end returns ctx's error.
func (r *Registry) Wait(ctx context.Context, runID string, timeout time.Duration) (Result, error) {
	r.mu.Lock()
	_, live := r.live[runID]
	var w *waiter
	if live {
		w = r.waiterLocked(runID)
	}
	r.mu.Unlock()
	if w == nil {
		run, err := r.st.GetRun(ctx, runID)
		if err != nil {
			return Result{}, fmt.Errorf("wait for run %q: %w", runID, err)
		}
		if !run.Live() {
			return resultOf(Run(run)), nil
		}
		// Live in the store but not registered here (a previous process's
		// run before Recover): wait for whoever ends it. Re-read after
		// registering, because End may have run in between.
		r.mu.Lock()
		w = r.waiterLocked(runID)
		r.mu.Unlock()
		r.ensurePublished(ctx)
		if run, err = r.st.GetRun(ctx, runID); err != nil {
			return Result{}, fmt.Errorf("wait for run %q: %w", runID, err)
		}
		if !run.Live() {
			return resultOf(Run(run)), nil
		}
	}

	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-w.done:
		return resultOf(w.run), nil
	case <-expired:
		return Result{}, fmt.Errorf("wait for run %q: no end after %s: %w", runID, timeout, ErrWaitTimeout)
	case <-ctx.Done():
		return Result{}, fmt.Errorf("wait for run %q: %w", runID, ctx.Err())
	}
}

func (r *Registry) waiterLocked(runID string) *waiter {
	w := r.waiters[runID]
	if w == nil {
		w = &waiter{done: make(chan struct{})}
		r.waiters[runID] = w
	}
	return w
}

func resultOf(run Run) Result {
	return Result{RunID: run.ID, Status: run.Status, StartedAt: run.StartedAt, EndedAt: run.EndedAt, Error: run.Error}
}

// Live returns the runs live in this process, oldest first.
func (r *Registry) Live() []Run {
	r.mu.Lock()
	out := make([]Run, 0, len(r.live))
	for _, run := range r.live {
		out = append(out, run)
	}
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b Run) int {
		if c := a.StartedAt.Compare(b.StartedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// Get returns a run from the store; ErrNotFound when unknown.
func (r *Registry) Get(ctx context.Context, runID string) (Run, error) {
	run, err := r.st.GetRun(ctx, runID)
	if err != nil {
		return Run{}, err
	}
	return Run(run), nil
}

// ListFilter selects runs for List; see store.RunFilter.
type ListFilter struct {
	Kind    string
	Status  string
	TaskID  string
	Live    *bool
	Limit   int    // default 100, at most 1000
	Before  string // a run id: the page after it (runs are listed newest first)
	Display string // runs whose spec names this display
	Host    string // runs of this host
}

// List returns runs from the store, newest first.
func (r *Registry) List(ctx context.Context, f ListFilter) ([]Run, error) {
	srs, err := r.st.ListRuns(ctx, store.RunFilter(f))
	if err != nil {
		return nil, err
	}
	out := make([]Run, len(srs))
	for i, sr := range srs {
		out[i] = Run(sr)
	}
	return out, nil
}

// Count returns how many runs match f's kind, status, task and live
// filters (Limit and Before are ignored).
func (r *Registry) Count(ctx context.Context, f ListFilter) (int, error) {
	return r.st.CountRuns(ctx, store.RunFilter(f))
}

// UpdateSpec replaces a live run's spec (for example a wait job's new
// criteria or deadline), so a resume after restart sees it.
func (r *Registry) UpdateSpec(ctx context.Context, runID string, spec any) error {
	raw, err := marshal(spec)
	if err != nil {
		return fmt.Errorf("update spec of run %q: %w", runID, err)
	}
	if err := r.st.UpdateRunSpec(ctx, runID, raw); err != nil {
		return err
	}
	r.mu.Lock()
	if run, ok := r.live[runID]; ok {
		run.Spec, run.UpdatedAt = raw, r.now()
		r.live[runID] = run
	}
	r.mu.Unlock()
	return nil
}

// Events returns up to limit persisted events after cursor matching f, for
// non-streaming catch-up.
func (r *Registry) Events(ctx context.Context, after int64, f Filter, limit int) ([]Event, error) {
	sevs, err := r.st.EventsAfter(ctx, after, store.EventFilter{RunID: f.RunID, Streams: f.Streams, Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]Event, len(sevs))
	for i, sev := range sevs {
		out[i] = Event(sev)
	}
	return out, nil
}

// LastCursor returns the newest event's cursor.
func (r *Registry) LastCursor(ctx context.Context) (int64, error) { return r.st.LastCursor(ctx) }

// marshal encodes v as JSON; nil is no data and json.RawMessage is checked
// and kept as is.
func marshal(v any) (json.RawMessage, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		if len(v) > 0 && !json.Valid(v) {
			return nil, errors.New("invalid JSON")
		}
		return v, nil
	}
	return json.Marshal(v)
}

// slog keys.
const (
	keyRunID  = "run_id"
	keyKind   = "kind"
	keyStatus = "status"
	keyStream = "stream"
	keyError  = "error"
)
