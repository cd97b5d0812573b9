package toplevel_test

import (
	"context"
	"errors"
	"image"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/wayland/screencopy"
	"github.com/acu-dev/acu/internal/wayland/toplevel"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// redOn returns the bounding box of pure red pixels on c's screen.
func redOn(t *testing.T, socket string) image.Rectangle {
	t.Helper()
	cap, err := screencopy.Open(t.Context(), socket, "", "")
	if err != nil {
		t.Fatalf("screencopy: %v", err)
	}
	defer cap.Close()
	f, err := cap.Grab(t.Context())
	if err != nil {
		t.Fatalf("Grab: %v", err)
	}
	var out image.Rectangle
	for y := 0; y < f.H; y++ {
		for x := 0; x < f.W; x++ {
			p := f.Pix[y*f.Stride+x*4:]
			if p[2] == 0xff && p[1] == 0 && p[0] == 0 {
				out = out.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return out
}

// waitRed polls the screen until its red box satisfies ok.
func waitRed(t *testing.T, socket, what string, ok func(image.Rectangle) bool) image.Rectangle {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := redOn(t, socket)
		if ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the red window is %v on screen", what, r)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestMaximizeMinimizeOnPhoc runs the toplevel protocol on phoc, a
// stacking wlroots compositor with no sway IPC: two foot windows are
// listed by title and app id with their states and no rectangle; one is
// maximized (the compositor reports it maximized and its red background
// then covers the whole 800x600 output, where it was smaller); minimizing
// it, which phoc ignores, and moving it, which the protocol cannot, are
// ErrUnsupported; the other is activated and closed.
func TestMaximizeOnPhoc(t *testing.T) {
	c := waylandtest.StartPhoc(t, 800, 600)
	foot := func(title, bg string) {
		waylandtest.Client(t, c, "foot", "--title="+title, "--app-id=acu-"+title, "--window-size-pixels=300x200",
			"--override=colors.background="+bg, "sh", "-c", "exec sleep 600")
	}
	foot("GREEN", "00ff00")
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	m, err := toplevel.Open(ctx, c.Socket(), "", "")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer m.Close()
	byTitle(t, m, "GREEN shows", func(w map[string]toplevel.Window) bool { return w["GREEN"].Activated })
	foot("RED", "ff0000")
	ws := byTitle(t, m, "RED shows, activated", func(w map[string]toplevel.Window) bool {
		return len(w) == 2 && w["RED"].Activated && !w["GREEN"].Activated
	})
	red, green := ws["RED"], ws["GREEN"]
	if red.AppID != "acu-RED" || green.AppID != "acu-GREEN" {
		t.Errorf("app ids %q, %q", red.AppID, green.AppID)
	}
	if !red.Rect.Empty() || red.Maximized || red.Minimized {
		t.Errorf("RED before: %+v, want no rectangle (no sway IPC) and neither maximized nor minimized", red)
	}
	before := waitRed(t, c.Socket(), "RED drawn", func(r image.Rectangle) bool { return !r.Empty() })
	if before.Dx() >= 800 || before.Dy() >= 600 {
		t.Fatalf("RED is %v before maximize: already the output's size, the test proves nothing", before)
	}

	if err := m.MoveResize(ctx, red, image.Rect(10, 10, 300, 300)); !errors.Is(err, toplevel.ErrUnsupported) {
		t.Errorf("MoveResize without sway's IPC: %v, want ErrUnsupported", err)
	}

	if err := m.Maximize(ctx, red); err != nil {
		t.Fatalf("Maximize: %v", err)
	}
	ws = byTitle(t, m, "RED maximized", func(w map[string]toplevel.Window) bool { return w["RED"].Maximized })
	red = ws["RED"]
	after := waitRed(t, c.Socket(), "RED fills the output", func(r image.Rectangle) bool {
		return r.Dx() > 780 && r.Dy() > 550
	})
	t.Logf("RED before maximize %v, after %v", before, after)

	// phoc 0.24 does not implement set_minimized (a phone has nowhere to
	// minimize to): the request is ignored, which is ErrUnsupported.
	err = m.Minimize(ctx, red)
	if !errors.Is(err, toplevel.ErrUnsupported) || !strings.Contains(err.Error(), "ignores the request") {
		t.Errorf("Minimize on phoc: %v, want ErrUnsupported saying the compositor ignores it", err)
	}
	if ws := byTitle(t, m, "RED listed", func(w map[string]toplevel.Window) bool { _, ok := w["RED"]; return ok }); ws["RED"].Minimized {
		t.Errorf("RED reported minimized")
	}

	if err := m.Activate(ctx, green); err != nil {
		t.Fatalf("Activate: %v", err)
	}
	byTitle(t, m, "GREEN activated", func(w map[string]toplevel.Window) bool { return w["GREEN"].Activated })
	if err := m.CloseWindow(ctx, green); err != nil {
		t.Fatalf("CloseWindow: %v", err)
	}
	byTitle(t, m, "GREEN closed", func(w map[string]toplevel.Window) bool { _, ok := w["GREEN"]; return !ok })
}
