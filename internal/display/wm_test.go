package display_test

import (
	"testing"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// fakeWM plays a reparenting window manager: it wraps a client window in a
// frame (with a title bar offset) and can publish _NET_CLIENT_LIST.
type fakeWM struct {
	t *testing.T
	c *xgb.Conn
}

func newFakeWM(t *testing.T, dpy string) *fakeWM {
	c, err := xgb.NewConnDisplay(dpy)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return &fakeWM{t: t, c: c}
}

func (wm *fakeWM) frame(client uint32, x, y int) xproto.Window {
	wm.t.Helper()
	root := xproto.Setup(wm.c).DefaultScreen(wm.c).Root
	id, err := xproto.NewWindowId(wm.c)
	if err != nil {
		wm.t.Fatal(err)
	}
	if err := xproto.CreateWindowChecked(wm.c, 0, id, root, int16(x), int16(y), 400, 300, 0,
		xproto.WindowClassInputOutput, 0, 0, nil).Check(); err != nil {
		wm.t.Fatal(err)
	}
	if err := xproto.ReparentWindowChecked(wm.c, xproto.Window(client), id, 5, 20).Check(); err != nil {
		wm.t.Fatal(err)
	}
	if err := xproto.MapWindowChecked(wm.c, id).Check(); err != nil {
		wm.t.Fatal(err)
	}
	if err := xproto.MapWindowChecked(wm.c, xproto.Window(client)).Check(); err != nil {
		wm.t.Fatal(err)
	}
	return id
}

func (wm *fakeWM) clientList(ids ...uint32) {
	wm.t.Helper()
	root := xproto.Setup(wm.c).DefaultScreen(wm.c).Root
	a, err := xproto.InternAtom(wm.c, false, uint16(len("_NET_CLIENT_LIST")), "_NET_CLIENT_LIST").Reply()
	if err != nil {
		wm.t.Fatal(err)
	}
	buf := make([]byte, 0, 4*len(ids))
	for _, id := range ids {
		buf = append(buf, byte(id), byte(id>>8), byte(id>>16), byte(id>>24))
	}
	if err := xproto.ChangePropertyChecked(wm.c, xproto.PropModeReplace, root, a.Atom, xproto.AtomWindow, 32,
		uint32(len(ids)), buf).Check(); err != nil {
		wm.t.Fatal(err)
	}
}

func TestWindowsReparentedClients(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 800, Height: 600})
	a := testx.NewWindow(t, dpy, testx.Spec{Title: "Framed A", Class: "A", X: 0, Y: 0, W: 100, H: 80})
	b := testx.NewWindow(t, dpy, testx.Spec{Title: "Framed B", Class: "B", X: 0, Y: 0, W: 100, H: 80})
	wm := newFakeWM(t, dpy)
	frameA := wm.frame(a.ID(), 100, 50)
	wm.frame(b.ID(), 300, 200)

	c, err := display.Open(t.Context(), dpy, display.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	check := func(name string, want map[uint32][2]int) {
		t.Helper()
		ws, err := c.Windows(t.Context())
		if err != nil {
			t.Fatalf("%s: Windows() = %v", name, err)
		}
		if len(ws) != len(want) {
			t.Fatalf("%s: Windows() = %+v, want %d windows", name, ws, len(want))
		}
		for _, w := range ws {
			p, ok := want[w.ID]
			if !ok || w.X != p[0] || w.Y != p[1] || w.W != 100 || w.H != 80 {
				t.Errorf("%s: window %+v, want client at %v", name, w, p)
			}
			if w.ID == uint32(frameA) {
				t.Errorf("%s: listed the frame, not the client", name)
			}
		}
	}
	// No WM hints: the tree walk finds the clients inside their frames.
	check("walk", map[uint32][2]int{a.ID(): {105, 70}, b.ID(): {305, 220}})
	// A WM's _NET_CLIENT_LIST is used when present (here: only A).
	wm.clientList(a.ID())
	check("client list", map[uint32][2]int{a.ID(): {105, 70}})
}
