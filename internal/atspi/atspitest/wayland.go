package atspitest

import (
	"context"
	"image"
	"testing"

	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/wayland/sway"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
	"github.com/acu-dev/acu/internal/xvfb"
)

// WaylandForm is the form of a toolkit (FormScript's) drawing natively on
// a headless sway, its accessibility on a session of its own, floated
// where the test asked (StartWaylandForm). Every part is closed when the
// test ends.
type WaylandForm struct {
	*App
	Session *Session
	Tree    *atspi.Client // the session's accessibility tree
	Window  sway.Node     // the form's window, settled where it was floated
}

// StartWaylandForm starts the form of toolkit titled title on c and floats
// its window to r (sway's rectangle, title bar included) once the form is
// laid out at the size sway shows (moving it before that can leave it laid
// out at a size sway no longer shows). It returns once the form is laid
// out again there and the window's place has settled (waylandtest.Float).
//
// at-spi2-registryd leaves the bus when started without an X display, so
// the session gets a small Xvfb (a GNOME or KDE session has Xwayland for
// it); the form itself draws on Wayland.
func StartWaylandForm(ctx context.Context, t testing.TB, c *sway.Compositor, toolkit, title string, r image.Rectangle) *WaylandForm {
	t.Helper()
	waylandtest.Need(t, Python())
	s := Start(t, testx.StartXvfb(t, xvfb.Options{Width: 320, Height: 200}))
	f := &WaylandForm{Session: s, App: s.StartAppEnv(t, s.WaylandEnv(c.Socket()), Python(), FormScript(t, toolkit), title)}
	tree, err := atspi.Connect(ctx, atspi.Options{SessionBus: s.SessionBus})
	if err != nil {
		t.Fatalf("connect to the accessibility bus: %v", err)
	}
	t.Cleanup(func() { tree.Close() })
	f.Tree = tree
	f.Window = waylandtest.Float(ctx, t, c, title, r, func(n sway.Node) bool {
		if f.Exited() {
			t.Fatalf("the %s form exited: %s", toolkit, f.Stderr())
		}
		return FormLaidOut(ctx, tree, title, n.Content.Size())
	})
	return f
}
