package capture

import (
	"image/color"
	"testing"

	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// TestWholeReadOfUnchangedScreen: a whole read (as every verifyEvery-th
// read is) of a screen that was damaged but shows the same pixels returns
// the cached frame itself and counts an unchanged read; a whole read after
// a real change returns a new frame with the change. With either hash.
func TestWholeReadOfUnchangedScreen(t *testing.T) {
	t.Run("hash", testWholeReadOfUnchangedScreen)
	if frame.FastHash() {
		t.Run("go-hash", func(t *testing.T) {
			defer frame.UseFastHash(frame.UseFastHash(false))
			testWholeReadOfUnchangedScreen(t)
		})
	}
}

func testWholeReadOfUnchangedScreen(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 320, Height: 240})
	grey := color.RGBA{R: 90, G: 90, B: 90, A: 255}
	win := testx.NewWindow(t, dpy, testx.Spec{Title: "w", X: 20, Y: 20, W: 100, H: 80, Fill: grey})
	hub := newHub(t, Options{})
	capture := func() *frame.Frame {
		t.Helper()
		f, err := hub.Capture(t.Context(), dpy, Target{})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	s, err := hub.source(dpy)
	if err != nil {
		t.Fatal(err)
	}
	wholeNext := func() {
		s.mu.Lock()
		s.sinceVerify = verifyEvery
		s.mu.Unlock()
	}
	first := capture()
	for i := range 3 {
		before := hub.StatsFor(dpy).Unchanged
		win.Fill(grey) // damage, same pixels
		wholeNext()
		if got := capture(); got != first {
			t.Fatalf("read %d of a screen damaged but unchanged: a new frame (hash %016x), want the cached one (%016x)", i, got.Hash, first.Hash)
		}
		if after := hub.StatsFor(dpy).Unchanged; after <= before {
			t.Errorf("read %d: unchanged reads %d -> %d, want one more", i, before, after)
		}
	}
	win.Fill(color.RGBA{R: 250, A: 255})
	wholeNext()
	f := capture()
	if f == first || f.Hash == first.Hash {
		t.Fatalf("a whole read after a change returned the cached frame")
	}
	if sum := frame.Hash(f.Pix, f.W, f.H, f.Stride); sum != f.Hash {
		t.Errorf("the frame's hash %016x is not the hash of its pixels %016x", f.Hash, sum)
	}
	if px := f.Pix[50*f.Stride+50*4+2]; px != 250 {
		t.Errorf("the new frame shows red %d inside the window, want 250", px)
	}
}
