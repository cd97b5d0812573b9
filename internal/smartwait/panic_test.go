package smartwait

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/judge"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// panicJudge panics on its first call and answers NO after that.
type panicJudge struct{ calls atomic.Int64 }

func (p *panicJudge) Name() string       { return "panicky" }
func (p *panicJudge) Check(string) error { return nil }
func (p *panicJudge) Judge(context.Context, judge.Question) (judge.Verdict, error) {
	if p.calls.Add(1) == 1 {
		var xs []int
		_ = xs[p.calls.Load()] // an index out of range: a real runtime panic
	}
	return judge.Verdict{Met: false, Evidence: "not yet"}, nil
}

// TestPanicInJudgeEndsOnlyThatCall: a panic while judging must not kill
// the process: the judgement fails as an error, the wait runs to its
// timeout and the engine keeps serving other waits.
func TestPanicInJudgeEndsOnlyThatCall(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 320, Height: 200})
	pj := &panicJudge{}
	h := newHarness(t, harnessOpts{judge: pj, display: dpy})
	job, err := h.eng.Create(t.Context(), Spec{Criteria: "a dialog is open", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	end := h.waitEnd(job.ID, 30*time.Second)
	if end.Status != StatusTimeout {
		t.Errorf("wait after a judge panic ended %s (%s), want timeout", end.Status, end.Reason)
	}
	if end.JudgeErrors != 1 || pj.calls.Load() < 2 {
		t.Errorf("wait after a judge panic: %d judge errors, %d calls; want the panic counted as one judge error and judging to go on", end.JudgeErrors, pj.calls.Load())
	}
	// The engine still takes and runs waits.
	job2, err := h.eng.Create(t.Context(), Spec{Criteria: "a dialog is open", Timeout: time.Second})
	if err != nil {
		t.Fatalf("Create after the panic: %v", err)
	}
	if end := h.waitEnd(job2.ID, 30*time.Second); end.Status != StatusTimeout {
		t.Errorf("second wait ended %s, want timeout", end.Status)
	}
}
