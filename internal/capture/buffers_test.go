package capture

import (
	"runtime/debug"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/frame"
)

// TestBuffersReuseReleased: with the collector off, a frame's buffer
// comes back from Get once every hold on the frame (and on its views) is
// released, never while one is held.
func TestBuffersReuseReleased(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var b Buffers
	defer b.Close()
	const w, h = 16, 8
	publish := func() *frame.Frame {
		f := frame.New(b.Get(w*h*4), w, h, w*4, ":1", "screen", time.Now())
		b.Own(f)
		return f
	}
	f := publish()
	held := f.Retain() // a caller's hold
	view := f.Sub(f.Bounds().Inset(2), "crop:x")
	f.Release() // the producer's
	if g := b.Get(w * h * 4); &g[0] == &f.Pix[0] {
		t.Fatal("Get returned the buffer of a frame still held")
	}
	held.Release()
	if g := b.Get(w * h * 4); &g[0] == &f.Pix[0] {
		t.Fatal("Get returned the buffer of a frame whose view is still held")
	}
	view.Release()
	if f2 := publish(); &f2.Pix[0] != &f.Pix[0] || b.Recycled() != 1 {
		t.Fatalf("a released frame's buffer did not come back (%d recycled)", b.Recycled())
	}
}
