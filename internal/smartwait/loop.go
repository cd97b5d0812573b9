package smartwait

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/judge"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/store"
)

// observation is what one evaluation looked at: a frame, or a pane's text.
type observation struct {
	frame *frame.Frame
	text  string
	hash  uint64
	at    time.Time // when the evaluation was triggered (change or poll)
}

// watchRetry spaces attempts to re-establish a failed or ended change
// watch; the poll carries the job meanwhile.
const watchRetry = 5 * time.Second

// runJob watches one job until it ends or ctx (Run's) ends. It is the only
// goroutine that ends the job's run.
func (e *Engine) runJob(ctx context.Context, j *job) {
	defer e.wg.Done()
	defer close(j.done)
	defer func() {
		// A panic while capturing or judging (the X library, a judge) ends
		// this wait as an error instead of killing every other wait.
		if r := recover(); r != nil {
			err := fmt.Errorf("wait %s: internal error (recovered panic: %v)", j.id, r)
			e.log.Error("wait job panicked", "run_id", j.id, "err", err)
			e.finish(ctx, j, StatusError, err.Error(), nil)
		}
	}()

	j.mu.Lock()
	sp := j.spec
	j.mu.Unlock()
	if !e.now().Before(sp.Deadline) {
		e.finish(ctx, j, StatusTimeout, "", nil)
		return
	}

	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	var (
		changes   <-chan struct{}
		lastWatch time.Time
	)
	watch := func() {
		if sp.Source == sourceTmux || time.Since(lastWatch) < watchRetry {
			return // tmux has no damage: polled
		}
		lastWatch = time.Now()
		ch, err := e.opts.Capture.Watch(wctx, sp.Display, j.target)
		if err != nil {
			e.log.Debug("watch target: falling back to polling", "run_id", j.id, "display", sp.Display, "error", err)
			return
		}
		changes = ch
	}
	watch()
	// Structural criteria are woken by accessibility events too.
	tree, lastTree := e.watchStructure(wctx, j, sp), time.Now()
	e.emitPlan(ctx, j, sp, "")

	poll := time.NewTimer(0) // first evaluation at once
	defer poll.Stop()
	deadline := time.NewTimer(sp.Deadline.Sub(e.now()))
	defer deadline.Stop()

	for {
		select {
		case <-ctx.Done():
			return // leave the run live: the next start resumes it
		case reason := <-j.cancelCh:
			e.finish(ctx, j, StatusCancelled, reason, nil)
			return
		case <-deadline.C:
			e.finish(ctx, j, StatusTimeout, "", nil)
			return
		case <-j.updated:
			j.mu.Lock()
			sp = j.spec
			j.mu.Unlock()
			deadline.Reset(sp.Deadline.Sub(e.now()))
			if tree == nil {
				tree, lastTree = e.watchStructure(wctx, j, sp), time.Now()
			}
			e.emitPlan(ctx, j, sp, "")
		case _, ok := <-tree:
			if !ok {
				tree = nil // the bus went away: re-watched at a poll
				continue
			}
		case _, ok := <-changes:
			if !ok {
				changes = nil // the watch ended; polling carries on, re-watched at the next poll
				continue
			}
			if e.structureOnly(j) {
				continue // pixels cannot change a verdict of the tree
			}
			// The first change after a quiet spell (no change for a poll
			// interval plus a judge latency) is judged at once. While
			// changes go on, they wait for the poll timer, which fires a
			// poll interval after the last evaluation and judges the newest
			// frame: the seed's own cadence (judge, then sleep), so a busy
			// screen never costs more judge calls than the seed's loop.
			now := time.Now()
			j.mu.Lock()
			prev := j.lastChangeAt
			j.lastChangeAt = now
			quiet := sp.poll() + j.lastLatency
			j.mu.Unlock()
			if !prev.IsZero() && now.Sub(prev) < quiet {
				e.metrics.deferred.Inc()
				continue
			}
		case <-poll.C:
			if changes == nil {
				watch()
			}
			if tree == nil && time.Since(lastTree) >= watchRetry {
				tree, lastTree = e.watchStructure(wctx, j, sp), time.Now()
			}
		}

		trigger := time.Now()
		// A cancel or a passed deadline wins over an evaluation.
		select {
		case reason := <-j.cancelCh:
			e.finish(ctx, j, StatusCancelled, reason, nil)
			return
		default:
		}
		j.mu.Lock()
		sp = j.spec
		j.mu.Unlock()
		if !e.now().Before(sp.Deadline) {
			e.finish(ctx, j, StatusTimeout, "", nil)
			return
		}

		obs, v, met := e.evaluate(ctx, j, sp, trigger)
		if met {
			e.metrics.detection.Observe(time.Since(trigger).Seconds())
			e.finish(ctx, j, StatusResolved, "", &resolution{obs: obs, verdict: v})
			return
		}
		interval := sp.poll()
		if sp.Source == sourceTmux {
			interval = min(interval, e.opts.PtyPoll)
		}
		j.mu.Lock()
		streak := j.failStreak
		j.mu.Unlock()
		interval = judgeBackoff(interval, streak)
		if !poll.Stop() {
			select {
			case <-poll.C:
			default:
			}
		}
		poll.Reset(interval)
	}
}

// maxJudgeBackoff caps the wait between retries of a judge that gave no
// verdict (error, empty or unparseable reply).
const maxJudgeBackoff = 30 * time.Second

// judgeBackoff is the poll interval after streak judgements in a row that
// gave no YES/NO: the interval doubled per failure, up to maxJudgeBackoff
// (or the interval itself when it is longer). A change on screen is judged
// at once regardless: the backoff only spaces retries on the same content.
func judgeBackoff(interval time.Duration, streak int) time.Duration {
	if streak <= 0 {
		return interval
	}
	limit := max(interval, maxJudgeBackoff)
	d := interval
	for range min(streak, 16) {
		d *= 2
		if d >= limit {
			return limit
		}
	}
	return d
}

// evalContext is one evaluation's context: it ends at the wait's deadline,
// and Cancel or Update end it early through j.evalCancel until done runs.
func (e *Engine) evalContext(ctx context.Context, j *job, sp spec) (context.Context, func()) {
	ectx, cancel := context.WithDeadline(ctx, sp.Deadline)
	j.mu.Lock()
	j.evalCancel = cancel
	j.mu.Unlock()
	return ectx, func() {
		j.mu.Lock()
		j.evalCancel = nil
		j.mu.Unlock()
		cancel()
	}
}

// evaluate observes the job's target once and judges it unless its content
// hash and criteria equal the job's last judgement. It reports whether the
// condition is met.
func (e *Engine) evaluate(ctx context.Context, j *job, sp spec, trigger time.Time) (observation, judge.Verdict, bool) {
	if plan := e.structPlan(j, sp.Criteria); plan != nil {
		return e.evaluateStructure(ctx, j, sp, trigger, *plan)
	}
	ectx, done := e.evalContext(ctx, j, sp)
	defer done()

	// A judge slot first, then the capture: a wait whose turn has not come
	// holds no frame, and judges the newest one when its turn comes.
	release, err := e.judgeSlot(ectx)
	if err != nil {
		return observation{at: trigger}, judge.Verdict{}, false // cancelled, updated or past its deadline
	}
	handed := false // to judgeShared, which releases it when the call is done
	defer func() {
		if !handed {
			release()
		}
	}()
	obs, err := e.observe(ectx, j, sp)
	obs.at = trigger
	if err != nil {
		e.captureFailed(ctx, ectx, j, err)
		return obs, judge.Verdict{}, false
	}
	if e.judgedAlready(j, sp, obs) {
		return obs, judge.Verdict{}, false
	}

	q := judge.Question{Condition: sp.Criteria, Elapsed: e.now().Sub(sp.CreatedAt), Frame: obs.frame, Text: obs.text, RunID: j.id}
	start := time.Now()
	handed = true
	v, deduped, err := e.judgeShared(ctx, ectx, q, obs.hash, release)
	latency := time.Since(start)
	if ectx.Err() != nil {
		// Cancelled (Cancel, Update), cut by the deadline, or shutting down:
		// the caller decides what happens next; this is no judge failure.
		return obs, judge.Verdict{}, false
	}
	e.keepFrame(ctx, j.id, obs)
	if !e.recordVerdict(ctx, j, sp, obs, v, deduped, latency, err) {
		return obs, judge.Verdict{}, false
	}
	return obs, v, v.Met
}

// captureFailed records a capture that failed: a window that is not open
// is a NO without a judge call; another error is counted, and each
// distinct one is an event.
func (e *Engine) captureFailed(ctx, ectx context.Context, j *job, err error) {
	if te, ok := errors.AsType[*capture.TargetError](err); ok && !te.Ambiguous && j.target.Kind == capture.Window {
		// The window is not open (yet, or any more): a NO, with that as
		// the evidence, and no judge call. One event per absence.
		evidence := "the window " + j.target.String() + " is not open"
		j.mu.Lock()
		changed := j.lastCapErr != evidence
		j.lastCapErr = evidence
		j.lastVerdict = &Verdict{At: e.now().UTC(), Evidence: evidence, Backend: "absent"}
		j.mu.Unlock()
		if changed {
			e.emitVerdict(ctx, j.id, map[string]any{"met": false, "evidence": evidence, "backend": "absent"})
		}
		return
	}
	if ectx.Err() != nil {
		return
	}
	e.metrics.captureErrors.Inc()
	msg := "capture: " + err.Error()
	j.mu.Lock()
	j.captureErrs++
	j.lastErr = msg
	changed := msg != j.lastCapErr
	j.lastCapErr = msg
	j.mu.Unlock()
	if changed { // one event per distinct capture error, not one per poll
		e.emitVerdict(ctx, j.id, map[string]any{"met": false, "error": msg, "backend": e.opts.Judge.Name()})
	}
	e.log.Debug("capture for wait job", "run_id", j.id, "error", err)
}

// judgedAlready reports whether obs is the content last judged against the
// same criteria (counted as skipped); a capture succeeded either way.
func (e *Engine) judgedAlready(j *job, sp spec, obs observation) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.lastCapErr = ""
	if j.judged && j.judgedHash == obs.hash && j.judgedCrit == sp.Criteria {
		j.skipped++
		e.metrics.skipped.Inc()
		return true
	}
	return false
}

// recordVerdict records a judgement of obs (or the judge's error) in j and
// emits it as a verdict event. false: the judgement does not count (the
// judge failed, or the criteria changed while it judged).
func (e *Engine) recordVerdict(ctx context.Context, j *job, sp spec, obs observation, v judge.Verdict, deduped bool, latency time.Duration, err error) bool {
	rec := Verdict{
		At:        e.now().UTC(),
		FrameHash: fmtHash(obs.hash),
		Latency:   latency,
		Backend:   e.opts.Judge.Name(),
		Deduped:   deduped,
	}
	data := map[string]any{
		"frameHash": rec.FrameHash,
		"latencyMs": latency.Milliseconds(),
		"backend":   rec.Backend,
	}
	j.mu.Lock()
	j.evaluations++
	j.lastLatency = latency
	if err != nil {
		j.judgeErrors++
		j.failStreak++
		j.lastJudge = err.Error()
		j.lastErr = "judge: " + err.Error()
		rec.Error = err.Error()
		j.lastVerdict = &rec
		j.mu.Unlock()
		data["met"] = false
		data["error"] = rec.Error
		e.emitVerdict(ctx, j.id, data)
		e.log.Debug("judge wait job", "run_id", j.id, "error", err)
		return false
	}
	stale := j.spec.Criteria != sp.Criteria
	if stale { // criteria changed while judging: the verdict answers the old ones
		j.evaluations--
		j.mu.Unlock()
		return false
	}
	e.countAnswerLocked(j, sp, obs, v)
	rec.Met, rec.Evidence, rec.Model = v.Met, v.Evidence, v.Model
	if !deduped {
		rec.CostUSD, rec.CostUnknown = v.CostUSD, v.CostUnknown
	}
	j.acct.add(rec.Backend, deduped, v)
	j.lastVerdict = &rec
	j.mu.Unlock()
	e.emitVerdict(ctx, j.id, verdictData(data, rec, v, deduped))
	e.log.Debug("judged wait job", "run_id", j.id, "met", v.Met, "frame_hash", rec.FrameHash, "deduped", deduped, "latency", latency)
	return true
}

// countAnswerLocked counts the judge's reply to obs (j.mu held).
func (e *Engine) countAnswerLocked(j *job, sp spec, obs observation, v judge.Verdict) {
	if v.Unparsed {
		// Not an answer: the same content is asked again after a backoff,
		// never remembered as judged (a static screen would never be asked
		// again, and the wait would time out while the model says YES).
		j.judgeErrors++
		j.failStreak++
		j.lastJudge = "unparsed judge reply: " + v.Evidence
		j.lastErr = "judge: " + j.lastJudge
		e.metrics.unparsed.Inc()
		return
	}
	j.judgedOK++
	j.failStreak = 0
	j.judged, j.judgedHash, j.judgedCrit = true, obs.hash, sp.Criteria
	j.lastErr = ""
}

// verdictData completes a verdict event's data with the judge's answer.
func verdictData(data map[string]any, rec Verdict, v judge.Verdict, deduped bool) map[string]any {
	data["met"] = v.Met
	data["evidence"] = v.Evidence
	data["costUsd"] = rec.CostUSD
	if rec.CostUnknown {
		data["costUsd"] = nil // unknown, not $0
		data["costUnknown"] = true
	}
	data["model"] = v.Model
	if deduped {
		data["deduped"] = true
	}
	if v.Unparsed {
		data["unparsed"] = true
	}
	return data
}

// keepFrame stores the frame a judgement saw (Options.Frames), once per
// content hash: a static screen adds nothing.
func (e *Engine) keepFrame(ctx context.Context, runID string, obs observation) {
	if e.opts.Frames == nil || obs.frame == nil {
		return
	}
	jpg, err := obs.frame.JPEG(judgedFrameDim, judgedFrameQuality)
	if err != nil {
		e.log.Warn("encode a judged frame", "run_id", runID, "err", err)
		return
	}
	w, h := frame.TargetSize(obs.frame.W, obs.frame.H, judgedFrameDim)
	f := store.Frame{Hash: fmtHash(obs.hash), JPEG: jpg, Width: w, Height: h}
	if err := e.opts.Frames.PutRunFrame(context.WithoutCancel(ctx), runID, f, e.now()); err != nil {
		e.log.Warn("keep a judged frame", "run_id", runID, "frame_hash", f.Hash, "err", err)
	}
}

// The size and quality judged frames are kept at: the vision judge's own.
const (
	judgedFrameDim     = 960
	judgedFrameQuality = 72
)

// observe captures the job's target: a tmux pane's text or a frame.
func (e *Engine) observe(ctx context.Context, j *job, sp spec) (observation, error) {
	if sp.Source == sourceTmux {
		text, err := e.tmuxCapture(ctx, j.session)
		if err != nil {
			return observation{}, err
		}
		return observation{text: text, hash: textHash(text)}, nil
	}
	f, err := e.opts.Capture.Capture(ctx, sp.Display, j.target)
	if err != nil {
		return observation{}, err
	}
	return observation{frame: f, hash: f.Hash}, nil
}

func (e *Engine) emitVerdict(ctx context.Context, id string, data map[string]any) {
	if _, err := e.opts.Runs.Emit(ctx, id, StreamVerdict, data); err != nil && !errors.Is(err, runs.ErrEnded) && ctx.Err() == nil {
		e.log.Warn("emit verdict event", "run_id", id, "error", err)
	}
}

// resolution is what a met condition was seen on.
type resolution struct {
	obs     observation
	verdict judge.Verdict
}

// finish ends a job: notification enqueued (idempotency key <id>:<outcome>),
// screenshot saved (resolved), task log appended, then the run's end. The
// outcome is the job's in memory at once, so it never reads as watching
// past its deadline; the two writes that carry it (the notification and
// the run's end) are retried until they succeed (a full disk, a read-only
// database), or until the engine stops, when the run stays live in the
// store and the next start resumes it.
func (e *Engine) finish(ctx context.Context, j *job, status, reason string, res *resolution) {
	j.mu.Lock()
	sp := j.spec
	r := result{
		Evaluations: j.evaluations,
		JudgeErrors: j.judgeErrors,
		Skipped:     j.skipped,
		LastError:   j.lastErr,
		Reason:      reason,
	}
	judgeFailedAll := j.judgeErrors > 0 && j.judgedOK == 0
	lastJudge := j.lastJudge
	captureFailedAll := j.evaluations == 0 && j.captureErrs > 0
	lastCap := strings.TrimPrefix(j.lastCapErr, "capture: ")
	j.mu.Unlock()
	r.Judges, r.ModelCalls, r.CostUSD = j.costs()

	var msg string
	switch status {
	case StatusResolved:
		r.Evidence = res.verdict.Evidence
		r.FrameHash = fmtHash(res.obs.hash)
		msg = ResolvedMessage(j.id, sp.Criteria, r.Evidence)
	case StatusTimeout:
		msg = TimeoutMessage(j.id, sp.Criteria, sp.timeout())
		switch {
		case judgeFailedAll:
			msg += " The judge failed on every evaluation: " + trimDot(lastJudge) + "."
		case captureFailedAll:
			msg += " Capture failed on every attempt: " + trimDot(lastCap) + "."
		case strings.HasPrefix(lastCap, "the window "):
			msg += " At the end " + lastCap + "."
		}
	case StatusCancelled:
		msg = CancelledMessage(j.id, sp.Criteria, reason)
	default:
		msg = fmt.Sprintf("[smart_wait error] Job %s: %s — %s.", j.id, sp.Criteria, trimDot(reason))
	}
	msg = cleanMessage(msg)
	r.Message = msg

	// The job reads as ended from now on, in memory, whatever the writes
	// below meet; a caller woken by the run's end never sees it live.
	j.mu.Lock()
	v := j.view()
	v.Status = status
	v.EndedAt = e.now().UTC()
	v.Evidence, v.FrameHash, v.Message, v.Reason = r.Evidence, r.FrameHash, msg, reason
	j.ended = &v
	j.mu.Unlock()

	// The notification goes first: it is what the agent waits for, and the
	// message needs neither the screenshot nor the task log. The run ends
	// last, so a crash before its end resumes the job, and a re-resolution
	// enqueues nothing new (same key).
	if err := e.persist(ctx, j.id, "enqueue wait notification", func(c context.Context) error {
		return e.notify(c, j.id, status, msg)
	}); err != nil {
		e.log.Error("wait notification not enqueued: the engine stopped first; the job resumes at the next start", "run_id", j.id, "status", status, "error", err)
		return
	}
	fctx, cancel := finalCtx(ctx)
	defer cancel()
	if res != nil {
		path, err := e.saveScreenshot(j.id, res.obs)
		if err != nil {
			e.log.Warn("save wait screenshot", "run_id", j.id, "error", err)
		}
		r.Screenshot = path
		j.mu.Lock()
		j.ended.Screenshot = path
		j.mu.Unlock()
	}
	if sp.TaskID != "" && e.opts.Store != nil {
		if err := e.opts.Store.AppendTaskProgress(fctx, sp.TaskID, j.id, msg); err != nil {
			e.log.Warn("append wait outcome to task log", "run_id", j.id, "task_id", sp.TaskID, "error", err)
		}
	}

	errMsg := ""
	if status == StatusCancelled || status == StatusError {
		errMsg = reason
	}
	var run runs.Run
	if err := e.persist(ctx, j.id, "end wait run", func(c context.Context) error {
		var err error
		run, err = e.opts.Runs.End(c, j.id, status, errMsg, r)
		if errors.Is(err, runs.ErrEnded) {
			return nil // an earlier attempt ended it after all
		}
		return err
	}); err != nil {
		e.log.Error("wait run not ended: the engine stopped first; the job resumes at the next start and is notified once", "run_id", j.id, "status", status, "error", err)
		return
	}
	e.metrics.resolved(status)
	if !run.EndedAt.IsZero() {
		j.mu.Lock()
		j.ended.EndedAt = run.EndedAt
		j.mu.Unlock()
	}
	e.forget(j.id)
	e.log.Info("wait job ended", "run_id", j.id, "status", status, "evaluations", r.Evaluations, "judge_errors", r.JudgeErrors)
}

// Retry bounds of persist.
const (
	persistFirstRetry = 100 * time.Millisecond
	persistMaxRetry   = 5 * time.Second
)

// persist runs one write of a job's outcome, retrying it with backoff
// (100 ms doubling to 5 s) until it succeeds or ctx (Run's) ends; each
// attempt has finalCtx's grace, so the last one survives a shutdown. It
// returns the last error when it gives up. A run that no longer exists is
// not retried.
func (e *Engine) persist(ctx context.Context, id, what string, write func(context.Context) error) error {
	delay := persistFirstRetry
	for attempt := 1; ; attempt++ {
		actx, cancel := finalCtx(ctx)
		err := write(actx)
		cancel()
		if err == nil {
			if attempt > 1 {
				e.log.Info(what+": written after retries", "run_id", id, "attempts", attempt)
			}
			return nil
		}
		if errors.Is(err, runs.ErrNotFound) {
			return err
		}
		e.metrics.persistRetries.Inc()
		if attempt == 1 {
			e.log.Error(what+" failed: retrying until it can be written", "run_id", id, "error", err)
		} else {
			e.log.Debug(what+" failed again", "run_id", id, "attempt", attempt, "error", err)
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
		delay = min(2*delay, persistMaxRetry)
	}
}

// saveScreenshot writes the judged frame (PNG) or pane text (.txt) under
// ScreenshotDir and returns its path.
func (e *Engine) saveScreenshot(id string, obs observation) (string, error) {
	if e.opts.ScreenshotDir == "" {
		return "", nil
	}
	if err := os.MkdirAll(e.opts.ScreenshotDir, 0o700); err != nil {
		return "", fmt.Errorf("create screenshot dir %s: %w", e.opts.ScreenshotDir, err)
	}
	var (
		data []byte
		name string
	)
	if obs.frame != nil {
		png, err := obs.frame.PNG()
		if err != nil {
			return "", fmt.Errorf("encode screenshot of %s: %w", id, err)
		}
		data, name = png, safeName(id)+".png"
	} else {
		data, name = []byte(obs.text), safeName(id)+".txt"
	}
	path := filepath.Join(e.opts.ScreenshotDir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", fmt.Errorf("write screenshot %s: %w", path, err)
	}
	return path, nil
}

func safeName(id string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 || r == '.' {
			return '_'
		}
		return r
	}, id)
}

// ResolvedMessage is the notification text of a resolved job.
func ResolvedMessage(id, criteria, evidence string) string {
	return fmt.Sprintf("[smart_wait resolved] Job %s: %s → %s", id, criteria, evidence)
}

// TimeoutMessage is the notification text of a timed-out job; timeout is
// printed in whole seconds.
func TimeoutMessage(id, criteria string, timeout time.Duration) string {
	return fmt.Sprintf("[smart_wait timeout] Job %s: %s — Timeout after %ds.", id, criteria, int64(timeout/time.Second))
}

// CancelledMessage is the notification text of a cancelled job.
func CancelledMessage(id, criteria, reason string) string {
	if reason == "" {
		return fmt.Sprintf("[smart_wait cancelled] Job %s: %s — Cancelled.", id, criteria)
	}
	return fmt.Sprintf("[smart_wait cancelled] Job %s: %s — Cancelled: %s.", id, criteria, trimDot(reason))
}

func trimDot(s string) string { return strings.TrimRight(strings.TrimSpace(s), ".") }
