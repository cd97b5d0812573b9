package smartwait

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/testfs"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// The disk fills up (a real tmpfs) just before the condition shows: the
// YES cannot be written. The job reads resolved at once and stays so past
// its deadline (never watching, never timeout); the store reports the
// failure; once space returns the outcome is written and notified as
// resolved, and a restart finds it resolved.
func TestDiskFullWhileResolving(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 320, Height: 240})
	w := testx.NewWindow(t, dpy, testx.Spec{Title: "canvas", W: 100, H: 100, Fill: grey})
	mj, jb := newMarkerJudge(t)
	fs := testfs.Tiny(t, 1<<20)
	dbPath := filepath.Join(fs.Dir, "acu.db")
	out := filepath.Join(t.TempDir(), "notified.txt")
	ctx := t.Context()

	h := newHarness(t, harnessOpts{judge: jb, display: dpy, dbPath: dbPath, outFile: out})
	const criteria = "a red marker is visible"
	job, err := h.eng.Create(ctx, Spec{Criteria: criteria, Timeout: 3 * time.Second, PollInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	eventually(t, "the first judgement", func() bool { return mj.calls.Load() >= 1 })
	fs.Fill()
	w.Fill(red)

	eventually(t, "the YES, in memory", func() bool {
		j, _ := h.eng.Get(ctx, job.ID)
		return j.Status == StatusResolved
	})
	if run, err := h.reg.Get(ctx, job.ID); err != nil || !run.Live() {
		t.Fatalf("stored run = %+v, %v; want still live (the disk is full)\n%s", run, err, fs.Df())
	}
	// The outcome's write is tried after the YES is known in memory.
	eventually(t, "store health reporting the failed write", func() bool {
		err := h.db.Health(ctx)
		return err != nil && strings.Contains(err.Error(), "full")
	})
	time.Sleep(time.Until(job.Deadline) + 500*time.Millisecond)
	if j, _ := h.eng.Get(ctx, job.ID); j.Status != StatusResolved {
		t.Fatalf("job past its deadline, disk still full = %s, want resolved", j.Status)
	}
	if s := h.eng.Stats(); s.Resolutions[StatusTimeout] != 0 {
		t.Errorf("resolutions = %v, want no timeout", s.Resolutions)
	}

	fs.Free()
	got := h.waitEnd(job.ID, 60*time.Second)
	if got.Status != StatusResolved || !strings.Contains(got.Evidence, "red marker") {
		t.Fatalf("job once space is back = %s %q, want resolved with the judge's evidence", got.Status, got.Evidence)
	}
	want := ResolvedMessage(job.ID, criteria, got.Evidence)
	if lines := h.notified(1); lines[0] != want {
		t.Errorf("notified %q, want %q", lines[0], want)
	}
	if err := h.db.Health(ctx); err != nil {
		t.Errorf("store health once space is back = %v, want nil", err)
	}

	h.stop()
	h2 := newHarness(t, harnessOpts{judge: jb, display: dpy, dbPath: dbPath, outFile: out})
	if j, err := h2.eng.Get(ctx, job.ID); err != nil || j.Status != StatusResolved || j.Message != want {
		t.Errorf("after a restart: %s %q, %v; want resolved %q", j.Status, j.Message, err, want)
	}
}
