package record

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/record/recordtest"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/testx"
)

// TestRecordIrregularChangesTrackDuration: textured changes seconds
// apart, then bursts (as an agent's screen changes): the video track lasts
// as long as the file's frames say and as the recording did, within 2%.
// With B-frames the track's decode times lagged behind the frames' times
// across long gaps (12.1 s of track for 14.4 s of frames here; 8.6 s for
// 15.3 s in the field), and Chromium could not seek to late events.
func TestRecordIrregularChangesTrackDuration(t *testing.T) {
	f := newFixture(t)
	win := testx.NewWindow(t, f.dpy, testx.Spec{X: 100, Y: 100, W: 300, H: 200, Fill: color.RGBA{R: 200, A: 255}})
	rec, err := f.rec.Start(t.Context(), StartOptions{Format: MP4})
	if err != nil {
		t.Fatal(err)
	}
	for i, gap := range []time.Duration{100, 100, 100, 2000, 100, 3000, 100, 100, 1500, 100, 4000, 100, 100, 100, 2500, 100} {
		win.Paint(func(x, y int) color.RGBA {
			return color.RGBA{R: uint8((x*7 + y*13 + i*31) ^ (x * y)), G: uint8(x + i), B: 90}
		})
		time.Sleep(gap * time.Millisecond)
	}
	if rec, err = f.rec.Stop(t.Context(), rec.ID); err != nil || rec.Stopped != StopRequest {
		t.Fatalf("Stop = %+v, %v; want stopped by request", rec, err)
	}
	checkFile(t, f, rec, "h264")
}

// ffmpegChild is the pid of the ffmpeg this test process started.
func ffmpegChild(t *testing.T) int {
	t.Helper()
	for range 200 {
		if pid := recordtest.ChildNamed(os.Getpid(), "ffmpeg"); pid != 0 {
			return pid
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatal("no ffmpeg child process")
	return 0
}

// TestRecordSurvivesKilledFFmpeg: ffmpeg killed with SIGKILL in the middle
// of a recording leaves a file that plays up to its last second (the
// still screen after the last change is in it: the heartbeat wrote it),
// whose duration the recording reports (within 2%), owner-only; a WebM is
// remuxed so that it has a duration and an index.
func TestRecordSurvivesKilledFFmpeg(t *testing.T) {
	f := newFixture(t)
	win := testx.NewWindow(t, f.dpy, testx.Spec{X: 100, Y: 100, W: 300, H: 200, Fill: color.RGBA{R: 200, A: 255}})
	for _, tt := range []struct{ format, codec string }{{MP4, "h264"}, {WebM, "vp8"}} {
		t.Run(tt.format, func(t *testing.T) {
			started := time.Now()
			rec, err := f.rec.Start(t.Context(), StartOptions{Format: tt.format})
			if err != nil {
				t.Fatal(err)
			}
			pid := ffmpegChild(t)
			lastChange := recordtest.ChangeThenStill(win.Fill)
			// On a loaded machine ffmpeg writes behind the screen: kill it
			// once the file on disk holds the still second after the last
			// change (what the heartbeat guarantees), not at a fixed time.
			if err := f.writtenPast(t, rec.ID, lastChange.Sub(started)+600*time.Millisecond); err != nil {
				t.Fatal(err)
			}
			killed := time.Now()
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			res, err := f.reg.Wait(t.Context(), rec.ID, time.Minute)
			if err != nil || res.Status != runs.StatusError {
				t.Fatalf("the recording after ffmpeg was killed = %+v, %v; want ended with an error", res, err)
			}
			rec, err = f.rec.Get(t.Context(), rec.ID)
			if err != nil || rec.Incomplete != "" || rec.VideoStart == nil {
				t.Fatalf("Get = %+v, %v; want a playable file", rec, err)
			}
			path, _, err := f.rec.File(t.Context(), rec.ID)
			if err != nil {
				t.Fatalf("File = %v", err)
			}
			p := recordtest.FFprobe(t, path)
			// The file holds the still screen after the last change (the
			// heartbeat wrote it at least once more), and nothing after
			// the kill.
			from, to := lastChange.Sub(*rec.VideoStart).Seconds(), killed.Sub(*rec.VideoStart).Seconds()
			if p.Codec != tt.codec || p.Duration < from+0.5 || p.Duration > to+0.05 || p.Track < from+0.5 || p.Track > to+0.05 {
				t.Errorf("%s after the kill: %s, %.3f s (track %.3f s); want %s, between %.3f s (the last change, and a still second) and %.3f s (the kill)",
					path, p.Codec, p.Duration, p.Track, tt.codec, from+0.5, to)
			}
			if want := float64(rec.DurationMs) / 1000; math.Abs(p.Duration-want) > 0.02*p.Duration {
				t.Errorf("the recording says %.3f s, the file lasts %.3f s: want within 2%%", want, p.Duration)
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v (%v), want 0600", path, fi.Mode().Perm(), err)
			}
		})
	}
}

// TestRecordLimits: Max recordings at once (one more is ErrTooMany, and a
// slot frees when one stops), MaxDuration (a recording stops itself, its
// file as long), DiskBudget (a recording stops when the directory reaches
// it; none starts past it).
func TestRecordLimits(t *testing.T) {
	t.Run("max", func(t *testing.T) {
		f := newFixtureWith(t, func(o *Options) { o.Max = 2 })
		a, err := f.rec.Start(t.Context(), StartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := f.rec.Start(t.Context(), StartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.rec.Start(t.Context(), StartOptions{}); !errors.Is(err, ErrTooMany) || !strings.Contains(err.Error(), "ACU_RECORD_MAX") {
			t.Errorf("a third Start with Max 2 = %v, want ErrTooMany naming ACU_RECORD_MAX", err)
		}
		if _, err := f.rec.Stop(t.Context(), a.ID); err != nil {
			t.Fatal(err)
		}
		c, err := f.rec.Start(t.Context(), StartOptions{})
		if err != nil {
			t.Fatalf("Start after a Stop = %v, want a free slot", err)
		}
		for _, id := range []string{b.ID, c.ID} {
			if _, err := f.rec.Stop(t.Context(), id); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("max_duration", func(t *testing.T) {
		f := newFixtureWith(t, func(o *Options) { o.MaxDuration = 2 * time.Second })
		rec, err := f.rec.Start(t.Context(), StartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := f.reg.Wait(t.Context(), rec.ID, time.Minute)
		if err != nil || res.Status != runs.StatusCompleted {
			t.Fatalf("a recording past MaxDuration = %+v, %v; want completed by itself", res, err)
		}
		if rec, err = f.rec.Get(t.Context(), rec.ID); err != nil || rec.Stopped != StopMaxDuration || rec.DurationMs < 2000 {
			t.Fatalf("Get = %+v, %v; want stopped max_duration after 2 s", rec, err)
		}
		checkFile(t, f, rec, "h264")
	})
	t.Run("disk_budget", func(t *testing.T) {
		f := newFixtureWith(t, func(o *Options) { o.DiskBudget = 1 })
		rec, err := f.rec.Start(t.Context(), StartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := f.reg.Wait(t.Context(), rec.ID, time.Minute)
		if err != nil || res.Status != runs.StatusCompleted {
			t.Fatalf("a recording past DiskBudget = %+v, %v; want completed by itself", res, err)
		}
		if rec, err = f.rec.Get(t.Context(), rec.ID); err != nil || rec.Stopped != StopDiskBudget || rec.Bytes == 0 {
			t.Fatalf("Get = %+v, %v; want stopped disk_budget with its file", rec, err)
		}
		if _, err := f.rec.Start(t.Context(), StartOptions{}); !errors.Is(err, ErrDiskBudget) || !strings.Contains(err.Error(), "ACU_RECORD_DISK") {
			t.Errorf("Start past DiskBudget = %v, want ErrDiskBudget naming ACU_RECORD_DISK", err)
		}
	})
}

// TestAdoptIncomplete: a recording whose process died before ffmpeg wrote
// its header (a 48-byte MP4: ftyp and nothing else) or a frame (an empty
// WebM) is ended as incomplete, saying why, and File refuses it.
func TestAdoptIncomplete(t *testing.T) {
	f := newFixture(t)
	ftyp := []byte("\x00\x00\x00\x20ftypisom\x00\x00\x02\x00isomiso2avc1mp41\x00\x00\x00\x10free\x00\x00\x00\x00\x00\x00\x00\x00")
	for _, tt := range []struct {
		format string
		body   []byte
		why    string
	}{{MP4, ftyp, "moov"}, {WebM, nil, "empty"}} {
		t.Run(tt.format, func(t *testing.T) {
			id := runs.NewID(RunKind)
			run, err := f.reg.Start(t.Context(), runs.StartOptions{ID: id, Kind: RunKind, Spec: spec{Display: f.dpy, Format: tt.format, File: id + "." + tt.format}})
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(f.rec.opts.Dir, id+"."+tt.format), tt.body, 0o644); err != nil {
				t.Fatal(err)
			}
			if !f.rec.Adopt(run) {
				t.Fatal("Adopt refused a recording run")
			}
			res, err := f.reg.Wait(t.Context(), id, time.Minute)
			if err != nil || res.Status != runs.StatusError {
				t.Fatalf("the adopted recording = %+v, %v; want ended with an error", res, err)
			}
			rec, err := f.rec.Get(t.Context(), id)
			if err != nil || !strings.Contains(rec.Incomplete, tt.why) || rec.Stopped != StopLost {
				t.Fatalf("Get = %+v, %v; want incomplete (%s), stopped process_lost", rec, err, tt.why)
			}
			if _, _, err := f.rec.File(t.Context(), id); !errors.Is(err, ErrIncomplete) {
				t.Errorf("File = %v, want ErrIncomplete", err)
			}
			if fi, err := os.Stat(filepath.Join(f.rec.opts.Dir, id+"."+tt.format)); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("the adopted file's mode = %v (%v), want 0600", fi.Mode().Perm(), err)
			}
		})
	}
}

// TestRunTightensOldFiles: files an earlier version wrote 0644 are made
// owner-only when the recorder starts.
func TestRunTightensOldFiles(t *testing.T) {
	var old string
	newFixtureWith(t, func(o *Options) {
		old = filepath.Join(o.Dir, "recording_old.mp4")
		if err := os.WriteFile(old, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(old, 0o644); err != nil {
			t.Fatal(err)
		}
	})
	for range 400 {
		if fi, err := os.Stat(old); err == nil && fi.Mode().Perm() == 0o600 {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	fi, _ := os.Stat(old)
	t.Errorf("%s: mode %v after the recorder started, want 0600", old, fi.Mode().Perm())
}

// writtenPast waits (up to a minute) until the recording's file, read as
// it is being written, holds need of video (its last packet's time less
// its first's): the still second after the last change, counted from
// before the recording started, so never less than needed.
func (f *fixture) writtenPast(t *testing.T, id string, need time.Duration) error {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	var last, first float64
	for time.Now().Before(deadline) {
		files, _ := filepath.Glob(filepath.Join(f.dir, "*"))
		for _, file := range files {
			if !strings.Contains(filepath.Base(file), strings.TrimPrefix(id, "recording_")) {
				continue
			}
			// A WebM being written has no duration yet; its packets do.
			out, _ := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time",
				"-of", "csv=p=0", file).Output()
			first, last = -1, 0
			for _, l := range strings.Fields(string(out)) {
				v, err := strconv.ParseFloat(strings.TrimSuffix(l, ","), 64)
				if err != nil {
					continue
				}
				if first < 0 || v < first {
					first = v
				}
				last = max(last, v)
			}
			if first >= 0 && last-first >= need.Seconds() {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("recording %s: the file holds %.3f s of video, not %.3f s, a minute on", id, last-first, need.Seconds())
}
