package waylandbench

import (
	"context"
	"testing"
	"time"

	"github.com/acu-dev/acu/bench/internal/rig"
	"github.com/acu-dev/acu/internal/capture"
)

// cubeRGB is entry i (16..231) of the 256-colour palette's 6x6x6 cube, as
// xterm and foot draw it.
func cubeRGB(i int) [3]byte {
	level := [6]byte{0, 95, 135, 175, 215, 255}
	i -= 16
	return [3]byte{level[i/36], level[i/6%6], level[i%6]}
}

// BenchmarkChangedFrame: the terminal repaints its block in a new colour;
// the time from writing it to the terminal until the backend's capture hub
// hands out a frame that shows it (woken by the hub's watch: XDamage on
// X11, copy_with_damage on Wayland). The terminal's own drawing is inside
// the time.
func BenchmarkChangedFrame(b *testing.B) {
	for _, be := range backends {
		b.Run(be, func(b *testing.B) { changedFrame(b, be) })
	}
}

func changedFrame(b *testing.B, backend string) {
	d := startDesk(b, backend, "-echo", "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	scr, _ := capture.ParseTarget("screen")
	changes, err := d.hub.Watch(ctx, d.display, scr)
	if err != nil {
		b.Fatal(err)
	}
	// Two points inside the block on both terminals (xterm's cells are
	// 6x13 pixels, foot's larger).
	points := [][2]int{{100, 60}, {200, 150}}
	shows := func(want [3]byte) bool {
		f, err := d.hub.Capture(ctx, d.display, scr)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Release()
		for _, p := range points {
			px := f.Pix[p[1]*f.Stride+p[0]*4:]
			if px[2] != want[0] || px[1] != want[1] || px[0] != want[2] {
				return false
			}
		}
		return true
	}
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		time.Sleep(100 * time.Millisecond) // a still screen before each change
		for len(changes) > 0 {
			<-changes
		}
		colour := 16 + (i*37)%216
		want := cubeRGB(colour)
		if shows(want) { // the previous colour is the same: pick the next
			colour = 16 + (colour-15)%216
			want = cubeRGB(colour)
		}
		b.StartTimer()
		t0 := time.Now()
		d.term.write(b, block(colour))
		deadline := time.After(10 * time.Second)
		for !shows(want) {
			select {
			case <-changes:
			case <-deadline:
				b.Fatalf("%s: no frame showed colour %d (%v) at %v", backend, colour, want, points)
			}
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	report(b, "changed", lat)
	b.ReportMetric(rig.Quantile(lat, 0), "changed_min_ms")
}
