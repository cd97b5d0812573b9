package smartwait

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// inflightJudge is a marker judge (YES only when the red marker is in the
// JPEG) that counts its calls in flight and remembers the most at once;
// started is signalled as each call begins.
type inflightJudge struct {
	now, most, calls atomic.Int64
	started          chan struct{}
}

func newInflightJudge(t *testing.T, delay time.Duration) (*inflightJudge, *llmtest.Server) {
	t.Helper()
	ij := &inflightJudge{started: make(chan struct{}, 1000)}
	srv := llmtest.NewOpenAI(t, func(r llmtest.Request) llmtest.Reply {
		n := ij.now.Add(1)
		defer ij.now.Add(-1)
		for m := ij.most.Load(); n > m && !ij.most.CompareAndSwap(m, n); m = ij.most.Load() {
		}
		ij.calls.Add(1)
		ij.started <- struct{}{}
		time.Sleep(delay)
		if imgs := r.Images(); len(imgs) == 1 && imgs[0].Image != nil && countMarker(imgs[0].Image) >= 100 {
			return llmtest.Reply{Text: "YES: the red marker is visible."}
		}
		return llmtest.Reply{Text: "NO: no red marker."}
	})
	return ij, srv
}

// TestJudgeConcurrencyBound: twelve waits with distinct conditions, each
// needing its own judge call, never have more than JudgeConcurrency (3)
// calls in flight, use all three, and all resolve once the marker shows:
// none starves behind the bound.
func TestJudgeConcurrencyBound(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 640, Height: 480})
	w := testx.NewWindow(t, dpy, testx.Spec{Title: "canvas", X: 10, Y: 10, W: 200, H: 150, Fill: grey})
	ij, srv := newInflightJudge(t, 200*time.Millisecond)
	h := newHarness(t, harnessOpts{judge: visionJudge(t, srv), display: dpy, modify: func(o *Options) { o.JudgeConcurrency = 3 }})
	var ids []string
	for i := range 12 {
		j, err := h.eng.Create(t.Context(), Spec{Criteria: fmt.Sprintf("a red marker is visible (%d)", i), Timeout: 120 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	eventually(t, "every wait judged once", func() bool { return ij.calls.Load() >= 12 })
	w.Fill(red)
	for _, id := range ids {
		if got := h.waitEnd(id, 60*time.Second); got.Status != StatusResolved {
			t.Errorf("wait %s ended %s, want resolved", id, got.Status)
		}
	}
	if most := ij.most.Load(); most != 3 {
		t.Errorf("at most %d judge calls in flight, want exactly the bound, 3", most)
	}
}

// TestQueuedWaitJudgesNewestFrame: with one judge slot, waits queued behind
// a call capture their frame when their turn comes, not when they queued:
// the marker drawn while the first call runs is what each of the others
// sees in its first and only judgement.
func TestQueuedWaitJudgesNewestFrame(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 640, Height: 480})
	w := testx.NewWindow(t, dpy, testx.Spec{Title: "canvas", X: 10, Y: 10, W: 200, H: 150, Fill: grey})
	ij, srv := newInflightJudge(t, 500*time.Millisecond)
	h := newHarness(t, harnessOpts{judge: visionJudge(t, srv), display: dpy, modify: func(o *Options) { o.JudgeConcurrency = 1 }})
	var ids []string
	for i := range 5 {
		j, err := h.eng.Create(t.Context(), Spec{Criteria: fmt.Sprintf("a red marker is visible (%d)", i), Timeout: 120 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	<-ij.started // the first call runs on the grey screen; the others queue
	w.Fill(red)
	first := 0
	for _, id := range ids {
		got := h.waitEnd(id, 60*time.Second)
		if got.Status != StatusResolved {
			t.Fatalf("wait %s ended %s, want resolved", id, got.Status)
		}
		if got.Evaluations == 2 {
			first++ // the wait judged on the grey screen, then on the marker
		} else if got.Evaluations != 1 {
			t.Errorf("wait %s took %d judgements, want 1: it judged a frame older than its turn", id, got.Evaluations)
		}
	}
	if first != 1 || ij.calls.Load() != 6 || ij.most.Load() != 1 {
		t.Errorf("%d waits judged twice, %d calls, %d at most in flight; want 1, 6 and 1", first, ij.calls.Load(), ij.most.Load())
	}
}
