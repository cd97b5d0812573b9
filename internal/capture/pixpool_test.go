package capture

import (
	"bytes"
	"image"
	"image/color"
	"runtime"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// TestRecycledBuffersAreUnreferenced: the buffers of a display read in
// quick succession are reused for later frames once nothing references
// them, and never while something does: a
// Sub view whose parent frame is gone, or a bare slice of a frame's Pix,
// keep their pixels through many captures of a changing screen and
// collections that recycle every other buffer.
func TestRecycledBuffersAreUnreferenced(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 320, Height: 200})
	win := testx.NewWindow(t, dpy, testx.Spec{Title: "w", X: 0, Y: 0, W: 320, H: 200, Fill: color.RGBA{R: 10, A: 255}})
	h := newHub(t, Options{})
	capture := func() []byte {
		t.Helper()
		f, err := h.Capture(t.Context(), dpy, Target{})
		if err != nil {
			t.Fatal(err)
		}
		return f.Pix
	}
	// Reads in quick succession recycle buffers (busyGap).
	capture()
	// Kept: a view of one frame, a bare slice of another's pixels.
	win.Fill(color.RGBA{R: 15, A: 255})
	f, err := h.Capture(t.Context(), dpy, Target{})
	if err != nil {
		t.Fatal(err)
	}
	view := f.Sub(image.Rect(10, 10, 60, 40), "crop")
	viewPix := bytes.Clone(view.Pix)
	win.Fill(color.RGBA{G: 20, A: 255})
	bare := capture()[:4096]
	barePix := bytes.Clone(bare)
	f = nil

	deadline := time.Now().Add(20 * time.Second)
	for i := 0; h.StatsFor(dpy).Recycled < 5 || i < 20; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("%d buffers recycled in 20 s, want 5: %+v", h.StatsFor(dpy).Recycled, h.StatsFor(dpy))
		}
		win.Fill(color.RGBA{B: uint8(30 + i), A: 255}) // every capture a change
		capture()
		runtime.GC() // finalizers of unreferenced buffers run, refilling the pool
		time.Sleep(time.Millisecond)
	}
	if !bytes.Equal(view.Pix, viewPix) {
		t.Errorf("a Sub view's pixels changed after its parent frame was dropped: its buffer was recycled")
	}
	if !bytes.Equal(bare, barePix) {
		t.Errorf("a slice of a dropped frame's pixels changed: its buffer was recycled")
	}
	runtime.KeepAlive(view)
	runtime.KeepAlive(bare)
}

// TestRecyclingBoundsMemory: a display read continuously, every read a
// change, keeps its heap bounded. Before trackedBudget, every buffer of the
// frames published between two collections came back through its
// finalizer and stayed, and their number grew collection after collection:
// the heap grew by about 270 MB over these 1,500 captures.
func TestRecyclingBoundsMemory(t *testing.T) {
	const w, h = 1280, 720
	dpy := testx.StartXvfb(t, xvfb.Options{Width: w, Height: h})
	win := testx.NewWindow(t, dpy, testx.Spec{Title: "w", X: 0, Y: 0, W: 100, H: 20, Fill: color.RGBA{R: 1, A: 255}})
	hub := newHub(t, Options{})
	if _, err := hub.Capture(t.Context(), dpy, Target{}); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 1500 {
		win.Fill(color.RGBA{R: uint8(i), G: uint8(i >> 8), A: 255})
		if _, err := hub.Capture(t.Context(), dpy, Target{}); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	st := hub.StatsFor(dpy)
	grew := int64(after.HeapSys) - int64(before.HeapSys)
	t.Logf("heap grew %d MB over %d captures (%d recycled a buffer), %d collections", grew>>20, st.Captures, st.Recycled, after.NumGC-before.NumGC)
	// 3.7 MB a frame: 40 frames' worth (148 MB) is well above the bound
	// (frames in use, trackedBudget of recycled ones, the collector's
	// headroom: 0-55 MB measured) and well below what the unbounded pool
	// reached.
	if limit := int64(40 * w * h * 4); grew > limit {
		t.Errorf("the heap grew %d MB over %d captures of a changing screen, want under %d MB", grew>>20, st.Captures, limit>>20)
	}
	if st.Recycled == 0 {
		t.Errorf("no capture recycled a buffer: %+v", st)
	}
}
