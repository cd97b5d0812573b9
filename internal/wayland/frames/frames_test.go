package frames_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/wayland/frames"
	"github.com/acu-dev/acu/internal/wayland/sway"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

func redIn(f *frame.Frame) int {
	n := 0
	for y := 0; y < f.H; y++ {
		for x := 0; x < f.W; x++ {
			p := f.Pix[y*f.Stride+x*4:]
			if p[2] == 0xff && p[1] == 0 && p[0] == 0 {
				n++
			}
		}
	}
	return n
}

func target(t testing.TB, s string) capture.Target {
	t.Helper()
	tg, err := capture.ParseTarget(s)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// TestHubOnWlroots runs the hub the wait engine uses on each wlroots
// compositor: the screen is captured and watched (a change is notified
// when foot draws), and window targets do what the compositor allows.
func TestHubOnWlroots(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(t *testing.T) waylandtest.Compositor
		// windows checks window targets once foot's first block shows.
		windows func(t *testing.T, ctx context.Context, h *frames.Hub, c waylandtest.Compositor)
		// after runs once the watch has seen foot draw.
		after func(t *testing.T, ctx context.Context, h *frames.Hub, c waylandtest.Compositor, screen <-chan struct{})
	}{
		{"sway", func(t *testing.T) waylandtest.Compositor { return waylandtest.Start(t, 640, 400) }, swayWindows, swayGone},
		// phoc (1024x768: it centres foot, which must fit whole) has no
		// sway IPC.
		{"phoc", func(t *testing.T) waylandtest.Compositor { return waylandtest.StartPhoc(t, 1024, 768) }, phocWindows, phocExcluded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.start(t)
			flag := filepath.Join(t.TempDir(), "draw")
			waylandtest.Client(t, c, "foot", "--title=ALPHA", "--override=colors.regular1=ff0000", "--override=colors.background=000000",
				"sh", "-c", `printf '\033[41m%10s\033[0m\n' ''; while [ ! -e `+flag+` ]; do sleep 0.05; done; printf '\033[41m%40s\033[0m\n' ''; exec sleep 600`)
			h := frames.New(frames.Options{})
			defer h.Close()
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()

			// The screen shows foot's first block.
			before, err := h.Capture(ctx, c.Socket(), target(t, "screen"))
			for err == nil && redIn(before) == 0 && ctx.Err() == nil {
				time.Sleep(50 * time.Millisecond)
				before, err = h.Capture(ctx, c.Socket(), target(t, "screen"))
			}
			if err != nil || redIn(before) == 0 {
				t.Fatalf("foot's first block never showed: %v", err)
			}
			tc.windows(t, ctx, h, c)

			// foot draws a second block: the screen's watch says so.
			before, err = h.Capture(ctx, c.Socket(), target(t, "screen"))
			if err != nil {
				t.Fatal(err)
			}
			screen, err := h.Watch(ctx, c.Socket(), target(t, "screen"))
			if err != nil {
				t.Fatalf("Watch: %v", err)
			}
			if err := os.WriteFile(flag, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			for {
				select {
				case _, ok := <-screen:
					if !ok {
						t.Fatalf("the watch closed")
					}
				case <-ctx.Done():
					t.Fatalf("no change notified after foot drew")
				}
				f, err := h.Capture(ctx, c.Socket(), target(t, "screen"))
				if err != nil {
					t.Fatal(err)
				}
				if redIn(f) > redIn(before) {
					break
				}
			}
			tc.after(t, ctx, h, c, screen)
		})
	}
}

// swayWindows: a window target resolves and captures foot's window, and
// an unknown one is an error listing it.
func swayWindows(t *testing.T, ctx context.Context, h *frames.Hub, c waylandtest.Compositor) {
	var win capture.Resolved
	for {
		r, err := h.Resolve(ctx, c.Socket(), target(t, "window:alpha"))
		if err == nil {
			f, err := h.Capture(ctx, c.Socket(), target(t, "window:alpha"))
			if err != nil {
				t.Fatalf("Capture window: %v", err)
			}
			if redIn(f) > 0 {
				win = r
				if f.W != r.Rect.Dx() || f.H != r.Rect.Dy() || f.Target != "window:ALPHA" {
					t.Fatalf("window frame %dx%d %q, want %v window:ALPHA", f.W, f.H, f.Target, r.Rect)
				}
				break
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("foot's window never showed its block: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if win.Label != "window:ALPHA" || win.Display != c.Socket() {
		t.Errorf("Resolve = %+v", win)
	}
	var te *capture.TargetError
	if _, err := h.Resolve(ctx, c.Socket(), target(t, "window:nothing")); !errors.As(err, &te) || te.Ambiguous || len(te.Candidates) != 1 || te.Candidates[0].Title != "ALPHA" {
		t.Errorf("Resolve of an unknown window = %v, want a TargetError listing ALPHA", err)
	}
}

// swayGone: when the compositor goes away, the watch closes and captures
// fail.
func swayGone(t *testing.T, ctx context.Context, h *frames.Hub, c waylandtest.Compositor, screen <-chan struct{}) {
	c.(*sway.Compositor).Stop()
	select {
	case _, ok := <-screen:
		for ok {
			_, ok = <-screen
		}
	case <-ctx.Done():
		t.Fatalf("the watch stayed open after the compositor exited")
	}
	if _, err := h.Capture(ctx, c.Socket(), target(t, "screen")); err == nil {
		t.Errorf("Capture after the compositor exited: no error")
	}
}

// phocWindows: a window target is an error saying the compositor gives no
// window geometry.
func phocWindows(t *testing.T, ctx context.Context, h *frames.Hub, c waylandtest.Compositor) {
	if _, err := h.Resolve(ctx, c.Socket(), target(t, "window:alpha")); err == nil || !strings.Contains(err.Error(), "no window geometry") {
		t.Errorf("Resolve window:alpha on phoc = %v, want an error saying the compositor gives no window geometry", err)
	}
}

// phocExcluded: with the window excluded, a frame is an error rather than
// a frame showing it, since it cannot be blacked out.
func phocExcluded(t *testing.T, ctx context.Context, _ *frames.Hub, c waylandtest.Compositor, _ <-chan struct{}) {
	ex := frames.New(frames.Options{Exclude: []string{"alpha"}})
	defer ex.Close()
	if f, err := ex.Capture(ctx, c.Socket(), target(t, "screen")); err == nil {
		t.Errorf("a frame with the excluded ALPHA on phoc was published (%d red pixels), want an error: it cannot be blacked out", redIn(f))
	} else if !strings.Contains(err.Error(), "excluded") {
		t.Errorf("Capture with ALPHA excluded: %v, want an error naming the exclusion", err)
	}
}

// TestHubBlacksOutExcludedWindows: frames the hub publishes never show an
// excluded window, and window targets do not find it.
func TestHubBlacksOutExcludedWindows(t *testing.T) {
	c := waylandtest.Start(t, 400, 300)
	waylandtest.Client(t, c, "foot", "--title=SECRET", "--override=colors.background=ff0000", "sh", "-c", "exec sleep 600")
	h := frames.New(frames.Options{Exclude: []string{"secret"}})
	defer h.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	ch, err := h.Watch(ctx, c.Socket(), target(t, "screen"))
	if err != nil {
		t.Fatal(err)
	}
	// A hub without the exclusion sees the window's red once it has drawn.
	open := frames.New(frames.Options{})
	defer open.Close()
	for {
		f, err := open.Capture(ctx, c.Socket(), target(t, "screen"))
		if err != nil {
			t.Fatal(err)
		}
		if redIn(f) > 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the window never drew")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The excluding hub's frames never show the red, and once it has caught
	// up they are the open hub's with the window's rectangle black.
	for {
		ef, err := h.Capture(ctx, c.Socket(), target(t, "screen"))
		if err != nil {
			t.Fatal(err)
		}
		if n := redIn(ef); n > 0 {
			t.Fatalf("a frame shows %d red pixels of the excluded window", n)
		}
		cf, err := open.Capture(ctx, c.Socket(), target(t, "screen"))
		if err != nil {
			t.Fatal(err)
		}
		r, err := open.Resolve(ctx, c.Socket(), target(t, "window:secret"))
		if err != nil {
			t.Fatal(err)
		}
		masked := frame.New(append([]byte(nil), cf.Pix...), cf.W, cf.H, cf.Stride, cf.Display, cf.Target, cf.At)
		frame.BlackOut(masked, r.Rect)
		if masked.Hash == ef.Hash && !r.Rect.Empty() {
			break
		}
		select {
		case <-ch:
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			t.Fatalf("the excluding hub's frame never matched the open one with the window black")
		}
	}
	var te *capture.TargetError
	if _, err := h.Resolve(ctx, c.Socket(), target(t, "window:secret")); !errors.As(err, &te) {
		t.Errorf("Resolve of the excluded window = %v, want a TargetError", err)
	}
}

// TestHubPausesWhileUnused: on a screen that changes all the time, the hub
// stops copying frames once nothing has read or watched the display for
// IdleAfter, and a read then returns a fresh copy and a watch keeps it
// copying.
func TestHubPausesWhileUnused(t *testing.T) {
	c := waylandtest.Start(t, 320, 200)
	waylandtest.Client(t, c, "foot", "sh", "-c", "while :; do date +%s%N; sleep 0.02; done")
	h := frames.New(frames.Options{IdleAfter: 300 * time.Millisecond})
	defer h.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	screen := target(t, "screen")
	first, err := h.Capture(ctx, c.Socket(), screen)
	if err != nil {
		t.Fatal(err)
	}
	// still reports whether no frame was copied over a second.
	still := func() bool {
		n := h.Copies(c.Socket())
		time.Sleep(time.Second)
		return h.Copies(c.Socket()) == n
	}
	for !still() {
		if ctx.Err() != nil {
			t.Fatalf("the hub never paused: %d frames copied of a screen nobody reads", h.Copies(c.Socket()))
		}
	}
	n := h.Copies(c.Socket())
	f, err := h.Capture(ctx, c.Socket(), screen)
	if err != nil {
		t.Fatal(err)
	}
	if h.Copies(c.Socket()) <= n || f.Hash == first.Hash {
		t.Fatalf("a read after the pause: %d copies (was %d), same frame as before: %v; want a fresh copy", h.Copies(c.Socket()), n, f.Hash == first.Hash)
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	if _, err := h.Watch(wctx, c.Socket(), screen); err != nil {
		t.Fatal(err)
	}
	for still() {
		if ctx.Err() != nil {
			t.Fatalf("a watched display is not copied as it changes")
		}
	}
}
