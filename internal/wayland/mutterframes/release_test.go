package mutterframes_test

import (
	"bytes"
	"context"
	"image"
	"os/exec"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/wayland/mutterframes"
	"github.com/acu-dev/acu/internal/wayland/portal"
)

// changing starts a headless mutter whose terminal prints a line every
// 20 ms, and a hub reading it.
func changing(t *testing.T) (*mutterframes.Hub, string) {
	t.Helper()
	need(t, "mutter", "pipewire", "wireplumber", "dbus-daemon", "gst-launch-1.0", "foot")
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	h, err := portal.StartHeadless(ctx, portal.Options{Width: 320, Height: 200})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Stop)
	cmd := exec.Command("foot", "--fullscreen", "sh", "-c", "while :; do date +%s%N; sleep 0.02; done")
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8"}, h.Env()...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	hub := mutterframes.New(mutterframes.Options{Bus: func() string { return h.BusAddress() }})
	t.Cleanup(hub.Close)
	return hub, h.Socket()
}

// TestReleasedBuffersComeBack: with the collector off (so no finalizer can
// hand a buffer back), a reader that releases every frame it captured
// gets frames whose pixels live in a few buffers the hub keeps reusing;
// one that keeps its frames gets a buffer of its own with each (a held
// frame's buffer is never reused). Every frame's pixels match its hash.
func TestReleasedBuffersComeBack(t *testing.T) {
	hub, dpy := changing(t)
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	for _, release := range []bool{true, false} {
		frames, bufs := readChanges(t, hub, dpy, 30, release)
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
func readChanges(t *testing.T, h *mutterframes.Hub, dpy string, n int, release bool) (int, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	screen := capture.Target{Kind: capture.Screen}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	ch, err := h.Watch(wctx, dpy, screen)
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
	hub, dpy := changing(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	screen := capture.Target{Kind: capture.Screen}
	held, err := hub.Capture(ctx, dpy, screen)
	if err != nil {
		t.Fatal(err)
	}
	view := held.Sub(image.Rect(5, 5, 100, 60), "crop:x")
	viewPix := bytes.Clone(view.Pix)
	held.Release() // the view still holds the buffer
	ch, err := hub.Watch(ctx, dpy, screen)
	if err != nil {
		t.Fatal(err)
	}
	tick := make(chan struct{})
	var changes sync.WaitGroup // the watch's notifications, spread to the readers
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
	targets := []capture.Target{screen, {Kind: capture.Crop, Crop: [4]int{10, 10, 200, 150}}}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				if _, ok := <-tick; !ok {
					return
				}
				f, err := hub.Capture(ctx, dpy, targets[(g+i)%2])
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
