package input

import (
	"context"
	"image"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"

	xdisplay "github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/testx"
)

// slowGrabber is a client that freezes the pointer on every press of
// button 1 in its window and lets it go only after hold, as a window
// manager's click-to-focus grab does (openbox takes a synchronous passive
// grab of the buttons on every client window and replays the press once it
// has focused the window; on a loaded machine that comes late). While the
// pointer is frozen the server holds back the master device's events,
// acu's own release included.
type slowGrabber struct {
	c        *xgb.Conn
	replayed chan struct{} // one value per press replayed (after a round trip)
}

func newSlowGrabber(t *testing.T, win uint32, hold time.Duration) *slowGrabber {
	t.Helper()
	c, err := xgb.NewConnDisplay(dpy)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	g := &slowGrabber{c: c, replayed: make(chan struct{}, 64)}
	if err := xproto.GrabButtonChecked(c, false, xproto.Window(win), xproto.EventMaskButtonPress,
		xproto.GrabModeSync, xproto.GrabModeAsync, xproto.WindowNone, xproto.CursorNone,
		xproto.ButtonIndex1, xproto.ModMaskAny).Check(); err != nil {
		t.Fatalf("grab button 1: %v", err)
	}
	go func() {
		for {
			ev, err := c.WaitForEvent()
			if ev == nil && err == nil {
				return // closed
			}
			bp, ok := ev.(xproto.ButtonPressEvent)
			if !ok {
				continue
			}
			time.Sleep(hold)
			xproto.AllowEvents(c, xproto.AllowReplayPointer, bp.Time)
			if _, err := xproto.GetInputFocus(c).Reply(); err != nil {
				return
			}
			g.replayed <- struct{}{}
		}
	}()
	return g
}

// TestUserClockOwnInputHeldBackByAGrab: acu's click on a window whose
// pointer grab holds the release back until after acu's bracket closed is
// still acu's own: the clock reads no user input. Another program's click
// there, held back the same way, is the user's.
func TestUserClockOwnInputHeldBackByAGrab(t *testing.T) {
	w := testx.NewWindow(t, dpy, testx.Spec{Title: "grabbed", X: 100, Y: 100, W: 300, H: 200})
	g := newSlowGrabber(t, w.ID(), 100*time.Millisecond)
	// acu's device and the clock's markers share one connection, as in
	// the gate.
	c := mustConn(t)
	d, err := New(c, Area{W: screenW, H: screenH}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	clk, err := NewUserClock(t.Context(), c, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer clk.Close()
	p := image.Pt(200, 180)
	for i := range 3 {
		clk.Begin()
		if err := d.ClickAt(t.Context(), &p, ButtonLeft, 1); err != nil {
			t.Fatal(err)
		}
		clk.End()
		waitReplay(t, g)
		in, err := clk.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if in.Seen {
			t.Fatalf("click %d: the clock saw user input in acu's own click (%s %v ago, held %v)", i, in.Detail, in.Age, in.Held)
		}
	}
	// Another program's click, held back the same way: the user's.
	o, err := xgb.NewConnDisplay(dpy)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if err := xtest.Init(o); err != nil {
		t.Fatal(err)
	}
	root := xproto.Setup(o).DefaultScreen(o).Root
	xtest.FakeInput(o, evMotion, 0, 0, root, 210, 190, 0)
	xtest.FakeInput(o, evButtonPress, 1, 0, root, 0, 0, 0)
	xtest.FakeInput(o, evButtonRelease, 1, 0, root, 0, 0, 0)
	if _, err := xproto.GetInputFocus(o).Reply(); err != nil {
		t.Fatal(err)
	}
	waitReplay(t, g)
	in, err := clk.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !in.Seen || in.Held || !strings.Contains(in.Detail, "button 1 released by another program's XTEST input") {
		t.Errorf("after another program's click: %+v, want its release seen as the user's", in)
	}
}

func waitReplay(t *testing.T, g *slowGrabber) {
	t.Helper()
	select {
	case <-g.replayed:
	case <-time.After(10 * time.Second):
		t.Fatal("the grabbing client never replayed the press")
	}
}

func mustConn(t *testing.T) *xdisplay.Conn {
	t.Helper()
	c, err := xdisplay.Open(context.Background(), dpy, xdisplay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
