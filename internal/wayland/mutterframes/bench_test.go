package mutterframes_test

import (
	"context"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/wayland/mutterframes"
	"github.com/acu-dev/acu/internal/wayland/portal"
)

// BenchmarkChangedFrames is the hub on a 1280x720 headless mutter whose
// terminal prints a line every 20 ms, read as a live view reads it: each
// op waits for the watch's next notification, captures the screen and
// releases the frame. Besides the per-op figures it reports what the
// process allocated per frame read from the pipeline (B/frame,
// allocs/frame).
func BenchmarkChangedFrames(b *testing.B) {
	need(b, "mutter", "pipewire", "wireplumber", "dbus-daemon", "gst-launch-1.0", "foot")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	h, err := portal.StartHeadless(ctx, portal.Options{Width: 1280, Height: 720})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(h.Stop)
	cmd := exec.Command("foot", "--fullscreen", "sh", "-c", "while :; do date +%s%N; sleep 0.02; done")
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + b.TempDir(), "LANG=C.UTF-8"}, h.Env()...)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	dpy := h.Socket()
	hub := mutterframes.New(mutterframes.Options{Bus: func() string { return h.BusAddress() }})
	defer hub.Close()
	screen := capture.Target{Kind: capture.Screen}
	ch, err := hub.Watch(ctx, dpy, screen)
	if err != nil {
		b.Fatal(err)
	}
	next := func() {
		select {
		case _, ok := <-ch:
			if !ok {
				b.Fatal("the watch closed")
			}
		case <-ctx.Done():
			b.Fatal("no change within 5 minutes")
		}
		f, err := hub.Capture(ctx, dpy, screen)
		if err != nil {
			b.Fatal(err)
		}
		f.Release()
	}
	for range 20 { // the terminal has drawn and the pipeline runs
		next()
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	n0 := hub.Frames(dpy)
	b.ReportAllocs()
	for b.Loop() {
		next()
	}
	runtime.ReadMemStats(&m1)
	n := float64(hub.Frames(dpy) - n0)
	b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/n, "B/frame")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/n, "allocs/frame")
}
