package waylandtest

import (
	"context"
	"fmt"
	"image"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/wayland/sway"
)

// Window returns the window titled title from sway's tree once it is
// shown and focused, ready holds for it (nil: at once), and its place has
// settled: three equal reads of its rectangles, 100 ms apart.
//
// sway may move a window's client area after the window is mapped: it
// adds its title bar when GTK asks for server-side decorations, which
// moves the client area down by the bar's height. A test that reads where
// a window is (its Rect or Content) reads it through Window, just before
// it uses the place. Window fails the test when ctx ends, or a minute
// passes, first.
func Window(ctx context.Context, t testing.TB, c *sway.Compositor, title string, ready func(sway.Node) bool) sway.Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last sway.Node
	same := -1 // reads equal to last after it; -1: none yet
	for {
		ws, err := sway.Windows(ctx, c.IPCSocket())
		var cur *sway.Node
		for i, w := range ws {
			if w.Name == title && w.Visible && w.Focused && !w.Content.Empty() && (ready == nil || ready(w)) {
				cur = &ws[i]
				break
			}
		}
		switch {
		case cur == nil:
			same = -1
		case same >= 0 && cur.ID == last.ID && cur.Rect == last.Rect && cur.Content == last.Content:
			if same++; same == 2 {
				return *cur
			}
		default:
			last, same = *cur, 0
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("sway never showed the window %q focused, as wanted, in one place: windows %+v, %v", title, ws, err)
		}
	}
}

// Float makes the window titled title floating at r (sway's Rect, its
// title bar included) once ready holds for it, and returns it when it is
// there, ready holds again (an application may take a moment to lay
// itself out at the new size) and its place has settled, as Window.
func Float(ctx context.Context, t testing.TB, c *sway.Compositor, title string, r image.Rectangle, ready func(sway.Node) bool) sway.Node {
	t.Helper()
	w := Window(ctx, t, c, title, ready)
	cmd := fmt.Sprintf("[con_id=%d] floating enable, resize set width %d px height %d px, move position %d %d", w.ID, r.Dx(), r.Dy(), r.Min.X, r.Min.Y)
	if err := sway.Command(ctx, c.IPCSocket(), cmd); err != nil {
		t.Fatalf("sway %q: %v", cmd, err)
	}
	return Window(ctx, t, c, title, func(n sway.Node) bool {
		return n.Rect.Min == r.Min && (ready == nil || ready(n))
	})
}
