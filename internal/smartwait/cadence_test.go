package smartwait

import (
	"image/color"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// TestBusyScreenKeepsTheSeedsCadence (issue 17, item 18): while the screen
// keeps changing, a wait judges at most once per poll interval after its
// last evaluation, like the seed's judge-then-sleep loop, instead of once
// per change; the first change after a quiet spell is judged at once. Here
// 40 changes within one long poll interval cost one call (the first
// change) beyond the first evaluation; before, each change was judged.
func TestBusyScreenKeepsTheSeedsCadence(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 320, Height: 200})
	w := testx.NewWindow(t, dpy, testx.Spec{Title: "clock", X: 0, Y: 0, W: 320, H: 200, Fill: color.RGBA{0x80, 0x80, 0x80, 0xff}})
	mj, jb := newMarkerJudge(t)
	h := newHarness(t, harnessOpts{judge: jb, display: dpy})
	job, err := h.eng.Create(t.Context(), Spec{Criteria: "a red marker is visible", Timeout: 2 * time.Minute, PollInterval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the first judgement", func() bool { return mj.calls.Load() >= 1 })
	for k := range 40 {
		w.SetPixel(k, 0, color.RGBA{R: 0x10, G: byte(k), B: 0x20, A: 0xff})
		time.Sleep(50 * time.Millisecond)
	}
	if n := mj.calls.Load(); n != 2 {
		t.Errorf("judge calls after 40 changes within one poll interval = %d, want 2: the first evaluation and the first change (the seed's cadence)", n)
	}
	if _, err := h.eng.Cancel(t.Context(), job.ID, "test over"); err != nil {
		t.Fatal(err)
	}
}
