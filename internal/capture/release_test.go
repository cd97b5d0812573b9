package capture

import (
	"bytes"
	"image"
	"image/color"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// TestReleasedBuffersComeBack: with the collector off (so no finalizer can
// hand a buffer back), a display whose every frame is released as soon as
// it is used recycles a buffer for nearly every capture, whether it is
// read in quick succession or now and then (a recording at a few frames a
// second), and one whose frames are only dropped recycles none.
func TestReleasedBuffersComeBack(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 320, Height: 200})
	win := testx.NewWindow(t, dpy, testx.Spec{Title: "w", X: 0, Y: 0, W: 200, H: 100, Fill: color.RGBA{R: 1, A: 255}})
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	for _, tt := range []struct {
		release bool
		gap     time.Duration
		n       int
	}{{true, 0, 40}, {false, 0, 40}, {true, 2 * busyGap, 8}, {false, 2 * busyGap, 8}} {
		release := tt.release
		h := newHub(t, Options{})
		for i := range tt.n {
			time.Sleep(tt.gap)
			win.Fill(color.RGBA{R: uint8(i), G: 7, A: 255}) // every capture a change
			f, err := h.Capture(t.Context(), dpy, Target{})
			if err != nil {
				t.Fatal(err)
			}
			if f.Hash != frame.Hash(f.Pix, f.W, f.H, f.Stride) {
				t.Fatalf("capture %d: the frame's pixels do not match its hash", i)
			}
			if release {
				f.Release()
			}
		}
		st := h.StatsFor(dpy)
		t.Logf("release %v, %v apart: %d captures, %d unchanged, %d recycled", release, tt.gap, st.Captures, st.Unchanged, st.Recycled)
		// The first two captures find no buffer released yet (the
		// source holds its current frame); a stall of the machine over
		// readIdle would leave the buffers to the (stopped) collector.
		want := (st.Captures - st.Unchanged) * 3 / 4
		switch {
		case release && st.Recycled < want:
			t.Errorf("released frames: %d of %d captures recycled a buffer, want at least %d", st.Recycled, st.Captures, want)
		case !release && st.Recycled != 0:
			t.Errorf("frames dropped with the collector off: %d captures recycled a buffer, want 0", st.Recycled)
		}
		h.Close()
	}
}

// TestHeldFramesKeepPixels: frames released by some holders keep their
// pixels for the others. Several goroutines capture a changing screen (the
// whole of it, and crops, which are views holding the frame on their own),
// check each frame against its hash and release it, while one frame is
// held throughout by a caller that got it twice (an unchanged screen
// returns the same frame) and released it once. Under -race, a buffer
// reused while a holder reads it is also a reported race.
func TestHeldFramesKeepPixels(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 320, Height: 200})
	win := testx.NewWindow(t, dpy, testx.Spec{Title: "w", X: 0, Y: 0, W: 320, H: 200, Fill: color.RGBA{B: 9, A: 255}})
	h := newHub(t, Options{})
	held, err := h.Capture(t.Context(), dpy, Target{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := h.Capture(t.Context(), dpy, Target{})
	if err != nil {
		t.Fatal(err)
	}
	if again != held {
		t.Fatal("an unchanged screen gave a new frame")
	}
	again.Release()
	heldView := held.Sub(image.Rect(5, 5, 100, 60), "crop:x")
	heldViewPix := bytes.Clone(heldView.Pix)
	held.Release() // the view still holds the buffer

	stop := make(chan struct{})
	var changes sync.WaitGroup
	var changed atomic.Int32
	changes.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			win.Fill(color.RGBA{R: uint8(i), G: uint8(i * 7), A: 255})
			changed.Add(1)
		}
	})
	targets := []Target{{}, mustParse(t, "crop:10,10,200,150")}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			// Until the screen has changed often enough, however slowly
			// the machine lets the changes come.
			for i := 0; i < 60 || changed.Load() < 40; i++ {
				f, err := h.Capture(t.Context(), dpy, targets[(g+i)%2])
				if err != nil {
					t.Error(err)
					return
				}
				if f.Hash != frame.Hash(f.Pix, f.W, f.H, f.Stride) {
					t.Errorf("a held %dx%d frame's pixels changed under its holder", f.W, f.H)
				}
				f.Release()
			}
		})
	}
	wg.Wait()
	close(stop)
	changes.Wait()
	if st := h.StatsFor(dpy); st.Recycled == 0 {
		t.Errorf("no capture recycled a released buffer: %+v", st)
	}
	if !bytes.Equal(heldView.Pix, heldViewPix) {
		t.Error("a view's pixels changed after its parent frame was released but the view was not")
	}
	heldView.Release()
}
