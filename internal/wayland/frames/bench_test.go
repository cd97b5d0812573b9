package frames_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/wayland/frames"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// BenchmarkChangedFrames is the hub on a 1280x720 sway whose terminal
// prints a line every 20 ms, read as a live view reads it: each op waits
// for the watch's next notification, captures the screen and releases
// the frame. Besides the per-op figures it reports what the hub allocated
// per frame it copied from the compositor (B/frame, allocs/frame: the
// whole process's allocations over the run, divided by the frames).
func BenchmarkChangedFrames(b *testing.B) {
	c := waylandtest.Start(b, 1280, 720)
	waylandtest.Client(b, c, "foot", "sh", "-c", "while :; do date +%s%N; sleep 0.02; done")
	h := frames.New(frames.Options{})
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	screen := target(b, "screen")
	ch, err := h.Watch(ctx, c.Socket(), screen)
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
		f, err := h.Capture(ctx, c.Socket(), screen)
		if err != nil {
			b.Fatal(err)
		}
		f.Release()
	}
	for range 20 { // the terminal has drawn and the hub runs
		next()
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	n0 := h.Copies(c.Socket())
	b.ReportAllocs()
	for b.Loop() {
		next()
	}
	runtime.ReadMemStats(&m1)
	n := float64(h.Copies(c.Socket()) - n0)
	b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/n, "B/frame")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/n, "allocs/frame")
}
