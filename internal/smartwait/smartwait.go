package smartwait

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/judge"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/store"
)

// Run kinds and statuses owned by this package.
const (
	KindWait   = "wait"
	KindSettle = "settle"

	StatusWatching  = "watching" // a live wait job
	StatusResolved  = "resolved"
	StatusTimeout   = "timeout"
	StatusCancelled = "cancelled"
	StatusError     = "error"
	StatusSettled   = "settled"

	// StreamVerdict carries one event per judgement; StreamUpdate one per Update.
	StreamVerdict = "verdict"
	StreamUpdate  = "update"
)

// Defaults and bounds.
const (
	DefaultTimeout      = 300 * time.Second
	DefaultMaxTimeout   = 86400 * time.Second
	DefaultPollInterval = time.Second
	DefaultMinPoll      = 250 * time.Millisecond
	DefaultMaxPoll      = 60 * time.Second
	DefaultPtyPoll      = 250 * time.Millisecond
	DefaultJudgeTimeout = 60 * time.Second
	// DefaultJudgeConcurrency bounds the judge calls in flight across all
	// waits (ACU_JUDGE_CONCURRENCY).
	DefaultJudgeConcurrency = 32
	DefaultSettleQuiet      = time.Second
	DefaultSettleLimit      = 30 * time.Second
	minTimeout              = time.Second
	verdictCacheSize        = 1024
)

var (
	// ErrNotFound: no wait job has that id.
	ErrNotFound = errors.New("no such wait job")
	// ErrNotLive: the job has already ended (resolved, timed out, cancelled).
	ErrNotLive = errors.New("wait job has already ended")
	// ErrElsewhere: the job is live but another process (the daemon of its
	// host, in a fleet) runs it; the error names that host.
	ErrElsewhere = errors.New("wait job runs on another daemon")
	// ErrStopped: the engine's Run has returned; start a new engine.
	ErrStopped = errors.New("wait engine stopped")
	// ErrNoJudge: the daemon runs without a judge (Options.Judge nil);
	// the error says what to install or set.
	ErrNoJudge = errors.New("no judge is available")
)

// ValidationError is a bad field in a Create, Update or Settle request.
// Err, when set, is the underlying cause (a *capture.TargetError listing the
// candidate windows, or the judge's Check error).
type ValidationError struct {
	Field   string
	Message string
	Err     error
}

func (e *ValidationError) Error() string { return e.Field + ": " + e.Message }
func (e *ValidationError) Unwrap() error { return e.Err }

// Registry is what the engine needs from the run registry (*runs.Registry).
type Registry interface {
	Start(ctx context.Context, o runs.StartOptions) (runs.Run, error)
	Emit(ctx context.Context, runID, stream string, data any) (runs.Event, error)
	End(ctx context.Context, runID, status, errMsg string, result any) (runs.Run, error)
	Get(ctx context.Context, id string) (runs.Run, error)
	List(ctx context.Context, f runs.ListFilter) ([]runs.Run, error)
	Count(ctx context.Context, f runs.ListFilter) (int, error)
	UpdateSpec(ctx context.Context, runID string, spec any) error
}

// Capturer is what the engine needs from the capture hub (*capture.Hub).
type Capturer interface {
	Resolve(ctx context.Context, display string, t capture.Target) (capture.Resolved, error)
	Capture(ctx context.Context, display string, t capture.Target) (*frame.Frame, error)
	Watch(ctx context.Context, display string, t capture.Target) (<-chan struct{}, error)
}

// Store is what the engine needs from the database (*store.DB): the task
// progress log.
type Store interface {
	AppendTaskProgress(ctx context.Context, taskID, runID, message string) error
}

// FrameStore keeps the frames judgements saw, once per content hash
// (*store.DB).
type FrameStore interface {
	PutRunFrame(ctx context.Context, runID string, f store.Frame, at time.Time) error
}

// Clock returns the current time; nil means time.Now.
type Clock func() time.Time

// Options configure an Engine. Runs and Capture are required; Store is
// needed for jobs linked to a task.
type Options struct {
	Runs    Registry
	Capture Capturer
	// Judge decides conditions. Nil runs the engine without one: Create
	// and Update fail with ErrNoJudge and NoJudge's advice, resumed jobs
	// record every evaluation as a judge error (and time out saying so),
	// settle works.
	Judge judge.Backend
	// NoJudge says why there is no judge and what to do, when Judge is nil.
	NoJudge string
	// Structure, when set, decides the parts of conditions about windows,
	// controls, values and rows from the accessibility tree, woken by its
	// events (*a11yjudge.Judge; structure.go); Judge then gets only the
	// rest. nil judges every condition with Judge.
	Structure Structure
	// StructureOff, when set, turns the accessibility judge off
	// (ACU_JUDGE_A11Y=off) and says so: conditions the grammar claims go,
	// whole, to the judge a display without a tree gets (a vision model as
	// written, else the OCR judge with the names made quoted text), and
	// every plan event of such a wait carries this as its fallback.
	StructureOff string
	// Text, when set, is the OCR judge, asked instead of Judge about the
	// quoted-text rest of a structural condition (the cheaper judge).
	Text  judge.Backend
	Store Store
	// Frames, when set, keeps the frame of every judgement (JPEG, the
	// judge's size), linked to the wait's run, for the run timeline; its
	// verdict event names it by frameHash. nil keeps none
	// (ACU_KEEP_JUDGED_FRAMES=false).
	Frames FrameStore
	// Notify enqueues wake-up notifications (*notify.Dispatcher); nil
	// sends none (run events still wake stream subscribers and waiters).
	Notify Notifier

	// ScreenshotDir receives <job id>.png when a job resolves ("" = no file).
	ScreenshotDir string

	PollInterval time.Duration // backstop interval; default 1s
	MinPoll      time.Duration // lower bound of a job's poll interval; default 250ms
	MaxPoll      time.Duration // upper bound; default 60s
	PtyPoll      time.Duration // tmux capture-pane interval; default 250ms
	MaxTimeout   time.Duration // default 86400s
	JudgeTimeout time.Duration // per judgement; default 60s
	// JudgeConcurrency bounds the judge calls in flight across all waits
	// (default DefaultJudgeConcurrency). A wait whose turn has not come
	// holds no frame: it captures the newest one when it gets a slot, in
	// the order the waits asked (first come, first served).
	JudgeConcurrency int

	DefaultDisplay string // display used when a request names none, e.g. ":99"
	// Host is this daemon's host in a fleet (ACU_HOST_ID): a wait for
	// another host is stored for that host's daemon to claim.
	Host string
	// StrictTargets refuses waits on a window that is not open yet
	// (ACU_WAIT_STRICT_TARGET); by default they wait for it to appear.
	StrictTargets bool

	TmuxBinary string // default "tmux"
	TmuxSocket string // tmux -L name (or -S path when it contains a slash); "" = tmux's default server

	Logger     *slog.Logger
	Clock      Clock
	Registerer prometheus.Registerer // nil: metrics are kept but not registered
}

// Engine runs wait jobs. Create it with New, start Run in a goroutine, and
// give Claim to runs.Recover (or call Resume) at start-up.
type Engine struct {
	opts    Options
	log     *slog.Logger
	now     Clock
	metrics *metrics
	cache   *verdictCache
	noJudge error // set when the engine runs without a judge
	// slots holds a token per judge call in flight (JudgeConcurrency).
	// Goroutines blocked sending on a channel are woken in arrival order,
	// so no wait starves.
	slots chan struct{}

	mu      sync.Mutex
	jobs    map[string]*job // live jobs
	queue   []*job          // created or claimed, not yet started by Run
	running bool
	stopped bool
	kick    chan struct{}
	wg      sync.WaitGroup // job goroutines
}

// New returns an engine; nothing runs until Run.
func New(opts Options) *Engine {
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.MinPoll <= 0 {
		opts.MinPoll = DefaultMinPoll
	}
	if opts.MaxPoll <= 0 {
		opts.MaxPoll = DefaultMaxPoll
	}
	if opts.MinPoll > opts.MaxPoll {
		opts.MinPoll, opts.MaxPoll = opts.MaxPoll, opts.MinPoll
	}
	opts.PollInterval = min(max(opts.PollInterval, opts.MinPoll), opts.MaxPoll)
	if opts.PtyPoll <= 0 {
		opts.PtyPoll = DefaultPtyPoll
	}
	if opts.MaxTimeout <= 0 {
		opts.MaxTimeout = DefaultMaxTimeout
	}
	if opts.JudgeTimeout <= 0 {
		opts.JudgeTimeout = DefaultJudgeTimeout
	}
	if opts.JudgeConcurrency <= 0 {
		opts.JudgeConcurrency = DefaultJudgeConcurrency
	}
	if opts.TmuxBinary == "" {
		opts.TmuxBinary = "tmux"
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var noJudgeErr error
	if opts.Judge == nil {
		why := opts.NoJudge
		if why == "" {
			why = "the daemon was started without one"
		}
		noJudgeErr = fmt.Errorf("%w: %s; install Tesseract for the built-in OCR judge (apt-get install tesseract-ocr tesseract-ocr-eng) or set a model key such as OPENROUTER_API_KEY, then restart acu serve", ErrNoJudge, why)
		opts.Judge = noJudge{err: noJudgeErr}
	}
	now := opts.Clock
	if now == nil {
		now = time.Now
	}
	return &Engine{
		opts:    opts,
		log:     log,
		now:     now,
		metrics: newMetrics(opts.Registerer),
		cache:   newVerdictCache(verdictCacheSize),
		slots:   make(chan struct{}, opts.JudgeConcurrency),
		jobs:    make(map[string]*job),
		kick:    make(chan struct{}, 1),
		noJudge: noJudgeErr,
	}
}

// noJudge stands in for a missing judge: every question fails with err.
type noJudge struct{ err error }

func (noJudge) Name() string         { return "none" }
func (n noJudge) Check(string) error { return n.err }
func (n noJudge) Judge(context.Context, judge.Question) (judge.Verdict, error) {
	return judge.Verdict{}, n.err
}

// Run starts and supervises job goroutines until ctx ends, then waits for
// them. Jobs still live stay live in the store, so the next engine on the same
// database resumes them. Run may be called once.
func (e *Engine) Run(ctx context.Context) error {
	e.mu.Lock()
	if e.running || e.stopped {
		e.mu.Unlock()
		return errors.New("smartwait: Run called twice")
	}
	e.running = true
	e.mu.Unlock()

	defer func() {
		e.mu.Lock()
		e.stopped = true
		e.queue = nil
		e.mu.Unlock()
		e.wg.Wait()
		e.mu.Lock()
		clear(e.jobs)
		e.mu.Unlock()
		e.metrics.liveJobs.Store(0)
	}()
	for {
		e.mu.Lock()
		queued := e.queue
		e.queue = nil
		for _, j := range queued {
			e.wg.Add(1)
			go e.runJob(ctx, j)
		}
		e.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil
		case <-e.kick:
		}
	}
}

// enqueue registers a live job and hands it to Run.
func (e *Engine) enqueue(j *job) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return ErrStopped
	}
	e.jobs[j.id] = j
	e.queue = append(e.queue, j)
	e.metrics.liveJobs.Store(int64(len(e.jobs)))
	select {
	case e.kick <- struct{}{}:
	default:
	}
	return nil
}

func (e *Engine) forget(id string) {
	e.mu.Lock()
	delete(e.jobs, id)
	e.metrics.liveJobs.Store(int64(len(e.jobs)))
	e.mu.Unlock()
}

func (e *Engine) live(id string) *job {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.jobs[id]
}

// Stats are the engine's counters since start (also exported as metrics).
type Stats struct {
	JudgeCalls    uint64 // judge backend calls made
	JudgeErrors   uint64
	Unparsed      uint64 // replies that were not a clean YES or NO: retried with backoff, never cached
	SkippedByHash uint64 // evaluations skipped: same frame hash and criteria as the job's last judgement
	Deduped       uint64 // verdicts taken from another job's judgement of the same (criteria, hash)
	Resolutions   map[string]uint64
}

// Stats returns a snapshot of the engine's counters.
func (e *Engine) Stats() Stats { return e.metrics.snapshot() }

// finalCtx detaches finalisation writes from a cancelled parent so a
// shutdown in the middle of resolving does not leave half a resolution.
func finalCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
}

func fmtHash(h uint64) string { return fmt.Sprintf("%016x", h) }
