package toplevel_test

import (
	"context"
	"errors"
	"image"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/wayland/screencopy"
	"github.com/acu-dev/acu/internal/wayland/sway"
	"github.com/acu-dev/acu/internal/wayland/toplevel"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// byTitle waits until the listed windows satisfy ok and returns them by
// title.
func byTitle(t *testing.T, m *toplevel.Manager, what string, ok func(map[string]toplevel.Window) bool) map[string]toplevel.Window {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ws, err := m.Windows(t.Context())
		if err != nil {
			t.Fatalf("Windows: %v", err)
		}
		got := map[string]toplevel.Window{}
		for _, w := range ws {
			got[w.Title] = w
		}
		if ok(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: windows are %+v", what, ws)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// redBlocks returns the bounding boxes of pure red pixels left and right
// of x = split.
func redBlocks(t *testing.T, c *sway.Compositor, split int) (left, right image.Rectangle) {
	t.Helper()
	cap, err := screencopy.Open(t.Context(), c.Socket(), "", "")
	if err != nil {
		t.Fatalf("screencopy: %v", err)
	}
	defer cap.Close()
	f, err := cap.Grab(t.Context())
	if err != nil {
		t.Fatalf("Grab: %v", err)
	}
	for y := 0; y < f.H; y++ {
		for x := 0; x < f.W; x++ {
			p := f.Pix[y*f.Stride+x*4:]
			if p[2] == 0xff && p[1] == 0 && p[0] == 0 {
				px := image.Rect(x, y, x+1, y+1)
				if x < split {
					left = left.Union(px)
				} else {
					right = right.Union(px)
				}
			}
		}
	}
	return left, right
}

// redWithin returns the bounding box of pure red pixels within r.
func redWithin(t *testing.T, c *sway.Compositor, r image.Rectangle) image.Rectangle {
	t.Helper()
	var out image.Rectangle
	cap, err := screencopy.Open(t.Context(), c.Socket(), "", "")
	if err != nil {
		t.Fatalf("screencopy: %v", err)
	}
	defer cap.Close()
	f, err := cap.GrabRegion(t.Context(), r, "region")
	if err != nil {
		t.Fatalf("GrabRegion: %v", err)
	}
	for y := 0; y < f.H; y++ {
		for x := 0; x < f.W; x++ {
			p := f.Pix[y*f.Stride+x*4:]
			if p[2] == 0xff && p[1] == 0 && p[0] == 0 {
				out = out.Union(image.Rect(x, y, x+1, y+1).Add(r.Min))
			}
		}
	}
	return out
}

// TestListActivateClose opens two foot windows on a real sway, lists them
// with their titles, app ids and rectangles (each holds the red block its
// app drew), activates the one without focus and closes the other.
func TestListActivateClose(t *testing.T) {
	c := waylandtest.Start(t, 640, 400)
	foot := func(title string) *exec.Cmd {
		cmd := waylandtest.Client(t, c, "foot", "--title="+title, "--app-id=acu-"+title,
			"--override=colors.regular1=ff0000", "--override=colors.background=000000",
			"sh", "-c", `printf '\033[41m%10s\033[0m' ''; exec sleep 600`)
		return cmd
	}
	foot("ALPHA")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	m, err := toplevel.Open(ctx, c.Socket(), "", c.IPCSocket())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer m.Close()
	byTitle(t, m, "ALPHA shows", func(w map[string]toplevel.Window) bool { return w["ALPHA"].Activated })
	beta := foot("BETA")
	ws := byTitle(t, m, "BETA shows, focused", func(w map[string]toplevel.Window) bool {
		return len(w) == 2 && w["BETA"].Activated && !w["ALPHA"].Activated && !w["BETA"].Rect.Empty()
	})
	a, b := ws["ALPHA"], ws["BETA"]
	if a.AppID != "acu-ALPHA" || b.AppID != "acu-BETA" {
		t.Errorf("app ids = %q, %q; want acu-ALPHA, acu-BETA", a.AppID, b.AppID)
	}
	// Once both apps have drawn and sway has laid them out, each window's
	// rectangle holds its app's red block.
	screen := image.Rect(0, 0, 640, 400)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ws = byTitle(t, m, "both listed", func(w map[string]toplevel.Window) bool { return len(w) == 2 })
		a, b = ws["ALPHA"], ws["BETA"]
		left, right := redBlocks(t, c, 320)
		ok := a.Rect.In(screen) && b.Rect.In(screen) && !a.Rect.Overlaps(b.Rect) && a.Rect.Dx() >= 200 && b.Rect.Dx() >= 200 &&
			!left.Empty() && !right.Empty() && left.In(a.Rect) && right.In(b.Rect)
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rects ALPHA %v, BETA %v, red blocks %v, %v: want two windows side by side within %v, each holding its app's block",
				a.Rect, b.Rect, left, right, screen)
		}
		time.Sleep(50 * time.Millisecond)
	}

	if err := m.Activate(t.Context(), a); err != nil {
		t.Fatalf("Activate: %v", err)
	}
	byTitle(t, m, "ALPHA activated", func(w map[string]toplevel.Window) bool { return w["ALPHA"].Activated && !w["BETA"].Activated })
	nodes, err := sway.Windows(t.Context(), c.IPCSocket())
	if err != nil {
		t.Fatalf("sway.Windows: %v", err)
	}
	if i := slices.IndexFunc(nodes, func(n sway.Node) bool { return n.Focused }); i < 0 || nodes[i].Name != "ALPHA" {
		t.Errorf("sway's focused window after Activate: %+v, want ALPHA", nodes)
	}

	// Move and resize ALPHA: sway floats it at exactly the rectangle, and
	// its app's block moves with it.
	to := image.Rect(40, 50, 340, 250)
	if err := m.MoveResize(t.Context(), a, to); err != nil {
		t.Fatalf("MoveResize: %v", err)
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		a = byTitle(t, m, "ALPHA listed", func(w map[string]toplevel.Window) bool { return len(w) == 2 })["ALPHA"]
		// ALPHA floats above BETA: the red within its rectangle is its own
		// block, drawn just inside its top-left corner.
		block := redWithin(t, c, to)
		near := image.Rect(to.Min.X+1, to.Min.Y+1, to.Min.X+40, to.Min.Y+40)
		if a.Rect == to && !block.Empty() && block.Min.In(near) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after MoveResize to %v: ALPHA's rect %v, the red block within it %v", to, a.Rect, block)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := m.MoveResize(t.Context(), a, image.Rectangle{}); err == nil {
		t.Errorf("MoveResize to an empty rectangle: no error")
	}

	if err := m.CloseWindow(t.Context(), b); err != nil {
		t.Fatalf("CloseWindow: %v", err)
	}
	byTitle(t, m, "BETA closed", func(w map[string]toplevel.Window) bool { _, ok := w["BETA"]; return len(w) == 1 && !ok })
	deadline = time.Now().Add(30 * time.Second)
	for beta.Process.Signal(syscall.Signal(0)) == nil { // the test's Client reaps it when it exits
		if time.Now().After(deadline) {
			t.Fatalf("BETA's foot still runs after its window closed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := m.Activate(t.Context(), b); err == nil {
		t.Errorf("Activate of a closed window: no error")
	}
}

// TestMoveResizeWithoutIPCIsUnsupported: without sway's IPC the toplevel
// protocol cannot move a window, and says so.
func TestMoveResizeWithoutIPCIsUnsupported(t *testing.T) {
	c := waylandtest.Start(t, 320, 200)
	waylandtest.Client(t, c, "foot", "--title=SOLO", "sh", "-c", "exec sleep 600")
	m, err := toplevel.Open(t.Context(), c.Socket(), "", "")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer m.Close()
	w := byTitle(t, m, "SOLO shows", func(w map[string]toplevel.Window) bool { _, ok := w["SOLO"]; return ok })["SOLO"]
	if !w.Rect.Empty() {
		t.Errorf("without IPC, Rect = %v, want empty", w.Rect)
	}
	if err := m.MoveResize(t.Context(), w, image.Rect(0, 0, 100, 100)); !errors.Is(err, toplevel.ErrUnsupported) {
		t.Errorf("MoveResize without IPC = %v, want ErrUnsupported", err)
	}
}
