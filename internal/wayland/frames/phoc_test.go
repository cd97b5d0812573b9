package frames_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/wayland/frames"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// TestHubOnPhoc runs the wait engine's hub on phoc, a wlroots compositor
// without sway's IPC: the screen is captured and watched (a change is
// notified when foot draws), a window target is an error saying the
// compositor gives no window geometry, and with the window excluded a
// frame is an error rather than a frame showing it.
func TestHubOnPhoc(t *testing.T) {
	c := waylandtest.StartPhoc(t, 1024, 768)
	flag := filepath.Join(t.TempDir(), "draw")
	waylandtest.Client(t, c, "foot", "--title=ALPHA", "--override=colors.regular1=ff0000", "--override=colors.background=000000",
		"sh", "-c", `printf '\033[41m%10s\033[0m\n' ''; while [ ! -e `+flag+` ]; do sleep 0.05; done; printf '\033[41m%40s\033[0m\n' ''; exec sleep 600`)
	h := frames.New(frames.Options{})
	defer h.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	before, err := h.Capture(ctx, c.Socket(), target(t, "screen"))
	for err == nil && redIn(before) == 0 && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
		before, err = h.Capture(ctx, c.Socket(), target(t, "screen"))
	}
	if err != nil || redIn(before) == 0 {
		t.Fatalf("foot's first block never showed: %v", err)
	}
	if _, err := h.Resolve(ctx, c.Socket(), target(t, "window:alpha")); err == nil || !strings.Contains(err.Error(), "no window geometry") {
		t.Errorf("Resolve window:alpha on phoc = %v, want an error saying the compositor gives no window geometry", err)
	}

	ch, err := h.Watch(ctx, c.Socket(), target(t, "screen"))
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case _, ok := <-ch:
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

	ex := frames.New(frames.Options{Exclude: []string{"alpha"}})
	defer ex.Close()
	if f, err := ex.Capture(ctx, c.Socket(), target(t, "screen")); err == nil {
		t.Errorf("a frame with the excluded ALPHA on phoc was published (%d red pixels), want an error: it cannot be blacked out", redIn(f))
	} else if !strings.Contains(err.Error(), "excluded") {
		t.Errorf("Capture with ALPHA excluded: %v, want an error naming the exclusion", err)
	}
}
