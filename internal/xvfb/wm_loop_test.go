package xvfb

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// internAtom interns name on c, failing the test on an error.
func internAtom(t *testing.T, c *xgb.Conn, name string) xproto.Atom {
	t.Helper()
	r, err := xproto.InternAtom(c, false, uint16(len(name)), name).Reply()
	if err != nil {
		t.Fatalf("intern %s: %v", name, err)
	}
	return r.Atom
}

// A window mapped the moment Start returns is managed by the window
// manager: openbox announces itself (_NET_SUPPORTING_WM_CHECK) before its
// start-up is over, and a window mapped in between could be left unmapped;
// Start waits until openbox answers a request from its event loop. Several
// displays in a row, since the gap is short.
func TestStartWindowMappedAtOnceIsManaged(t *testing.T) {
	for i := range 5 {
		s, err := Start(t.Context(), Options{Width: 320, Height: 200, WindowManager: true})
		if err != nil {
			t.Fatalf("Start(WindowManager) = %v", err)
		}
		c, err := xgb.NewConnDisplay(s.Name())
		if err != nil {
			s.Stop()
			t.Fatal(err)
		}
		root := xproto.Setup(c).DefaultScreen(c).Root
		w, _ := xproto.NewWindowId(c)
		xproto.CreateWindow(c, 0, w, root, 10, 10, 100, 60, 0, xproto.WindowClassInputOutput, 0, 0, nil)
		xproto.MapWindow(c, w)
		wmState := internAtom(t, c, "WM_STATE")
		// Bounded: a window manager that handles requests manages a new
		// window at once; one that dropped the map request never does.
		managed := false
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			p, err := xproto.GetProperty(c, false, w, wmState, xproto.GetPropertyTypeAny, 0, 2).Reply()
			a, aerr := xproto.GetWindowAttributes(c, w).Reply()
			if err == nil && p.ValueLen > 0 && aerr == nil && a.MapState == xproto.MapStateViewable {
				managed = true
				break
			}
		}
		c.Close()
		s.Stop()
		if !managed {
			t.Fatalf("display %d: a window mapped as Start(WindowManager) returned was not managed (no WM_STATE, not viewable) within 10 s", i)
		}
	}
}

// fakeEWMHWM makes the only window manager tried this test binary, run as
// TestFakeEWMHWindowManager in the given mode.
func fakeEWMHWM(t *testing.T, mode string) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fakeWM(t, fmt.Sprintf("ACU_FAKE_EWMH_WM=%s exec %q -test.run='^TestFakeEWMHWindowManager$'", mode, exe))
}

// An EWMH window manager that announces itself and lists
// _NET_REQUEST_FRAME_EXTENTS but never answers it (its start-up never ends)
// is not ready: Start fails after WMTimeout, saying so.
func TestStartWindowManagerAnnouncedButNotAnswering(t *testing.T) {
	fakeEWMHWM(t, "silent")
	s, err := Start(t.Context(), Options{Width: 64, Height: 64, WindowManager: true, WMTimeout: 2 * time.Second})
	if err == nil {
		s.Stop()
		t.Fatal("Start with a window manager that announces itself but never answers _NET_REQUEST_FRAME_EXTENTS succeeded, want an error")
	}
	for _, want := range []string{"fake-wm", "not ready after", "_NET_REQUEST_FRAME_EXTENTS", "start-up is not over", "fake window manager announced"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Start() error %q does not name %q", err, want)
		}
	}
}

// The same window manager answering the request is ready, and one that does
// not offer the request is ready once it has announced itself.
func TestStartWindowManagerAnswersOrDoesNotOffer(t *testing.T) {
	for _, mode := range []string{"answering", "no-request"} {
		t.Run(mode, func(t *testing.T) {
			fakeEWMHWM(t, mode)
			s, err := Start(t.Context(), Options{Width: 64, Height: 64, WindowManager: true})
			if err != nil {
				t.Fatalf("Start with a %s window manager = %v", mode, err)
			}
			s.Stop()
		})
	}
}

// TestFakeEWMHWindowManager is the fake window manager of the tests above
// (skipped unless ACU_FAKE_EWMH_WM is set): it takes the screen like openbox
// (SubstructureRedirect, _NET_SUPPORTING_WM_CHECK, _NET_SUPPORTED) and, in
// the mode "answering", sets _NET_FRAME_EXTENTS on the windows that ask;
// "silent" never does; "no-request" does not list the request.
func TestFakeEWMHWindowManager(t *testing.T) {
	mode := os.Getenv("ACU_FAKE_EWMH_WM")
	if mode == "" {
		t.Skip("the fake window manager of TestStartWindowManager*: runs only as one")
	}
	c, err := xgb.NewConnDisplay("")
	if err != nil {
		t.Fatal(err)
	}
	root := xproto.Setup(c).DefaultScreen(c).Root
	if err := xproto.ChangeWindowAttributesChecked(c, root, xproto.CwEventMask,
		[]uint32{xproto.EventMaskSubstructureRedirect | xproto.EventMaskSubstructureNotify}).Check(); err != nil {
		t.Fatalf("take the screen: %v", err)
	}
	check, supported := internAtom(t, c, "_NET_SUPPORTING_WM_CHECK"), internAtom(t, c, "_NET_SUPPORTED")
	request, extents := internAtom(t, c, "_NET_REQUEST_FRAME_EXTENTS"), internAtom(t, c, "_NET_FRAME_EXTENTS")
	list := []xproto.Atom{extents}
	if mode != "no-request" {
		list = append(list, request)
	}
	buf := make([]byte, 4*len(list))
	for i, a := range list {
		xgb.Put32(buf[4*i:], uint32(a))
	}
	xproto.ChangeProperty(c, xproto.PropModeReplace, root, supported, xproto.AtomAtom, 32, uint32(len(list)), buf)
	self := make([]byte, 4)
	xgb.Put32(self, uint32(root))
	xproto.ChangeProperty(c, xproto.PropModeReplace, root, check, xproto.AtomWindow, 32, 1, self)
	fmt.Fprintln(os.Stderr, "fake window manager announced, mode", mode)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-stop; os.Exit(0) }()
	for {
		ev, err := c.WaitForEvent()
		if ev == nil && err == nil {
			return
		}
		if m, ok := ev.(xproto.ClientMessageEvent); ok && m.Type == request && mode == "answering" {
			xproto.ChangeProperty(c, xproto.PropModeReplace, m.Window, extents, xproto.AtomCardinal, 32, 4, make([]byte, 16))
		}
	}
}
