package record

import (
	"context"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/record/recordtest"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/store"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

type fixture struct {
	dir string // where the recordings go
	dpy string
	hub *capture.Hub
	reg *runs.Registry
	rec *Recorder
}

func newFixture(t *testing.T, auto ...string) *fixture {
	t.Helper()
	return newFixtureWith(t, func(o *Options) { o.Auto = auto })
}

func newFixtureWith(t *testing.T, adjust func(*Options)) *fixture {
	t.Helper()
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 1280, Height: 720})
	hub, err := capture.NewHub(capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hub.Close() })
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "acu.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reg := runs.New(db, runs.Options{})
	dir := t.TempDir()
	o := Options{Capture: hub, Runs: reg, Dir: dir, DefaultDisplay: dpy}
	if adjust != nil {
		adjust(&o)
	}
	rec, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = rec.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return &fixture{dir: dir, dpy: dpy, hub: hub, reg: reg, rec: rec}
}

// checkFile: the file decodes with ffprobe at the screen's size, its
// video track lasts as long as the file (within 2%: Chromium seeks by the
// track), both as long as the recording did (within 5%: the recording
// measures from its first write to ffmpeg, on a loaded machine), and only
// its owner may read it.
func checkFile(t *testing.T, f *fixture, rec api.Recording, codec string) {
	t.Helper()
	path := filepath.Join(f.rec.opts.Dir, rec.File)
	if filepath.Base(rec.File) != rec.File || rec.File != rec.ID+"."+rec.Format {
		t.Errorf("recording's file = %q, want the bare name %s.%s", rec.File, rec.ID, rec.Format)
	}
	p := recordtest.FFprobe(t, path)
	want := float64(rec.DurationMs) / 1000
	if p.Codec != codec || p.W != 1280 || p.H != 720 || math.Abs(p.Track-p.Duration) > 0.02*p.Duration || math.Abs(p.Duration-want) > 0.05*want {
		t.Errorf("%s: %s %dx%d, %.3f s (track %.3f s); want %s 1280x720, %.3f s (the track within 2%% of the file, the file within 5%% of the recording)",
			path, p.Codec, p.W, p.H, p.Duration, p.Track, codec, want)
	}
	if p.Frames < rec.Frames {
		t.Errorf("%s has %d frames, want at least the %d written", path, p.Frames, rec.Frames)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: mode %v (%v), want 0600", path, fi.Mode().Perm(), err)
	}
}

// TestRecordMP4AndWebM: a recording writes a frame per change and none
// for a still screen, and the file has the screen's size and the
// recording's true duration, in both formats.
func TestRecordMP4AndWebM(t *testing.T) {
	f := newFixture(t)
	win := testx.NewWindow(t, f.dpy, testx.Spec{X: 100, Y: 100, W: 300, H: 200, Fill: color.RGBA{R: 200, A: 255}})
	for _, tt := range []struct{ format, codec string }{{MP4, "h264"}, {WebM, "vp8"}} {
		t.Run(tt.format, func(t *testing.T) {
			rec, err := f.rec.Start(t.Context(), StartOptions{Format: tt.format})
			if err != nil {
				t.Fatal(err)
			}
			if rec.Status != runs.StatusRunning || !strings.HasSuffix(rec.File, "."+tt.format) {
				t.Fatalf("Start = %+v", rec)
			}
			for i := range 5 {
				win.Fill(color.RGBA{G: uint8(40 * i), B: 100, A: 255})
				time.Sleep(200 * time.Millisecond)
			}
			time.Sleep(time.Second) // a still screen: the file lasts through it
			rec, err = f.rec.Stop(t.Context(), rec.ID)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Status != runs.StatusCompleted || rec.Bytes == 0 || rec.Frames < 2 || rec.Frames > 8 {
				t.Fatalf("Stop = %+v; want completed with 2-8 frames (one per change, none while still)", rec)
			}
			checkFile(t, f, rec, tt.codec)
			if _, err := f.rec.Stop(t.Context(), rec.ID); err == nil {
				t.Error("a second Stop succeeded")
			}
		})
	}
	list, err := f.rec.List(t.Context(), "", 0)
	if err != nil || len(list) != 2 {
		t.Errorf("List = %d recordings, %v; want 2", len(list), err)
	}
}

// TestRecordReleasesFrames: the recorder releases each frame once a newer
// one is written, so its captures copy the changes into buffers used
// before, not new ones. The collector is off: no buffer can come back any
// other way.
func TestRecordReleasesFrames(t *testing.T) {
	f := newFixture(t)
	win := testx.NewWindow(t, f.dpy, testx.Spec{X: 100, Y: 100, W: 300, H: 200, Fill: color.RGBA{R: 200, A: 255}})
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	rec, err := f.rec.Start(t.Context(), StartOptions{Format: MP4})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		win.Fill(color.RGBA{G: uint8(30 * i), B: 100, A: 255})
		time.Sleep(150 * time.Millisecond)
	}
	if rec, err = f.rec.Stop(t.Context(), rec.ID); err != nil {
		t.Fatal(err)
	}
	st := f.hub.StatsFor(f.dpy)
	t.Logf("%d frames written, %d captures, %d recycled a buffer", rec.Frames, st.Captures, st.Recycled)
	// The first two captures find no buffer released yet.
	if st.Recycled < (st.Captures-2)/2 || st.Recycled == 0 {
		t.Errorf("%d of %d captures recycled a buffer, want most: the recorder does not release its frames", st.Recycled, st.Captures)
	}
}

// TestAutoRecord: with Auto, a task run is recorded from its start to its
// end, and the recording is linked to it both ways.
func TestAutoRecord(t *testing.T) {
	f := newFixture(t, "task")
	win := testx.NewWindow(t, f.dpy, testx.Spec{X: 10, Y: 10, W: 100, H: 100, Fill: color.RGBA{B: 200, A: 255}})
	run, err := f.reg.Start(t.Context(), runs.StartOptions{Kind: "task", Spec: map[string]string{"display": f.dpy}})
	if err != nil {
		t.Fatal(err)
	}
	var recs []api.Recording
	for range 200 {
		if recs, _ = f.rec.List(t.Context(), run.ID, 0); len(recs) == 1 {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if len(recs) != 1 {
		t.Fatalf("recordings of the task run = %+v, want one", recs)
	}
	win.Fill(color.RGBA{R: 200, A: 255})
	time.Sleep(time.Second)
	if _, err := f.reg.End(t.Context(), run.ID, runs.StatusCompleted, "", nil); err != nil {
		t.Fatal(err)
	}
	res, err := f.reg.Wait(t.Context(), recs[0].ID, 30*time.Second)
	if err != nil || res.Status != runs.StatusCompleted {
		t.Fatalf("the task's recording = %+v, %v; want completed when the task ended", res, err)
	}
	rec, err := f.rec.Get(t.Context(), recs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	checkFile(t, f, rec, "h264")
	evs, err := f.reg.Events(t.Context(), 0, runs.Filter{RunID: run.ID, Streams: []string{Stream}}, 10)
	if err != nil || len(evs) != 1 || !strings.Contains(string(evs[0].Data), rec.ID) {
		t.Errorf("the task run's recording events = %v, %v; want one naming %s", evs, err, rec.ID)
	}
}
