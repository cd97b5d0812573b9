package display_test

import (
	"errors"
	"image/color"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

func TestOpenErrors(t *testing.T) {
	for _, name := range []string{"", ":4093"} {
		_, err := display.Open(t.Context(), name, display.Options{})
		if !errors.Is(err, display.ErrNoDisplay) {
			t.Errorf("Open(%q) = %v, want ErrNoDisplay", name, err)
			continue
		}
		if !strings.Contains(err.Error(), "acu display start") || !strings.Contains(err.Error(), name) {
			t.Errorf("Open(%q) error %q: want the display name and how to start one", name, err)
		}
	}
}

func TestOpenScreenAndExtensions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  xvfb.Options
		depth int
		shm   bool
		saver bool
	}{
		{"24bit", xvfb.Options{Width: 320, Height: 200, Depth: 24}, 24, true, true},
		{"noshm", xvfb.Options{Width: 320, Height: 200, Depth: 24, NoSHM: true}, 24, false, true},
		{"nosaver", xvfb.Options{Width: 320, Height: 200, Depth: 24, Args: []string{"-extension", "MIT-SCREEN-SAVER"}}, 24, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dpy := testx.StartXvfb(t, tc.opts)
			c, err := display.Open(t.Context(), dpy, display.Options{})
			if err != nil {
				t.Fatalf("Open(%s) = %v", dpy, err)
			}
			defer c.Close()
			s := c.Screen
			if s.Width != 320 || s.Height != 200 || s.Depth != tc.depth || s.BitsPerPixel != 32 || !s.LSBFirst {
				t.Errorf("Screen = %+v, want 320x200 depth %d, 32 bpp LSB first", s, tc.depth)
			}
			want := display.Extensions{SHM: tc.shm, Damage: true, XTest: true, XFixes: true, XCMisc: true, ScreenSaver: tc.saver}
			if diff := cmp.Diff(want, c.Ext); diff != "" {
				t.Errorf("Ext mismatch (-want +got):\n%s", diff)
			}
			if err := c.Sync(t.Context()); err != nil {
				t.Fatalf("Sync() = %v", err)
			}
		})
	}
}

func TestWindowsOnBareXvfb(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 640, Height: 480})
	a := testx.NewWindow(t, dpy, testx.Spec{Title: "Alpha Ünïcode", Class: "AcuAlpha", X: 10, Y: 20, W: 100, H: 50, Fill: color.RGBA{R: 255}})
	b := testx.NewWindow(t, dpy, testx.Spec{Title: "Beta", Class: "AcuBeta", X: 200, Y: 100, W: 60, H: 40})
	x := testx.StartXterm(t, dpy, testx.XtermSpec{Title: "term one", Geometry: "20x5+300+300", Command: []string{"sleep", "60"}})

	c, err := display.Open(t.Context(), dpy, display.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ws, err := c.Windows(t.Context())
	if err != nil {
		t.Fatalf("Windows() = %v", err)
	}
	byID := map[uint32]display.Window{}
	for _, w := range ws {
		byID[w.ID] = w
	}
	want := display.Window{ID: a.ID(), Title: "Alpha Ünïcode", Class: "AcuAlpha", Instance: "acualpha", X: 10, Y: 20, W: 100, H: 50, Mapped: true}
	if diff := cmp.Diff(want, byID[a.ID()]); diff != "" {
		t.Errorf("window a (-want +got):\n%s", diff)
	}
	if got := byID[b.ID()]; got.Title != "Beta" || got.X != 200 || got.Y != 100 {
		t.Errorf("window b = %+v", got)
	}
	if got := byID[x.Window]; got.Title != "term one" || got.Class != "XTerm" || got.X != 301 || got.Y != 301 {
		// xterm has a 1-pixel border: the client area starts at (301,301).
		t.Errorf("xterm window = %+v, want title %q class XTerm at (301,301); all: %+v", got, "term one", ws)
	}

	// Moving and retitling show up; a gone window is reported as such.
	a.Move(30, 40)
	a.SetTitle("Alpha moved")
	w, ok, err := c.Window(t.Context(), a.ID())
	if err != nil || !ok || w.X != 30 || w.Y != 40 || w.Title != "Alpha moved" {
		t.Errorf("Window(a) = %+v, %v, %v; want moved to (30,40) titled Alpha moved", w, ok, err)
	}
	b.Close()
	if _, ok, err := c.Window(t.Context(), b.ID()); ok || err != nil {
		t.Errorf("Window(closed b) ok = %v, err = %v; want false, nil", ok, err)
	}
}

func TestSubscribeAndServerDeath(t *testing.T) {
	srv := testx.StartServer(t, xvfb.Options{Width: 64, Height: 64})
	c, err := display.Open(t.Context(), srv.Name(), display.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := make(chan xgb.Event, 16)
	unsub := c.Subscribe(func(ev xgb.Event) {
		select {
		case got <- ev:
		default:
		}
	})
	defer unsub()
	xproto.ChangeWindowAttributes(c.X, c.Screen.Root, xproto.CwEventMask, []uint32{xproto.EventMaskPropertyChange})
	a, _ := c.Atom("ACU_TEST")
	xproto.ChangeProperty(c.X, xproto.PropModeReplace, c.Screen.Root, a, xproto.AtomString, 8, 2, []byte("hi"))
	select {
	case ev := <-got:
		if _, ok := ev.(xproto.PropertyNotifyEvent); !ok {
			t.Errorf("event = %T, want PropertyNotifyEvent", ev)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no event delivered to subscriber")
	}
	srv.Kill()
	select {
	case <-c.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("Done not closed after the server died")
	}
	if c.Alive() {
		t.Error("Alive() = true after server death")
	}
}

func TestXIDRangeReuse(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 64, Height: 64})
	c, err := display.Open(t.Context(), dpy, display.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !c.Ext.XCMisc {
		t.Fatal("XC-MISC missing")
	}
	start, count, err := display.XIDRange(c.X)
	if err != nil || count == 0 {
		t.Fatalf("XIDRange() = %#x, %d, %v; want a free range", start, count, err)
	}
}

// A connection that has used up its initial resource-id range gets a new
// one from XC-MISC instead of failing.
func TestResourceIDsDoNotRunOut(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 64, Height: 64})
	c, err := display.Open(t.Context(), dpy, display.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	mask := xproto.Setup(c.X).ResourceIdMask
	n := int(mask & -mask) // increment between ids
	total := int(mask)/n + 16
	for i := range total {
		if _, err := c.X.NewId(); err != nil {
			t.Fatalf("NewId() #%d of %d = %v", i, total, err)
		}
	}
	// Ids from the new range work.
	if _, err := xproto.NewPixmapId(c.X); err != nil {
		t.Fatal(err)
	}
	if err := c.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}

	// Without the hook, a bare xgb connection runs out (the test is real).
	raw, err := xgb.NewConnDisplay(dpy)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var rawErr error
	for range total {
		if _, rawErr = raw.NewId(); rawErr != nil {
			break
		}
	}
	if rawErr == nil {
		t.Fatalf("a bare connection allocated %d ids without XC-MISC; the test proves nothing", total)
	}
}

// TestOpenScreenNumberOutOfRange: ":N.5" on a one-screen server is an
// error naming the screen count, not a panic in the X library.
func TestOpenScreenNumberOutOfRange(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 64, Height: 64})
	_, err := display.Open(t.Context(), dpy+".5", display.Options{})
	if !errors.Is(err, display.ErrBadName) || !strings.Contains(err.Error(), "1 screen") {
		t.Fatalf("Open(%s.5) = %v, want ErrBadName naming 1 screen", dpy, err)
	}
	c, err := display.Open(t.Context(), dpy+".0", display.Options{})
	if err != nil {
		t.Fatalf("Open(%s.0) = %v", dpy, err)
	}
	c.Close()
}
