package smartwait

import (
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// TestWaitForAWindowThatOpensLater (issue 17, item 22): a wait on a window
// that is not open yet is accepted, judged "not open" as NO without a judge
// call, and judged the moment the window maps; a strict wait is refused.
func TestWaitForAWindowThatOpensLater(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 640, Height: 400})
	mj, jb := newMarkerJudge(t)
	h := newHarness(t, harnessOpts{judge: jb, display: dpy})

	if _, err := h.eng.Create(t.Context(), Spec{Criteria: "a red marker is visible", Target: "window:later-win", StrictTarget: true}); !isValidation(err, "target") {
		t.Fatalf("strict wait on a missing window = %v, want a target error", err)
	}
	job, err := h.eng.Create(t.Context(), Spec{Criteria: "a red marker is visible", Target: "window:later-win", Timeout: 2 * time.Minute, PollInterval: time.Minute})
	if err != nil {
		t.Fatalf("wait on a window not open yet: %v", err)
	}
	eventually(t, "a NO saying the window is not open", func() bool {
		j, _ := h.eng.Get(t.Context(), job.ID)
		return j.LastVerdict != nil && strings.Contains(j.LastVerdict.Evidence, "not open")
	})
	if n := mj.calls.Load(); n != 0 {
		t.Errorf("judge called %d times while the window was not open", n)
	}
	// The window opens, red: the wait resolves (a poll interval of a
	// minute, so the window's appearance, not the backstop, triggers it).
	testx.NewWindow(t, dpy, testx.Spec{Title: "later-win", X: 10, Y: 10, W: 200, H: 150, Fill: red})
	end := h.waitEnd(job.ID, 30*time.Second)
	if end.Status != StatusResolved {
		t.Fatalf("wait ended %s (%s), want resolved once the window opened", end.Status, end.Reason)
	}
}
