package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/runs"
)

// Capturer is what recording needs from the capture hub (*capture.Hub).
type Capturer interface {
	Watch(ctx context.Context, dpy string, t capture.Target) (<-chan struct{}, error)
	Capture(ctx context.Context, dpy string, t capture.Target) (*frame.Frame, error)
}

// Runs is what the recorder needs from the run registry (*runs.Registry).
type Runs interface {
	Start(ctx context.Context, o runs.StartOptions) (runs.Run, error)
	Emit(ctx context.Context, runID, stream string, data any) (runs.Event, error)
	End(ctx context.Context, runID, status, errMsg string, result any) (runs.Run, error)
	Get(ctx context.Context, id string) (runs.Run, error)
	List(ctx context.Context, f runs.ListFilter) ([]runs.Run, error)
	Events(ctx context.Context, after int64, f runs.Filter, limit int) ([]runs.Event, error)
	Subscribe(ctx context.Context, f runs.Filter, after int64) (*runs.Subscription, error)
	LastCursor(ctx context.Context) (int64, error)
}

// RunKind is the kind of a recording's run; Stream the stream of the
// events that link a recorded run to its file.
const (
	RunKind = "recording"
	Stream  = "recording"
)

// Formats.
const (
	MP4  = "mp4"  // H.264 in MP4
	WebM = "webm" // VP8 in WebM
)

// Defaults of Options.
const (
	DefaultMaxFPS      = 10
	DefaultMax         = 4
	DefaultMaxDuration = 4 * time.Hour
	DefaultDiskBudget  = 4 << 30
)

// Heartbeat is how often a recording writes its last frame again while
// the screen stays still: each write closes the file's previous fragment,
// so a killed daemon (or ffmpeg) leaves a file playable up to its last
// second.
const Heartbeat = time.Second

// Errors callers branch on.
var (
	ErrNotFound   = errors.New("no such recording")
	ErrNotRunning = errors.New("the recording has already stopped")
	// ErrTooMany: Options.Max recordings are running (ACU_RECORD_MAX).
	ErrTooMany = errors.New("too many recordings")
	// ErrDiskBudget: the recordings directory holds Options.DiskBudget
	// bytes or more (ACU_RECORD_DISK).
	ErrDiskBudget = errors.New("the recordings' disk budget is used up")
)

// Why a recording stopped (api.Recording.Stopped).
const (
	StopRequest     = "request"      // Stop
	StopRunEnded    = "run_ended"    // the automatically recorded run ended
	StopShutdown    = "shutdown"     // the daemon stopped
	StopMaxDuration = "max_duration" // it lasted Options.MaxDuration
	StopDiskBudget  = "disk_budget"  // the directory reached Options.DiskBudget
	StopLost        = "process_lost" // its process died; the file was recovered at the next start
)

// Options configure a Recorder.
type Options struct {
	Capture Capturer // required
	Runs    Runs     // required: every recording is a run
	Dir     string   // where files go; required
	// FFmpeg is the ffmpeg binary; default "ffmpeg" on PATH.
	FFmpeg         string
	DefaultDisplay string
	// Format is the default format, MP4 unless set.
	Format string
	// MaxFPS caps the frames written per second while the screen keeps
	// changing (changes in between coalesce into the next frame); default
	// DefaultMaxFPS.
	MaxFPS int
	// Auto lists run kinds recorded automatically from their start to
	// their end (ACU_RECORD_RUNS); empty records none by itself.
	Auto []string
	// Max is how many recordings may run at once, started over the API or
	// automatically (ACU_RECORD_MAX); default DefaultMax.
	Max int
	// MaxDuration is the longest a recording lasts: it stops itself then
	// (ACU_RECORD_MAX_DURATION); default DefaultMaxDuration.
	MaxDuration time.Duration
	// DiskBudget is the most bytes Dir may hold: no recording starts at or
	// past it, and a running one stops when it is reached
	// (ACU_RECORD_DISK); default DefaultDiskBudget, negative for none.
	DiskBudget int64
	Logger     *slog.Logger
}

// autoRec is the automatic recording of a run.
type autoRec struct {
	id      string // the recording's id; "" while it starts
	ended   bool   // the run has ended
	stopped bool
}

// Recorder runs recordings. Safe for concurrent use.
type Recorder struct {
	opts Options
	log  *slog.Logger

	mu       sync.Mutex
	live     map[string]*recording // by recording id
	starting int                   // Starts between the limit check and live
	auto     map[string]*autoRec   // by recorded run id, until its recording stops
	wg       sync.WaitGroup
}

// New checks o and returns a Recorder.
func New(o Options) (*Recorder, error) {
	if o.Capture == nil || o.Runs == nil || o.Dir == "" {
		return nil, errors.New("record: Capture, Runs and Dir are required")
	}
	if o.FFmpeg == "" {
		o.FFmpeg = "ffmpeg"
	}
	if o.Format == "" {
		o.Format = MP4
	}
	if err := checkFormat(o.Format); err != nil {
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxFPS <= 0 {
		o.MaxFPS = DefaultMaxFPS
	}
	if o.Max <= 0 {
		o.Max = DefaultMax
	}
	if o.MaxDuration <= 0 {
		o.MaxDuration = DefaultMaxDuration
	}
	if o.DiskBudget == 0 {
		o.DiskBudget = DefaultDiskBudget
	}
	return &Recorder{opts: o, log: o.Logger, live: make(map[string]*recording), auto: make(map[string]*autoRec)}, nil
}

func checkFormat(f string) error {
	if f != MP4 && f != WebM {
		return fmt.Errorf("format %q: use mp4 or webm", f)
	}
	return nil
}

// Check reports whether ffmpeg can be run, naming what to install.
func (r *Recorder) Check() error {
	if _, err := exec.LookPath(r.opts.FFmpeg); err != nil {
		return fmt.Errorf("recordings need ffmpeg (%s): %w: install it (apt-get install ffmpeg)", r.opts.FFmpeg, err)
	}
	return nil
}

// spec is a recording run's spec.
type spec struct {
	Display string `json:"display"`
	Format  string `json:"format"`
	// File is the file's name in the recordings directory (answers carry
	// no absolute path); runs of earlier versions have Path instead.
	File  string `json:"file,omitempty"`
	Path  string `json:"path,omitempty"`
	RunID string `json:"run_id,omitempty"`
}

// file is the name of sp's file in the recordings directory.
func (sp spec) file() string {
	if sp.File != "" {
		return filepath.Base(sp.File)
	}
	if sp.Path != "" {
		return filepath.Base(sp.Path)
	}
	return ""
}

// path is where sp's file is.
func (r *Recorder) path(sp spec) string { return filepath.Join(r.opts.Dir, sp.file()) }

// result is a recording run's result.
type result struct {
	File       string `json:"file"`
	Bytes      int64  `json:"bytes"`
	Frames     int    `json:"frames"`
	DurationMs int64  `json:"duration_ms"`
	Width      int    `json:"width"`
	Height     int    `json:"height"`
	// VideoStart is the moment of the file's first frame (time 0), to
	// seek to an event of the recorded run.
	VideoStart time.Time `json:"video_start"`
	// Stopped says why it stopped (Stop*).
	Stopped string `json:"stopped,omitempty"`
	// Incomplete, when set, says why the file cannot be played: it is
	// answered as incomplete, not served.
	Incomplete string `json:"incomplete,omitempty"`
}

// recording is one recording in progress.
type recording struct {
	id     string
	spec   spec
	path   string
	start  time.Time
	cancel context.CancelFunc
	done   chan struct{}
	res    result
	err    error

	mu     sync.Mutex
	reason string // why it stopped (Stop*), the first one given
}

// stop ends the recording, for reason unless it already has one.
func (rec *recording) stop(reason string) {
	rec.mu.Lock()
	if rec.reason == "" {
		rec.reason = reason
	}
	rec.mu.Unlock()
	rec.cancel()
}

func (rec *recording) stopReason() string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.reason
}

// StartOptions say what to record.
type StartOptions struct {
	Display string
	Format  string // MP4 or WebM; "" the Recorder's default
	RunID   string // the run this recording belongs to, if any
}

// Start begins recording a display and returns the recording at once.
func (r *Recorder) Start(ctx context.Context, o StartOptions) (api.Recording, error) {
	if o.Display == "" {
		o.Display = r.opts.DefaultDisplay
	}
	if o.Format == "" {
		o.Format = r.opts.Format
	}
	if err := checkFormat(o.Format); err != nil {
		return api.Recording{}, err
	}
	if err := r.Check(); err != nil {
		return api.Recording{}, err
	}
	if err := os.MkdirAll(r.opts.Dir, 0o700); err != nil {
		return api.Recording{}, fmt.Errorf("create the recordings directory: %w", errors.Unwrap(err))
	}
	// A slot among Options.Max, held from here: two Starts at once cannot
	// both take the last one.
	r.mu.Lock()
	if n := len(r.live) + r.starting; n >= r.opts.Max {
		r.mu.Unlock()
		return api.Recording{}, fmt.Errorf("%w: %d are running, the most ACU_RECORD_MAX allows: stop one (POST /v1/recordings/{id}/stop) or raise ACU_RECORD_MAX", ErrTooMany, n)
	}
	r.starting++
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.starting--
		r.mu.Unlock()
	}()
	if used := r.diskUsed(); r.opts.DiskBudget > 0 && used >= r.opts.DiskBudget {
		return api.Recording{}, fmt.Errorf("%w: the recordings directory holds %d MiB of the %d MiB ACU_RECORD_DISK allows: delete old recordings from ACU_DATA_DIR/recordings or raise ACU_RECORD_DISK",
			ErrDiskBudget, used>>20, r.opts.DiskBudget>>20)
	}
	id := runs.NewID(RunKind)
	sp := spec{Display: o.Display, Format: o.Format, File: id + "." + o.Format, RunID: o.RunID}
	// The first frame before the run: a display that cannot be captured
	// starts no recording.
	first, err := r.opts.Capture.Capture(ctx, sp.Display, capture.Target{Kind: capture.Screen})
	if err != nil {
		return api.Recording{}, fmt.Errorf("record %s: %w", sp.Display, err)
	}
	// The file is created here, owner-only: ffmpeg truncates it and keeps
	// its mode.
	path := r.path(sp)
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		first.Release()
		return api.Recording{}, fmt.Errorf("record %s: create its file: %w", sp.Display, errors.Unwrap(err))
	}
	fh.Close()
	run, err := r.opts.Runs.Start(ctx, runs.StartOptions{ID: id, Kind: RunKind, Spec: sp})
	if err != nil {
		first.Release()
		os.Remove(path)
		return api.Recording{}, fmt.Errorf("record %s: %w", sp.Display, err)
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	rec := &recording{id: id, spec: sp, path: path, start: time.Now(), cancel: cancel, done: make(chan struct{})}
	r.mu.Lock()
	r.live[id] = rec
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.record(rctx, rec, first)
	}()
	r.log.Info("recording started", "run_id", id, "display", sp.Display, "format", sp.Format, "for_run", sp.RunID)
	return toAPI(run, sp, nil), nil
}

// Stop ends a recording, waits for ffmpeg to finish the file and returns it.
func (r *Recorder) Stop(ctx context.Context, id string) (api.Recording, error) {
	return r.stopWith(ctx, id, StopRequest)
}

func (r *Recorder) stopWith(ctx context.Context, id, reason string) (api.Recording, error) {
	r.mu.Lock()
	rec := r.live[id]
	r.mu.Unlock()
	if rec == nil {
		if _, err := r.Get(ctx, id); err != nil {
			return api.Recording{}, err
		}
		return api.Recording{}, ErrNotRunning
	}
	rec.stop(reason)
	select {
	case <-rec.done:
	case <-ctx.Done():
		return api.Recording{}, ctx.Err()
	}
	return r.Get(ctx, id)
}

// Get returns a recording, live or finished.
func (r *Recorder) Get(ctx context.Context, id string) (api.Recording, error) {
	run, err := r.opts.Runs.Get(ctx, id)
	if errors.Is(err, runs.ErrNotFound) || (err == nil && run.Kind != RunKind) {
		return api.Recording{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err != nil {
		return api.Recording{}, err
	}
	return fromRun(run), nil
}

// List returns recordings, newest first; runID keeps those of one run.
func (r *Recorder) List(ctx context.Context, runID string, limit int) ([]api.Recording, error) {
	list, err := r.opts.Runs.List(ctx, runs.ListFilter{Kind: RunKind, Limit: 1000})
	if err != nil {
		return nil, err
	}
	out := []api.Recording{}
	for _, run := range list {
		rec := fromRun(run)
		if runID != "" && rec.RunID != runID {
			continue
		}
		out = append(out, rec)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out, nil
}

// ErrIncomplete is returned (wrapped) by File for a recording whose file
// cannot be played.
var ErrIncomplete = errors.New("the recording's file cannot be played")

// File returns the path of a finished recording's playable file. A file
// that cannot be played (its process died before writing a frame, or
// before its header) is ErrIncomplete, saying why, never served.
func (r *Recorder) File(ctx context.Context, id string) (string, api.Recording, error) {
	run, err := r.opts.Runs.Get(ctx, id)
	if errors.Is(err, runs.ErrNotFound) || (err == nil && run.Kind != RunKind) {
		return "", api.Recording{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err != nil {
		return "", api.Recording{}, err
	}
	rec := fromRun(run)
	if run.Live() {
		return "", rec, fmt.Errorf("recording %s is still running: stop it first", id)
	}
	sp, _ := runSpec(run)
	path := r.path(sp)
	if rec.Incomplete != "" {
		return "", rec, fmt.Errorf("%w: %s", ErrIncomplete, rec.Incomplete)
	}
	if len(run.Result) == 0 {
		return "", rec, fmt.Errorf("%w: its process stopped before it finished the file", ErrIncomplete)
	}
	if why := unplayable(path, sp.Format); why != "" {
		return "", rec, fmt.Errorf("%w: %s", ErrIncomplete, why)
	}
	return path, rec, nil
}

func runSpec(run runs.Run) (spec, *result) {
	var sp spec
	_ = json.Unmarshal(run.Spec, &sp)
	var res *result
	if len(run.Result) > 0 {
		res = &result{}
		if json.Unmarshal(run.Result, res) != nil {
			res = nil
		}
	}
	return sp, res
}

func toAPI(run runs.Run, sp spec, res *result) api.Recording {
	out := api.Recording{ID: run.ID, Display: sp.Display, Format: sp.Format, RunID: sp.RunID, Status: run.Status,
		StartedAt: run.StartedAt, File: sp.file(), URL: "/v1/recordings/" + run.ID, Error: run.Error}
	if !run.EndedAt.IsZero() {
		t := run.EndedAt
		out.EndedAt = &t
	}
	if res != nil {
		out.Bytes, out.Frames, out.DurationMs, out.Width, out.Height = res.Bytes, res.Frames, res.DurationMs, res.Width, res.Height
		out.Stopped, out.Incomplete = res.Stopped, res.Incomplete
		if !res.VideoStart.IsZero() {
			t := res.VideoStart
			out.VideoStart = &t
		}
	}
	return out
}

func fromRun(run runs.Run) api.Recording {
	sp, res := runSpec(run)
	return toAPI(run, sp, res)
}

// it stops every recording and waits for their files.
func (r *Recorder) Run(ctx context.Context) error {
	r.keepPrivate()
	if len(r.opts.Auto) > 0 {
		r.follow(ctx)
	} else {
		<-ctx.Done()
	}
	r.mu.Lock()
	for _, rec := range r.live {
		rec.stop(StopShutdown)
	}
	r.mu.Unlock()
	r.wg.Wait()
	return nil
}

// follow starts and stops automatic recordings on lifecycle events. The
// registry's subscription carries every process's events (it tails the
// store for the others': see runs.Registry.Tail), so a run that another
// process owns (acu agent, acu computer, acu run on the same database) is
// recorded too.
func (r *Recorder) follow(ctx context.Context) {
	for ctx.Err() == nil {
		cur, err := r.opts.Runs.LastCursor(ctx)
		if err != nil {
			r.log.Warn("auto-record: read the event cursor", "err", err)
			sleep(ctx, time.Second)
			continue
		}
		sub, err := r.opts.Runs.Subscribe(ctx, runs.Filter{Streams: []string{runs.StreamLifecycle}}, cur)
		if err != nil {
			r.log.Warn("auto-record: follow runs", "err", err)
			sleep(ctx, time.Second)
			continue
		}
		for ev := range sub.Events() {
			r.onLifecycle(ctx, ev)
		}
		sub.Close()
	}
}

func (r *Recorder) onLifecycle(ctx context.Context, ev runs.Event) {
	var lc runs.Lifecycle
	if json.Unmarshal(ev.Data, &lc) != nil {
		return
	}
	switch lc.Phase {
	case runs.PhaseStart:
		r.mu.Lock()
		_, seen := r.auto[ev.RunID]
		r.mu.Unlock()
		if seen {
			return // already recording (a resubscription replays from the last cursor)
		}
		run, err := r.opts.Runs.Get(ctx, ev.RunID)
		if err != nil || !r.autoKind(run.Kind) || !run.Live() {
			return
		}
		r.mu.Lock()
		if _, seen := r.auto[run.ID]; seen {
			r.mu.Unlock()
			return
		}
		r.auto[run.ID] = &autoRec{}
		r.mu.Unlock()
		var sp struct {
			Display string `json:"display"`
		}
		_ = json.Unmarshal(run.Spec, &sp)
		rec, err := r.Start(ctx, StartOptions{Display: sp.Display, RunID: run.ID})
		r.mu.Lock()
		a := r.auto[run.ID]
		if err == nil {
			a.id = rec.ID
		}
		ended := a.ended
		r.mu.Unlock()
		if err != nil {
			r.log.Warn("auto-record a run", "run_id", run.ID, "err", err)
			return
		}
		r.link(ctx, run.ID, map[string]any{"phase": "started", "recording_id": rec.ID, "format": rec.Format, "url": rec.URL})
		if ended { // the run ended while its recording started
			r.stopAuto(ctx, run.ID)
		}
	default:
		r.stopAuto(ctx, ev.RunID)
	}
}

// stopAuto stops the automatic recording of a run that ended, once.
func (r *Recorder) stopAuto(ctx context.Context, runID string) {
	r.mu.Lock()
	a, ok := r.auto[runID]
	if !ok || a.stopped {
		r.mu.Unlock()
		return
	}
	a.ended = true
	if a.id == "" { // still starting: the starter stops it
		r.mu.Unlock()
		return
	}
	a.stopped = true
	id := a.id
	// Forgotten now: a late copy of the start finds the run ended, and a
	// late copy of the end finds nothing to stop.
	delete(r.auto, runID)
	r.mu.Unlock()
	rec, err := r.stopWith(context.WithoutCancel(ctx), id, StopRunEnded)
	if err != nil {
		r.log.Warn("stop an automatic recording", "run_id", runID, "recording", id, "err", err)
		return
	}
	r.log.Info("auto-recorded a run", "run_id", runID, "recording", id, "file", rec.File)
}

// link records the recording on the recorded run, while it is live.
func (r *Recorder) link(ctx context.Context, runID string, data map[string]any) {
	if _, err := r.opts.Runs.Emit(ctx, runID, Stream, data); err != nil && !errors.Is(err, runs.ErrEnded) {
		r.log.Warn("link a recording to its run", "run_id", runID, "err", err)
	}
}

func (r *Recorder) autoKind(kind string) bool {
	for _, k := range r.opts.Auto {
		if k == kind {
			return true
		}
	}
	return false
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
