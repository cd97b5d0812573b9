package livebench

import (
	"context"
	"fmt"
	"image/color"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/acu-dev/acu/bench/internal/rig"
	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/live"
	"github.com/acu-dev/acu/internal/record"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/server"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// counter counts the bytes the server writes.
type counter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c counter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n.Add(int64(n))
	return n, err
}
func (c counter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

type liveRig struct {
	dpy   string
	hub   *capture.Hub
	reg   *runs.Registry
	url   string
	sent  *atomic.Int64
	c     *api.Client
	recDr string
	rec   *record.Recorder
}

func newRig(b *testing.B) *liveRig {
	b.Helper()
	dpy := testx.StartXvfb(b, xvfb.Options{Width: 1280, Height: 720})
	c := rig.NewCore(b, nil)
	hub, reg := c.Hub, c.Runs
	lv := live.New(live.Options{Capture: hub, DefaultDisplay: dpy})
	dir := b.TempDir()
	rec, err := record.New(record.Options{Capture: hub, Runs: reg, Dir: dir, DefaultDisplay: dpy})
	if err != nil {
		b.Fatal(err)
	}
	rig.Go(b, lv.Run, rec.Run)
	sent := &atomic.Int64{}
	h := server.New(server.Options{Token: rig.Token, Runs: reg, Live: lv, Recordings: rec})
	url := rig.Serve(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(counter{w, sent}, r)
	}))
	return &liveRig{dpy: dpy, hub: hub, reg: reg, url: url, sent: sent, c: api.NewClient(url, rig.Token), recDr: dir, rec: rec}
}

// BenchmarkGlassToGlass: a window on the display changes colour; the time
// until Chromium has painted the frame that shows it (the page's own
// paint time, read afterwards, so polling adds nothing). The page shows
// the 1280x720 screen scaled into a 1000x700 window.
func BenchmarkGlassToGlass(b *testing.B) {
	r := newRig(b)
	win := testx.NewWindow(b, r.dpy, testx.Spec{X: 100, Y: 100, W: 400, H: 300, Fill: color.RGBA{R: 255, A: 255}})
	ctx := rig.OpenLive(b, r.c, 1000, 700)
	lat := rig.GlassToGlass(b, ctx, func(i int) {
		win.Fill(color.RGBA{G: uint8(i * 37), B: uint8(255 - i*11), A: 255})
	})
	b.ReportMetric(rig.Quantile(lat, 0.5), "p50_ms")
	b.ReportMetric(rig.Quantile(lat, 0.95), "p95_ms")
	b.ReportMetric(rig.Quantile(lat, 0), "min_ms")
}

// BenchmarkViewerCost: one viewer of an idle display for 10 s, then of an
// xterm scrolling output for 10 s: bytes sent, frames, and this process's
// CPU (capture, scale, JPEG, HTTP; Chromium's own is not counted).
func BenchmarkViewerCost(b *testing.B) {
	r := newRig(b)
	testx.NewWindow(b, r.dpy, testx.Spec{X: 100, Y: 100, W: 400, H: 300, Fill: color.RGBA{R: 255, A: 255}})
	ctx := rig.OpenLive(b, r.c, 1300, 800)
	time.Sleep(time.Second)
	for range b.N {
		measure := func(name string, d time.Duration) {
			f0, n0, c0 := rig.Eval[int](b, ctx, `window.acuLive.frames`), r.sent.Load(), rig.CPU()
			time.Sleep(d)
			f1, n1, c1 := rig.Eval[int](b, ctx, `window.acuLive.frames`), r.sent.Load(), rig.CPU()
			b.ReportMetric(float64(n1-n0)/d.Seconds()/1024, name+"_KiB/s")
			b.ReportMetric(float64(f1-f0)/d.Seconds(), name+"_frames/s")
			b.ReportMetric(100*float64(c1-c0)/float64(d), name+"_cpu%")
		}
		measure("idle", 10*time.Second)
		x := testx.StartXterm(b, r.dpy, testx.XtermSpec{Geometry: "100x30+0+0", Command: []string{"sh", "-c", "while :; do date +%s.%N; sleep 0.01; done"}})
		time.Sleep(time.Second)
		measure("scroll", 10*time.Second)
		_ = x.Cmd.Process.Kill()
	}
}

// BenchmarkRecording: recording the 1280x720 display for 10 s idle and
// 10 s with an xterm scrolling, acu's recorder (this process + its ffmpeg)
// beside `ffmpeg -f x11grab -framerate 10` (H.264, same preset and CRF):
// CPU percent of one core and file size per minute.
func BenchmarkRecording(b *testing.B) {
	r := newRig(b)
	testx.NewWindow(b, r.dpy, testx.Spec{X: 100, Y: 100, W: 400, H: 300, Fill: color.RGBA{R: 255, A: 255}})
	const d = 10 * time.Second
	scene := func(name string, busy bool) {
		var xt *testx.Xterm
		if busy {
			xt = testx.StartXterm(b, r.dpy, testx.XtermSpec{Geometry: "100x30+0+0", Command: []string{"sh", "-c", "while :; do date +%s.%N; sleep 0.01; done"}})
			time.Sleep(500 * time.Millisecond)
		}
		// acu
		c0, k0 := rig.CPU(), rig.ChildCPU()
		rec, err := r.rec.Start(context.Background(), record.StartOptions{Format: record.MP4})
		if err != nil {
			b.Fatal(err)
		}
		time.Sleep(d)
		rec, err = r.rec.Stop(context.Background(), rec.ID)
		if err != nil {
			b.Fatal(err)
		}
		self, child := rig.CPU()-c0, rig.ChildCPU()-k0
		b.ReportMetric(100*float64(self+child)/float64(d), name+"_acu_cpu%")
		b.ReportMetric(100*float64(self)/float64(d), name+"_acu_self_cpu%") // capture, hashing, the pipe's writes
		b.ReportMetric(100*float64(child)/float64(d), name+"_acu_ffmpeg_cpu%")
		b.ReportMetric(float64(rec.Bytes)/1024/d.Minutes(), name+"_acu_KiB/min")
		// x11grab at 10 fps
		out := filepath.Join(b.TempDir(), name+"-x11grab.mp4")
		cmd := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-f", "x11grab", "-framerate", "10",
			"-video_size", "1280x720", "-i", r.dpy, "-t", fmt.Sprint(d.Seconds()), "-c:v", "libx264", "-preset", "veryfast", "-crf", "28",
			"-pix_fmt", "yuv420p", out)
		cmd.Env = append(os.Environ(), "DISPLAY="+r.dpy)
		if err := cmd.Run(); err != nil {
			b.Fatalf("x11grab: %v", err)
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		xcpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		fi, err := os.Stat(out)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(100*float64(xcpu)/float64(d), name+"_x11grab_cpu%")
		b.ReportMetric(float64(fi.Size())/1024/d.Minutes(), name+"_x11grab_KiB/min")
		if xt != nil {
			_ = xt.Cmd.Process.Kill()
		}
	}
	for range b.N {
		scene("idle", false)
		scene("busy", true)
	}
}
