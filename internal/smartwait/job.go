package smartwait

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/runs"
)

// Spec is a request to create a wait job.
type Spec struct {
	Criteria     string        // natural-language condition, e.g. `"Download complete" is visible`
	Timeout      time.Duration // 0 = 300s; 1s..MaxTimeout
	Target       string        // screen (default), window:<name|id>, crop:x1,y1,x2,y2, pty:<tmux session>
	Display      string        // "" = Options.DefaultDisplay
	TaskID       string        // optional: resolution is appended to this task's progress log
	PollInterval time.Duration // 0 = Options.PollInterval; MinPoll..MaxPoll
	SessionKey   string        // optional: passed to the run registry
	// StrictTarget refuses a window target that matches no window now, as
	// Options.StrictTargets does for every wait; by default such a wait
	// judges "not open yet" as NO until the window appears.
	StrictTarget bool
	// Host runs the wait on another host's daemon (a fleet sharing one
	// PostgreSQL database): it is stored for that daemon to claim, which
	// resolves the target and judges there. Empty: this daemon. The engine
	// does not check that the host has a daemon; the API does.
	Host string
}

// Update changes a live job. A nil field is left as it is.
type Update struct {
	Criteria *string
	// Timeout resets the clock: the new deadline is now + Timeout.
	Timeout *time.Duration
}

// Revision is one entry of a job's history: its criteria and clock at
// creation and after each Update.
type Revision struct {
	At       time.Time
	Criteria string
	Timeout  time.Duration // milliseconds on the wire
	Deadline time.Time
}

// Verdict is the last judgement of a job.
type Verdict struct {
	At        time.Time
	Met       bool
	Evidence  string
	FrameHash string
	Latency   time.Duration
	CostUSD   float64
	// CostUnknown: the judgement's model call had no known cost (CostUSD
	// is then 0, not its cost).
	CostUnknown bool
	Backend     string
	Model       string
	Deduped     bool
	Error       string
}

// Job is a wait job as callers see it.
type Job struct {
	ID           string
	Host         string // the host whose daemon runs it; empty: this daemon's
	Status       string // watching, resolved, timeout, cancelled, error
	Criteria     string
	Target       string
	Display      string
	Source       string // what is watched: screen, window, crop, tmux (pty fallback: window or screen)
	TaskID       string
	Timeout      time.Duration
	PollInterval time.Duration
	CreatedAt    time.Time
	Deadline     time.Time
	EndedAt      time.Time

	Evaluations int // judgements made or taken from the cache (skips excluded)
	JudgeErrors int
	Skipped     int // evaluations skipped: same content hash and criteria as the last judgement
	LastVerdict *Verdict
	LastError   string

	// Set when the job has ended.
	Evidence   string
	Screenshot string
	FrameHash  string
	Message    string // the notification text
	Reason     string // cancel reason or error

	History []Revision
}

// spec is the run's persisted spec: everything needed to resume.
// revision is a persisted Revision.
type revision struct {
	At        time.Time `json:"at"`
	Criteria  string    `json:"criteria"`
	TimeoutMs int64     `json:"timeoutMs"`
	Deadline  time.Time `json:"deadline"`
}

type spec struct {
	Host           string     `json:"host,omitempty"`
	Criteria       string     `json:"criteria"`
	Target         string     `json:"target"`
	Display        string     `json:"display"`
	Source         string     `json:"source"`
	TaskID         string     `json:"taskId,omitempty"`
	TimeoutMs      int64      `json:"timeoutMs"`
	PollIntervalMs int64      `json:"pollIntervalMs"`
	CreatedAt      time.Time  `json:"createdAt"`
	Deadline       time.Time  `json:"deadline"`
	History        []revision `json:"history,omitempty"`
}

// result is the run's persisted result.
type result struct {
	Evidence    string `json:"evidence,omitempty"`
	Screenshot  string `json:"screenshot,omitempty"`
	FrameHash   string `json:"frameHash,omitempty"`
	Evaluations int    `json:"evaluations"`
	JudgeErrors int    `json:"judgeErrors"`
	Skipped     int    `json:"skipped"`
	Message     string `json:"message,omitempty"`
	Reason      string `json:"reason,omitempty"`
	LastError   string `json:"lastError,omitempty"`
	// Judges counts the judgements by judge (a11y, ocr, a model backend);
	// ModelCalls the paid calls to a model, CostUSD their cost (null when
	// unknown).
	Judges     map[string]int `json:"judges,omitempty"`
	ModelCalls int            `json:"modelCalls"`
	CostUSD    *float64       `json:"costUsd"`
}

// Source values.
const (
	sourceScreen = "screen"
	sourceWindow = "window"
	sourceCrop   = "crop"
	sourceTmux   = "tmux"
)

// job is a live wait job. Its goroutine (runJob) is the only writer of the
// run's end; Update and Cancel signal it.
type job struct {
	id      string
	target  capture.Target // visual target (unused for tmux)
	session string         // tmux session for pty targets

	mu          sync.Mutex
	spec        spec
	evaluations int
	judgeErrors int
	captureErrs int
	skipped     int
	judgedOK    int
	failStreak  int // judgements in a row that gave no YES/NO (error or unparsed reply): backs off the poll
	lastVerdict *Verdict
	lastErr     string
	lastJudge   string // last judge error
	lastCapErr  string // last capture error (events are emitted when it changes)
	// lastChangeAt is when the job last saw a change notification, and
	// lastLatency how long its last judgement took: a change that follows
	// another by less than a poll interval plus that latency waits for
	// the poll (runJob).
	lastChangeAt time.Time
	lastLatency  time.Duration
	judgedHash   uint64
	judgedCrit   string
	judged       bool
	evalCancel   context.CancelFunc
	ended        *Job         // set once the run has ended
	structure    *structState // the plan of structural criteria (structure.go)
	acct         accounting   // judgements and their cost, for the run's result

	updated  chan struct{} // buffered 1
	cancelCh chan string   // buffered 1
	done     chan struct{}
}

func newJob(id string, sp spec) *job {
	return &job{
		id:       id,
		spec:     sp,
		updated:  make(chan struct{}, 1),
		cancelCh: make(chan string, 1),
		done:     make(chan struct{}),
	}
}

// view returns the caller-facing Job; j.mu must be held.
func (j *job) view() Job {
	if j.ended != nil {
		return *j.ended
	}
	sp := j.spec
	v := Job{
		ID:           j.id,
		Host:         sp.Host,
		Status:       StatusWatching,
		Criteria:     sp.Criteria,
		Target:       sp.Target,
		Display:      sp.Display,
		Source:       sp.Source,
		TaskID:       sp.TaskID,
		Timeout:      time.Duration(sp.TimeoutMs) * time.Millisecond,
		PollInterval: time.Duration(sp.PollIntervalMs) * time.Millisecond,
		CreatedAt:    sp.CreatedAt,
		Deadline:     sp.Deadline,
		Evaluations:  j.evaluations,
		JudgeErrors:  j.judgeErrors,
		Skipped:      j.skipped,
		LastError:    j.lastErr,
	}
	for _, r := range sp.History {
		v.History = append(v.History, Revision{At: r.At, Criteria: r.Criteria, Timeout: time.Duration(r.TimeoutMs) * time.Millisecond, Deadline: r.Deadline})
	}
	if j.lastVerdict != nil {
		lv := *j.lastVerdict
		v.LastVerdict = &lv
	}
	return v
}

func (sp spec) timeout() time.Duration { return time.Duration(sp.TimeoutMs) * time.Millisecond }
func (sp spec) poll() time.Duration    { return time.Duration(sp.PollIntervalMs) * time.Millisecond }

// Create validates s, starts a run of kind "wait" and returns at once; the
// job is watched by Run. Validation failures are *ValidationError.
func (e *Engine) Create(ctx context.Context, s Spec) (Job, error) {
	criteria := strings.TrimSpace(s.Criteria)
	if criteria == "" {
		return Job{}, &ValidationError{Field: "criteria", Message: "must not be empty: describe what should be visible, e.g. '\"Download complete\" is visible'"}
	}
	if err := checkText("criteria", criteria, maxCriteriaLen); err != nil {
		return Job{}, err
	}
	if e.noJudge != nil && e.needsJudge(criteria) {
		return Job{}, e.noJudge
	}
	timeout := s.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if err := e.checkTimeout(timeout); err != nil {
		return Job{}, err
	}
	poll := s.PollInterval
	if poll == 0 {
		poll = e.opts.PollInterval
	}
	if poll < e.opts.MinPoll || poll > e.opts.MaxPoll {
		return Job{}, &ValidationError{Field: "poll_interval", Message: fmt.Sprintf("must be %s..%s", e.opts.MinPoll, e.opts.MaxPoll)}
	}
	targetStr := strings.TrimSpace(s.Target)
	if targetStr == "" {
		targetStr = "screen"
	}
	// A wait for another host's daemon (Spec.Host) is stored for it to
	// claim: its target is checked for syntax only here, and that daemon
	// resolves it on its own display and judges with its own judge.
	remote := s.Host != "" && s.Host != e.opts.Host
	display := s.Display
	var src source
	if remote {
		if _, _, err := targetFor(spec{Target: targetStr}); err != nil && !strings.HasPrefix(targetStr, "pty:") {
			return Job{}, &ValidationError{Field: "target", Message: err.Error(), Err: err}
		}
	} else {
		if display == "" {
			display = e.opts.DefaultDisplay
		}
		var err error
		if src, err = e.resolveSource(ctx, display, targetStr, !s.StrictTarget && !e.opts.StrictTargets); err != nil {
			return Job{}, err
		}
		if err := e.checkCriteria(criteria); err != nil {
			return Job{}, err
		}
	}

	now := e.now().UTC()
	sp := spec{
		Criteria:       criteria,
		Target:         targetStr,
		Display:        display,
		Source:         src.source,
		TaskID:         s.TaskID,
		TimeoutMs:      timeout.Milliseconds(),
		PollIntervalMs: poll.Milliseconds(),
		CreatedAt:      now,
		Deadline:       now.Add(timeout),
	}
	sp.History = []revision{{At: now, Criteria: criteria, TimeoutMs: sp.TimeoutMs, Deadline: sp.Deadline}}
	start := runs.StartOptions{Kind: KindWait, SessionKey: s.SessionKey, TaskID: s.TaskID, Spec: sp}
	if remote {
		sp.Host = s.Host
		start.Spec, start.Host = sp, s.Host
	}
	run, err := e.opts.Runs.Start(ctx, start)
	if err != nil {
		return Job{}, fmt.Errorf("start wait run: %w", err)
	}
	j := newJob(run.ID, sp)
	if remote {
		e.log.Info("wait job created for another host", "run_id", run.ID, "host", s.Host, "criteria", criteria, "target", targetStr, "timeout", timeout)
		return j.view(), nil
	}
	j.target, j.session = src.target, src.session
	j.mu.Lock()
	v := j.view()
	j.mu.Unlock()
	if err := e.enqueue(j); err != nil {
		ectx, cancel := finalCtx(ctx)
		defer cancel()
		if _, endErr := e.opts.Runs.End(ectx, run.ID, StatusError, err.Error(), result{Reason: err.Error()}); endErr != nil {
			e.log.Warn("end wait run of a stopped engine", "run_id", run.ID, "error", endErr)
		}
		return Job{}, err
	}
	e.log.Info("wait job created", "run_id", run.ID, "criteria", criteria, "target", targetStr, "display", display, "source", src.source, "timeout", timeout)
	return v, nil
}

func (e *Engine) checkTimeout(d time.Duration) error {
	if d < minTimeout || d > e.opts.MaxTimeout {
		return &ValidationError{Field: "timeout", Message: fmt.Sprintf("must be %d..%d seconds", int64(minTimeout/time.Second), int64(e.opts.MaxTimeout/time.Second))}
	}
	return nil
}

type source struct {
	source  string
	target  capture.Target
	session string
}

// resolveSource parses and validates a target string. pty:<session> reads a
// tmux pane when the session exists, else falls back to a window whose title
// contains the session name, else the screen.
//
// With absentOK, a window target that matches no window now is accepted (a
// wait for a dialog about to open); an ambiguous one is still refused.
func (e *Engine) resolveSource(ctx context.Context, display, target string, absentOK bool) (source, error) {
	if sess, ok := strings.CutPrefix(target, "pty:"); ok {
		if sess == "" || strings.ContainsAny(sess, ":.\n\x00") {
			return source{}, &ValidationError{Field: "target", Message: "pty:<session> needs a tmux session name without ':' or '.'"}
		}
		if e.tmuxHasSession(ctx, sess) {
			return source{source: sourceTmux, session: sess}, nil
		}
		if t, err := capture.ParseTarget("window:" + sess); err == nil {
			if _, err := e.opts.Capture.Resolve(ctx, display, t); err == nil {
				e.log.Info("pty target has no tmux session: watching its window", "session", sess, "display", display)
				return source{source: sourceWindow, target: t, session: sess}, nil
			}
		}
		t, err := capture.ParseTarget("screen")
		if err != nil {
			return source{}, fmt.Errorf("parse screen target: %w", err)
		}
		if _, err := e.opts.Capture.Resolve(ctx, display, t); err != nil {
			return source{}, &ValidationError{Field: "display", Message: err.Error(), Err: err}
		}
		e.log.Info("pty target has no tmux session nor window: watching the screen", "session", sess, "display", display)
		return source{source: sourceScreen, target: t, session: sess}, nil
	}
	t, err := capture.ParseTarget(target)
	if err != nil {
		return source{}, &ValidationError{Field: "target", Message: err.Error(), Err: err}
	}
	if _, err := e.opts.Capture.Resolve(ctx, display, t); err != nil {
		if te, ok := errors.AsType[*capture.TargetError](err); ok {
			if absentOK && t.Kind == capture.Window && !te.Ambiguous {
				return source{source: sourceWindow, target: t}, nil
			}
			return source{}, &ValidationError{Field: "target", Message: te.Error(), Err: err}
		}
		return source{}, &ValidationError{Field: "display", Message: err.Error(), Err: err}
	}
	kind, _, _ := strings.Cut(target, ":")
	switch kind {
	case "window":
		return source{source: sourceWindow, target: t}, nil
	case "crop":
		return source{source: sourceCrop, target: t}, nil
	}
	return source{source: sourceScreen, target: t}, nil
}

// targetFor rebuilds a live job's source from its persisted spec (resume).
func targetFor(sp spec) (capture.Target, string, error) {
	session, isPty := strings.CutPrefix(sp.Target, "pty:")
	if !isPty {
		session = ""
	}
	switch {
	case sp.Source == sourceTmux:
		return capture.Target{}, session, nil
	case isPty && sp.Source == sourceWindow:
		t, err := capture.ParseTarget("window:" + session)
		return t, session, err
	case isPty:
		t, err := capture.ParseTarget("screen")
		return t, session, err
	}
	t, err := capture.ParseTarget(sp.Target)
	return t, "", err
}

// Update changes a live job's criteria and/or resets its clock; the change
// is kept in the job's history, persisted to the run spec (so a restart
// resumes the new state) and emitted as an "update" progress event.
func (e *Engine) Update(ctx context.Context, id string, u Update) (Job, error) {
	var crit string
	if u.Criteria != nil {
		crit = strings.TrimSpace(*u.Criteria)
		if crit == "" {
			return Job{}, &ValidationError{Field: "criteria", Message: "must not be empty"}
		}
		if err := checkText("criteria", crit, maxCriteriaLen); err != nil {
			return Job{}, err
		}
		if e.noJudge != nil && e.needsJudge(crit) {
			return Job{}, e.noJudge
		}
		if err := e.checkCriteria(crit); err != nil {
			return Job{}, err
		}
	}
	if u.Timeout != nil {
		if err := e.checkTimeout(*u.Timeout); err != nil {
			return Job{}, err
		}
	}
	if u.Criteria == nil && u.Timeout == nil {
		return Job{}, &ValidationError{Field: "update", Message: "give criteria and/or timeout"}
	}
	j := e.live(id)
	if j == nil {
		if _, err := e.Get(ctx, id); err != nil {
			return Job{}, err
		}
		if run, err := e.opts.Runs.Get(ctx, id); err == nil && run.Live() {
			return Job{}, fmt.Errorf("update wait job %q: %w (host %q): send the update to that host's daemon", id, ErrElsewhere, run.Host)
		}
		return Job{}, fmt.Errorf("update wait job %q: %w", id, ErrNotLive)
	}

	j.mu.Lock()
	if j.ended != nil {
		j.mu.Unlock()
		return Job{}, fmt.Errorf("update wait job %q: %w", id, ErrNotLive)
	}
	prev := j.spec
	sp := j.spec
	sp.History = append([]revision(nil), sp.History...)
	now := e.now().UTC()
	if u.Criteria != nil {
		sp.Criteria = crit
	}
	if u.Timeout != nil {
		sp.TimeoutMs = u.Timeout.Milliseconds()
		sp.Deadline = now.Add(*u.Timeout)
	}
	sp.History = append(sp.History, revision{At: now, Criteria: sp.Criteria, TimeoutMs: sp.TimeoutMs, Deadline: sp.Deadline})
	if err := e.opts.Runs.UpdateSpec(ctx, id, sp); err != nil {
		j.mu.Unlock()
		return Job{}, fmt.Errorf("persist update of wait job %q: %w", id, err)
	}
	j.spec = sp
	if j.evalCancel != nil && sp.Criteria != prev.Criteria {
		j.evalCancel() // the verdict in flight answers the old criteria
	}
	v := j.view()
	j.mu.Unlock()

	select {
	case j.updated <- struct{}{}:
	default:
	}
	ev := map[string]any{
		"criteria": sp.Criteria, "timeoutMs": sp.TimeoutMs, "deadline": sp.Deadline,
		"previous": map[string]any{"criteria": prev.Criteria, "timeoutMs": prev.TimeoutMs, "deadline": prev.Deadline},
	}
	if _, err := e.opts.Runs.Emit(ctx, id, StreamUpdate, ev); err != nil && !errors.Is(err, runs.ErrEnded) {
		e.log.Warn("emit update event", "run_id", id, "error", err)
	}
	e.log.Info("wait job updated", "run_id", id, "criteria", sp.Criteria, "deadline", sp.Deadline)
	return v, nil
}

// Cancel ends a live job as cancelled with reason. The agent is notified
// like for the other outcomes (a wake must never be lost: the canceller may
// not be the agent that waits). It returns the ended job.
func (e *Engine) Cancel(ctx context.Context, id, reason string) (Job, error) {
	reason = strings.TrimSpace(reason)
	if err := checkText("reason", reason, maxReasonLen); err != nil {
		return Job{}, err
	}
	if reason == "" {
		reason = "cancelled by request"
	}
	j := e.live(id)
	if j == nil {
		if _, err := e.Get(ctx, id); err != nil {
			return Job{}, err
		}
		if run, err := e.opts.Runs.Get(ctx, id); err == nil && run.Live() {
			return e.cancelElsewhere(ctx, run, reason)
		}
		return Job{}, fmt.Errorf("cancel wait job %q: %w", id, ErrNotLive)
	}
	j.mu.Lock()
	if j.ended != nil { // ended, its outcome perhaps still being written
		ended := *j.ended
		j.mu.Unlock()
		return ended, fmt.Errorf("cancel wait job %q: it ended %s first: %w", id, ended.Status, ErrNotLive)
	}
	j.mu.Unlock()
	select {
	case j.cancelCh <- reason:
	default: // a cancel is already pending
	}
	j.mu.Lock()
	if j.evalCancel != nil {
		j.evalCancel()
	}
	j.mu.Unlock()
	select {
	case <-j.done:
	case <-ctx.Done():
		return Job{}, fmt.Errorf("cancel wait job %q: %w", id, ctx.Err())
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.ended == nil {
		// The engine stopped before the job goroutine saw the cancel: the job
		// stays live in the store and resumes at the next start.
		return Job{}, fmt.Errorf("cancel wait job %q: %w", id, ErrStopped)
	}
	if j.ended.Status != StatusCancelled {
		return *j.ended, fmt.Errorf("cancel wait job %q: it ended %s first: %w", id, j.ended.Status, ErrNotLive)
	}
	return *j.ended, nil
}

// Claim takes back a wait run left live by a previous process; give it to
// runs.Recover (or call Resume). It returns false for other kinds and for
// runs whose spec cannot be decoded (Recover then ends them as errors).
// Resumed jobs keep their original deadline; one already past ends as timed
// out, and is notified, as soon as Run starts it.
func (e *Engine) Claim(run runs.Run) bool {
	if run.Kind != KindWait {
		return false
	}
	var sp spec
	if err := json.Unmarshal(run.Spec, &sp); err != nil || sp.Criteria == "" {
		e.log.Warn("cannot resume wait run: bad spec", "run_id", run.ID, "error", err)
		return false
	}
	var t capture.Target
	var session string
	var err error
	if sp.Source == "" {
		// Created on another daemon for this host: the target is resolved
		// here, where its display is.
		if sp.Display == "" {
			sp.Display = e.opts.DefaultDisplay
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		src, rerr := e.resolveSource(ctx, sp.Display, sp.Target, true)
		cancel()
		if rerr != nil {
			e.log.Warn("cannot start a wait created for this host: bad target", "run_id", run.ID, "target", sp.Target, "error", rerr)
			return false
		}
		sp.Source, t, session = src.source, src.target, src.session
	} else if t, session, err = targetFor(sp); err != nil {
		e.log.Warn("cannot resume wait run: bad target", "run_id", run.ID, "target", sp.Target, "error", err)
		return false
	}
	if sp.PollIntervalMs <= 0 {
		sp.PollIntervalMs = e.opts.PollInterval.Milliseconds()
	}
	j := newJob(run.ID, sp)
	j.target, j.session = t, session
	if err := e.enqueue(j); err != nil {
		return false
	}
	e.log.Info("wait job resumed", "run_id", run.ID, "criteria", sp.Criteria, "deadline", sp.Deadline)
	return true
}

// recoverer is runs.Registry's start-up recovery.
type recoverer interface {
	Recover(ctx context.Context, claim func(runs.Run) bool) error
}

// Resume offers every run left live by a previous process to Claim, through
// the registry's Recover (which ends unclaimed runs of any kind). Call it
// once at start-up; use Claim directly when several engines share one
// Recover call.
func (e *Engine) Resume(ctx context.Context) error {
	r, ok := e.opts.Runs.(recoverer)
	if !ok {
		return errors.New("resume wait jobs: the run registry has no Recover")
	}
	if err := r.Recover(ctx, e.Claim); err != nil {
		return fmt.Errorf("resume wait jobs: %w", err)
	}
	return nil
}

// WaitFor creates a wait from s and blocks until it ends: met when it
// resolved, with the judge's evidence (or why it ended otherwise). When
// ctx ends first the wait is cancelled. It is the task orchestrator's
// wait_for step: one judgement per screen change while it waits.
func (e *Engine) WaitFor(ctx context.Context, s Spec) (met bool, evidence string, err error) {
	j, err := e.Create(ctx, s)
	if err != nil {
		return false, "", err
	}
	e.mu.Lock()
	live := e.jobs[j.ID]
	e.mu.Unlock()
	if live != nil {
		select {
		case <-live.done:
		case <-ctx.Done():
			_, _ = e.Cancel(context.WithoutCancel(ctx), j.ID, "the caller stopped waiting")
			return false, "", ctx.Err()
		}
	}
	got, err := e.Get(context.WithoutCancel(ctx), j.ID)
	if err != nil {
		return false, "", err
	}
	if got.Status == StatusResolved {
		return true, got.Evidence, nil
	}
	why := got.Status
	if got.Reason != "" {
		why += ": " + got.Reason
	} else if got.LastVerdict != nil && got.LastVerdict.Evidence != "" {
		why += " (last verdict: " + got.LastVerdict.Evidence + ")"
	}
	return false, why, nil
}

// cancelElsewhere cancels a wait live in the store but run by another
// process (another host's daemon): the cancellation is notified and the
// run ended from here; its daemon sees the end and stops judging
// (EndedElsewhere), its own attempt at the same notification a no-op (same
// key).
func (e *Engine) cancelElsewhere(ctx context.Context, run runs.Run, reason string) (Job, error) {
	v, err := jobFromRun(run)
	if err != nil {
		return Job{}, err
	}
	msg := cleanMessage(CancelledMessage(run.ID, v.Criteria, reason))
	if err := e.notify(ctx, run.ID, StatusCancelled, msg); err != nil {
		return Job{}, err
	}
	ended, err := e.opts.Runs.End(ctx, run.ID, StatusCancelled, reason, result{Reason: reason, Message: msg})
	if err != nil {
		if errors.Is(err, runs.ErrEnded) {
			return Job{}, fmt.Errorf("cancel wait job %q: %w", run.ID, ErrNotLive)
		}
		return Job{}, fmt.Errorf("cancel wait job %q: %w", run.ID, err)
	}
	e.metrics.resolved(StatusCancelled)
	return jobFromRun(ended)
}

// EndedElsewhere stops a job whose run another process ended (a cancel
// through another daemon): the job ends here as cancelled without a second
// notification (the same key) or a second end. Wire it to the registry's
// OnEndedElsewhere.
func (e *Engine) EndedElsewhere(run runs.Run) {
	j := e.live(run.ID)
	if j == nil {
		return
	}
	reason := run.Error
	if reason == "" {
		reason = "ended by another process (" + run.Status + ")"
	}
	select {
	case j.cancelCh <- reason:
	default:
	}
	j.mu.Lock()
	if j.evalCancel != nil {
		j.evalCancel()
	}
	j.mu.Unlock()
}
