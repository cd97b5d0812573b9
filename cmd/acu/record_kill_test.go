package main

import (
	"bytes"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/record/recordtest"
	"github.com/acu-dev/acu/internal/testx"
)

// TestRecordingSurvivesKill9: kill -9 of the daemon and of its ffmpeg in
// the middle of a recording leaves an owner-only MP4 that plays up to its
// last second: it holds the still screen after the last change, nothing
// after the kill, and its track lasts as long as the file. The next
// daemon recovers the recording: ended (process_lost) with the file's
// duration (within 2%) and the moment of its first frame, and serves the
// file whole (200, the same bytes); no answer names the data directory.
func TestRecordingSurvivesKill9(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	d := startDaemon(t, env, dataDir, port)
	ctx := t.Context()
	win := testx.NewWindow(t, dpy, testx.Spec{X: 100, Y: 100, W: 300, H: 200, Fill: color.RGBA{R: 200, A: 255}})

	r, err := d.client.StartRecording(ctx, api.StartRecording{Format: "mp4"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.File, "/") || r.File != r.ID+".mp4" {
		t.Errorf("the recording's file = %q, want the bare name %s.mp4", r.File, r.ID)
	}
	var ffmpeg int
	eventually(t, 10*time.Second, "the daemon's ffmpeg", func() bool { ffmpeg = recordtest.ChildNamed(d.cmd.Process.Pid, "ffmpeg"); return ffmpeg != 0 })
	lastChange := recordtest.ChangeThenStill(win.Fill)
	killed := time.Now()
	if err := syscall.Kill(ffmpeg, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	d.kill9()
	eventually(t, 10*time.Second, "ffmpeg gone", func() bool { return processGone(ffmpeg) })

	path := filepath.Join(dataDir, "recordings", r.File)
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s after the kill: %v (%v), want mode 0600", path, fi, err)
	}
	p := recordtest.FFprobe(t, path)
	if p.Codec != "h264" || !p.OwnTrack {
		t.Fatalf("ffprobe %s: %+v; want h264 with durations", path, p)
	}
	track, file := p.Track, p.Duration
	if math.Abs(track-file) > 0.02*file {
		t.Errorf("the killed file's track lasts %.3f s, the file %.3f s: want within 2%%", track, file)
	}

	d2 := startDaemon(t, env, dataDir, port)
	var got api.Recording
	eventually(t, time.Minute, "the recording recovered by the next daemon", func() bool {
		l, err := d2.client.Recordings(ctx, "", 10)
		if err != nil || len(l.Recordings) != 1 {
			return false
		}
		got = l.Recordings[0]
		return got.Status != "running"
	})
	if got.Stopped != "process_lost" || got.Incomplete != "" || got.VideoStart == nil {
		t.Fatalf("the recovered recording = %+v; want stopped process_lost, playable, with its video_start", got)
	}
	from, to := lastChange.Sub(*got.VideoStart).Seconds(), killed.Sub(*got.VideoStart).Seconds()
	if file < from+0.5 || file > to+0.05 {
		t.Errorf("the killed file lasts %.3f s; want between %.3f s (the last change, and a still second) and %.3f s (the kill)", file, from+0.5, to)
	}
	if want := float64(got.DurationMs) / 1000; math.Abs(want-file) > 0.02*file {
		t.Errorf("the recovered recording says %.3f s, the file lasts %.3f s: want within 2%%", want, file)
	}
	dl := filepath.Join(t.TempDir(), "dl.mp4")
	out, errOut, code := acu(t, env, "record", "get", r.ID, "-o", dl)
	if code != 0 {
		t.Fatalf("acu record get of the recovered recording: exit %d: %s %s", code, out, errOut)
	}
	a, _ := os.ReadFile(path)
	b, _ := os.ReadFile(dl)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("the download (%d bytes) is not the file (%d bytes)", len(b), len(a))
	}
	if out, _, code := acu(t, env, "record", "list", "--json"); code != 0 || strings.Contains(out, dataDir) {
		t.Errorf("acu record list --json (exit %d) names the data directory %s:\n%s", code, dataDir, out)
	}
}
