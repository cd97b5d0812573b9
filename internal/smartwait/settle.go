package smartwait

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/runs"
)

// SettleSpec asks Settle to wait until a target stops changing.
type SettleSpec struct {
	Target     string        // as for Spec; default screen
	Display    string        // "" = Options.DefaultDisplay
	Quiet      time.Duration // how long frames must stay unchanged; default 1s
	Timeout    time.Duration // give up after; default 30s, 1s..MaxTimeout
	SessionKey string
}

// SettleResult is the outcome of Settle.
type SettleResult struct {
	RunID     string
	Settled   bool          // false: Timeout passed while the target kept changing
	Waited    time.Duration // from the start to settling (including the quiet period) or to the timeout
	Changes   int           // distinct content changes seen
	FrameHash string        // content hash of the last frame (or pane text)
}

type settleSpec struct {
	Target    string    `json:"target"`
	Display   string    `json:"display"`
	Source    string    `json:"source"`
	QuietMs   int64     `json:"quietMs"`
	TimeoutMs int64     `json:"timeoutMs"`
	Deadline  time.Time `json:"deadline"`
}

type settleResult struct {
	Settled   bool   `json:"settled"`
	WaitedMs  int64  `json:"waitedMs"`
	Changes   int    `json:"changes"`
	FrameHash string `json:"frameHash,omitempty"`
}

// Settle blocks until the target's content hash has not changed for Quiet,
// or Timeout passes. It is model-free: damage notifications trigger a
// capture, the exact content hash decides whether anything changed (a redraw
// of identical pixels is no change), and one last capture at the end of the
// quiet period guards against a missed notification. tmux panes are polled.
// Each settle is a short run of kind "settle" (status settled, timeout, or
// cancelled when ctx ends first).
func (e *Engine) Settle(ctx context.Context, s SettleSpec) (SettleResult, error) {
	quiet := s.Quiet
	if quiet == 0 {
		quiet = DefaultSettleQuiet
	}
	timeout := s.Timeout
	if timeout == 0 {
		timeout = DefaultSettleLimit
	}
	if err := e.checkTimeout(timeout); err != nil {
		return SettleResult{}, err
	}
	if quiet < 10*time.Millisecond || quiet >= timeout {
		return SettleResult{}, &ValidationError{Field: "quiet", Message: fmt.Sprintf("must be at least 0.01 seconds and less than the timeout (%s)", timeout)}
	}
	display := s.Display
	if display == "" {
		display = e.opts.DefaultDisplay
	}
	targetStr := strings.TrimSpace(s.Target)
	if targetStr == "" {
		targetStr = "screen"
	}
	src, err := e.resolveSource(ctx, display, targetStr, false)
	if err != nil {
		return SettleResult{}, err
	}
	start := time.Now()
	sp := settleSpec{Target: targetStr, Display: display, Source: src.source, QuietMs: quiet.Milliseconds(),
		TimeoutMs: timeout.Milliseconds(), Deadline: e.now().UTC().Add(timeout)}
	run, err := e.opts.Runs.Start(ctx, runs.StartOptions{Kind: KindSettle, SessionKey: s.SessionKey, Spec: sp})
	if err != nil {
		return SettleResult{}, fmt.Errorf("start settle run: %w", err)
	}
	res := SettleResult{RunID: run.ID}
	end := func(status, errMsg string) {
		fctx, cancel := finalCtx(ctx)
		defer cancel()
		r := settleResult{Settled: res.Settled, WaitedMs: res.Waited.Milliseconds(), Changes: res.Changes, FrameHash: res.FrameHash}
		if _, err := e.opts.Runs.End(fctx, run.ID, status, errMsg, r); err != nil && !errors.Is(err, runs.ErrEnded) {
			e.log.Warn("end settle run", "run_id", run.ID, "error", err)
		}
	}

	j := &job{id: run.ID, target: src.target, session: src.session}
	jsp := spec{Source: src.source, Display: display}
	observe := func() (uint64, error) {
		o, err := e.observe(ctx, j, jsp)
		return o.hash, err
	}

	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	var changes <-chan struct{}
	if src.source != sourceTmux {
		if ch, err := e.opts.Capture.Watch(wctx, display, src.target); err == nil {
			changes = ch
		} else {
			e.log.Debug("settle: watch failed, polling", "run_id", run.ID, "error", err)
		}
	}
	var tick <-chan time.Time
	if changes == nil {
		t := time.NewTicker(min(e.opts.PtyPoll, quiet/2+1))
		defer t.Stop()
		tick = t.C
	}

	last, err := observe()
	if err != nil {
		res.Waited = time.Since(start)
		end(StatusError, err.Error())
		return res, fmt.Errorf("settle %s on %s: %w", targetStr, display, err)
	}
	res.FrameHash = fmtHash(last)
	quietT := time.NewTimer(quiet)
	defer quietT.Stop()
	overall := time.NewTimer(timeout)
	defer overall.Stop()
	check := func() bool { // reports a change
		h, err := observe()
		if err != nil {
			e.log.Debug("settle capture", "run_id", run.ID, "error", err)
			return false
		}
		if h == last {
			return false
		}
		last = h
		res.Changes++
		res.FrameHash = fmtHash(h)
		quietT.Reset(quiet)
		return true
	}
	for {
		select {
		case <-ctx.Done():
			res.Waited = time.Since(start)
			end(StatusCancelled, ctx.Err().Error())
			return res, fmt.Errorf("settle %s on %s: %w", targetStr, display, ctx.Err())
		case <-overall.C:
			res.Waited = time.Since(start)
			end(StatusTimeout, "")
			return res, nil
		case _, ok := <-changes:
			if !ok {
				changes = nil
				t := time.NewTicker(min(e.opts.PtyPoll, quiet/2+1))
				defer t.Stop()
				tick = t.C
				continue
			}
			check()
		case <-tick:
			check()
		case <-quietT.C:
			if check() {
				continue
			}
			res.Settled = true
			res.Waited = time.Since(start)
			end(StatusSettled, "")
			return res, nil
		}
	}
}
