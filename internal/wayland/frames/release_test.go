package frames_test

import (
	"bytes"
	"context"
	"image"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/wayland/frames"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// changing starts a sway whose terminal prints a line every 20 ms.
func changing(t *testing.T) waylandtest.Compositor {
	c := waylandtest.Start(t, 320, 200)
	waylandtest.Client(t, c, "foot", "sh", "-c", "while :; do date +%s%N; sleep 0.02; done")
	return c
}

// TestReleasedBuffersComeBack: with the collector off (so no finalizer can
// hand a buffer back), a reader that releases every frame it captured
// gets frames whose pixels live in a few buffers the hub keeps reusing;
// one that keeps its frames gets a buffer of its own with each (a held
// frame's buffer is never reused). Every frame's pixels match its hash.
func TestReleasedBuffersComeBack(t *testing.T) {
	c := changing(t)
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	for _, release := range []bool{true, false} {
		h := frames.New(frames.Options{})
		frames, bufs := readChanges(t, h, c.Socket(), 30, release)
		h.Close()
		t.Logf("release %v: %d frames in %d buffers", release, frames, bufs)
		switch {
		case release && bufs > frames/3:
			t.Errorf("released frames: %d frames in %d buffers, want at most %d (buffers reused)", frames, bufs, frames/3)
		case !release && bufs != frames:
			t.Errorf("frames kept: %d frames in %d buffers, want one buffer each", frames, bufs)
		}
	}
}

// readChanges reads n changed frames of dpy as a live view does (the
// watch's notification, then a capture), releasing each when release, and
// returns how many distinct frames and distinct pixel buffers it got.
func readChanges(t *testing.T, h *frames.Hub, dpy string, n int, release bool) (int, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	screen := target(t, "screen")
	ch, err := h.Watch(ctx, dpy, screen)
	if err != nil {
		t.Fatal(err)
	}
	seen, bufs := map[*frame.Frame]bool{}, map[*byte]bool{}
	for len(seen) < n {
		select {
		case _, ok := <-ch:
			if !ok {
				t.Fatal("the watch closed")
			}
		case <-ctx.Done():
			t.Fatalf("%d changed frames of %d", len(seen), n)
		}
		f, err := h.Capture(ctx, dpy, screen)
		if err != nil {
			t.Fatal(err)
		}
		if f.Hash != frame.Hash(f.Pix, f.W, f.H, f.Stride) {
			t.Fatalf("frame %d: its pixels do not match its hash", len(seen))
		}
		seen[f], bufs[&f.Pix[0]] = true, true
		if release {
			f.Release()
		}
	}
	return len(seen), len(bufs)
}

// TestHeldFramesKeepPixels: frames released by some holders keep their
// pixels for the others. Several goroutines capture a changing screen
// (the whole of it, and crops, which are views holding the frame on their
// own), check each frame against its hash and release it, while a crop of
// one frame, whose parent was released, is held throughout. Under -race,
// a buffer reused while a holder reads it is also a reported race.
func TestHeldFramesKeepPixels(t *testing.T) {
	c := changing(t)
	h := frames.New(frames.Options{})
	defer h.Close()
	heldFramesKeepPixels(t, h, c.Socket())
}

// capturer is a hub's Capture and Watch.
type capturer interface {
	Capture(ctx context.Context, dpy string, t capture.Target) (*frame.Frame, error)
	Watch(ctx context.Context, dpy string, t capture.Target) (<-chan struct{}, error)
}

func heldFramesKeepPixels(t *testing.T, h capturer, dpy string) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	screen := target(t, "screen")
	held, err := h.Capture(ctx, dpy, screen)
	if err != nil {
		t.Fatal(err)
	}
	view := held.Sub(image.Rect(5, 5, 100, 60), "crop:x")
	viewPix := bytes.Clone(view.Pix)
	held.Release() // the view still holds the buffer
	ch, err := h.Watch(ctx, dpy, screen)
	if err != nil {
		t.Fatal(err)
	}
	var changes sync.WaitGroup // the watch's notifications, spread to the readers
	tick := make(chan struct{})
	changes.Go(func() {
		defer close(tick)
		for range 40 {
			select {
			case <-ch:
			case <-ctx.Done():
				t.Error("the screen stopped changing")
				return
			}
			for range 4 {
				tick <- struct{}{}
			}
		}
	})
	targets := []capture.Target{screen, target(t, "crop:10,10,200,150")}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				if _, ok := <-tick; !ok {
					return
				}
				f, err := h.Capture(ctx, dpy, targets[(g+i)%2])
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
	changes.Wait()
	if !bytes.Equal(view.Pix, viewPix) {
		t.Error("a view's pixels changed after its parent frame was released but the view was not")
	}
	view.Release()
}
