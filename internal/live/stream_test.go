package live

import (
	"context"
	"errors"
	"image/color"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

func newHub(t *testing.T) (*capture.Hub, string) {
	t.Helper()
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 800, Height: 600})
	hub, err := capture.NewHub(capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hub.Close() })
	return hub, dpy
}

// TestStreamSendsChangesOnly: the first frame at once, scaled to fit;
// nothing for a static screen; one frame per change, whose hash is the
// changed screen's.
func TestStreamSendsChangesOnly(t *testing.T) {
	hub, dpy := newHub(t)
	win := testx.NewWindow(t, dpy, testx.Spec{X: 10, Y: 10, W: 100, H: 100, Fill: color.RGBA{R: 255, A: 255}})
	ctx, cancel := context.WithCancel(t.Context())
	frames := make(chan Frame, 16)
	errc := make(chan error, 1)
	go func() {
		errc <- Stream(ctx, hub, StreamOptions{Display: dpy, MaxW: 400, MaxH: 400}, func(f Frame) error {
			frames <- f
			return nil
		})
	}()
	first := <-frames
	if first.Seq != 1 || first.W != 400 || first.H != 300 || first.ScreenW != 800 || len(first.JPEG) == 0 {
		t.Fatalf("first frame = seq %d %dx%d of %dx%d, %d bytes; want seq 1 400x300 of 800x600",
			first.Seq, first.W, first.H, first.ScreenW, first.ScreenH, len(first.JPEG))
	}
	select {
	case f := <-frames:
		t.Fatalf("a static screen sent frame %d", f.Seq)
	case <-time.After(time.Second):
	}
	win.Fill(color.RGBA{G: 255, A: 255})
	f := <-frames
	shot, err := hub.Capture(t.Context(), dpy, capture.Target{Kind: capture.Screen})
	if err != nil {
		t.Fatal(err)
	}
	if f.Seq != 2 || f.Hash == first.Hash {
		t.Errorf("after a change: seq %d hash %x, want seq 2 and a new hash", f.Seq, f.Hash)
	}
	if f.Hash != shot.Hash {
		// A later damage event may still be coming: wait for the frame of the settled screen.
		select {
		case f = <-frames:
		case <-time.After(5 * time.Second):
		}
		if f.Hash != shot.Hash {
			t.Errorf("frame hash %x, want the screen's %x", f.Hash, shot.Hash)
		}
	}
	cancel()
	if err := <-errc; err != nil {
		t.Errorf("Stream = %v, want nil after ctx ends", err)
	}
}

// TestStreamSlowViewerGetsNewest: changes made while the viewer is busy
// are not queued: the next frame is the screen as it is then.
func TestStreamSlowViewerGetsNewest(t *testing.T) {
	hub, dpy := newHub(t)
	win := testx.NewWindow(t, dpy, testx.Spec{X: 10, Y: 10, W: 100, H: 100, Fill: color.RGBA{R: 255, A: 255}})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var mu sync.Mutex
	var got []Frame
	release := make(chan struct{})
	gotOne := make(chan struct{}, 64)
	errc := make(chan error, 1)
	go func() {
		errc <- Stream(ctx, hub, StreamOptions{Display: dpy}, func(f Frame) error {
			mu.Lock()
			got = append(got, f)
			n := len(got)
			mu.Unlock()
			gotOne <- struct{}{}
			if n == 1 {
				<-release // a slow viewer
			}
			return nil
		})
	}()
	<-gotOne
	for i := range 20 {
		win.Fill(color.RGBA{G: uint8(10 * i), A: 255})
	}
	final, err := hub.Capture(t.Context(), dpy, capture.Target{Kind: capture.Screen})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // let the damage of the last fill arrive
	close(release)
	for {
		select {
		case <-gotOne:
		case <-time.After(2 * time.Second):
			mu.Lock()
			defer mu.Unlock()
			if len(got) > 4 {
				t.Errorf("a slow viewer got %d frames for 20 changes made while it was busy, want the newest only (1-3)", len(got)-1)
			}
			last := got[len(got)-1]
			fresh, _ := hub.Capture(t.Context(), dpy, capture.Target{Kind: capture.Screen})
			if last.Hash != fresh.Hash {
				t.Errorf("the last frame %x is not the screen %x (final fill %x)", last.Hash, fresh.Hash, final.Hash)
			}
			cancel()
			if err := <-errc; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("Stream = %v", err)
			}
			return
		}
	}
}

// TestStreamReleasesFrames: the stream releases each frame once it has its
// JPEG, so on a screen changing at a live view's pace the hub copies the
// changes into buffers it used before instead of new ones. The collector is
// off: no buffer can come back any other way.
func TestStreamReleasesFrames(t *testing.T) {
	hub, dpy := newHub(t)
	win := testx.NewWindow(t, dpy, testx.Spec{X: 10, Y: 10, W: 100, H: 100, Fill: color.RGBA{R: 1, A: 255}})
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	ctx, cancel := context.WithCancel(t.Context())
	frames := make(chan Frame, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- Stream(ctx, hub, StreamOptions{Display: dpy, MaxFPS: 100}, func(f Frame) error {
			frames <- f
			return nil
		})
	}()
	<-frames
	const n = 30
	for i := range n {
		win.Fill(color.RGBA{R: uint8(i + 2), A: 255})
		select {
		case <-frames:
		case <-time.After(10 * time.Second):
			t.Fatalf("no frame for change %d", i)
		}
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	st := hub.StatsFor(dpy)
	t.Logf("%d captures, %d recycled a buffer", st.Captures, st.Recycled)
	// A capture more than 100 ms after the one before (a stalled machine)
	// takes a new buffer; most do not.
	if st.Recycled < st.Captures/2 {
		t.Errorf("%d of %d captures recycled a buffer, want most: the stream does not release its frames", st.Recycled, st.Captures)
	}
}
