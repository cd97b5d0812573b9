package testx

import (
	"context"
	"image/color"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"

	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/xvfb"
)

func screenPixel(t *testing.T, c *xgb.Conn, x, y int) color.RGBA {
	t.Helper()
	root := xproto.Setup(c).DefaultScreen(c).Root
	img, err := xproto.GetImage(c, xproto.ImageFormatZPixmap, xproto.Drawable(root), int16(x), int16(y), 1, 1, 0xffffffff).Reply()
	if err != nil {
		t.Fatalf("GetImage: %v", err)
	}
	return color.RGBA{img.Data[2], img.Data[1], img.Data[0], 0xff}
}

func TestWindowContentAndInput(t *testing.T) {
	dpy := StartXvfb(t, xvfb.Options{Width: 320, Height: 240})
	pattern := func(x, y int) color.RGBA { return color.RGBA{uint8(x), uint8(y), uint8(x ^ y), 0xff} }
	for _, depth := range []int{0, 32} {
		w := NewWindow(t, dpy, Spec{Title: "testx pattern", Class: "AcuTest", X: 10, Y: 20, W: 100, H: 80, Pattern: pattern, Depth: depth})
		c, err := xgb.NewConnDisplay(dpy)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for _, p := range [][2]int{{0, 0}, {99, 79}, {50, 40}} {
			if got, want := screenPixel(t, c, 10+p[0], 20+p[1]), pattern(p[0], p[1]); got != want {
				t.Errorf("depth %d: screen pixel at window %v = %v, want %v", depth, p, got, want)
			}
		}
		w.SetPixel(5, 6, color.RGBA{1, 2, 3, 0})
		if got, want := screenPixel(t, c, 15, 26), (color.RGBA{1, 2, 3, 0xff}); got != want {
			t.Errorf("depth %d: after SetPixel = %v, want %v", depth, got, want)
		}
		w.Move(100, 100)
		if got, want := screenPixel(t, c, 100, 100), pattern(0, 0); got != want {
			t.Errorf("depth %d: after Move = %v, want %v", depth, got, want)
		}
		w.Close()
	}
}

func TestInputRecorded(t *testing.T) {
	dpy := StartXvfb(t, xvfb.Options{Width: 320, Height: 240})
	w := NewWindow(t, dpy, Spec{Title: "input", X: 0, Y: 0, W: 320, H: 240})
	w.Focus()
	c, err := xgb.NewConnDisplay(dpy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ext, err := display.InitExtensions(c); err != nil || !ext.XTest {
		t.Fatalf("InitExtensions() = %+v, %v; want XTEST", ext, err)
	}
	root := xproto.Setup(c).DefaultScreen(c).Root
	xtest.FakeInput(c, xproto.MotionNotify, 0, 0, root, 30, 40, 0)
	xtest.FakeInput(c, xproto.ButtonPress, 1, 0, root, 0, 0, 0)
	xtest.FakeInput(c, xproto.ButtonRelease, 1, 0, root, 0, 0, 0)
	// Type "aB": keycode for 'a' and 'b' from the map, with shift for B.
	km := &keymap{}
	if err := km.load(c); err != nil {
		t.Fatal(err)
	}
	code := func(ks uint32) byte {
		for i := 0; i*km.per < len(km.keysyms); i++ {
			if uint32(km.keysyms[i*km.per]) == ks {
				return byte(int(km.min) + i)
			}
		}
		t.Fatalf("no keycode for keysym %#x", ks)
		return 0
	}
	shift := code(0xffe1)
	for _, k := range []struct {
		code  byte
		shift bool
	}{{code('a'), false}, {code('b'), true}} {
		if k.shift {
			xtest.FakeInput(c, xproto.KeyPress, shift, 0, root, 0, 0, 0)
		}
		xtest.FakeInput(c, xproto.KeyPress, k.code, 0, root, 0, 0, 0)
		xtest.FakeInput(c, xproto.KeyRelease, k.code, 0, root, 0, 0, 0)
		if k.shift {
			xtest.FakeInput(c, xproto.KeyRelease, shift, 0, root, 0, 0, 0)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	_, err = w.WaitFor(ctx, func(evs []Event) bool {
		n := 0
		for _, e := range evs {
			if e.Kind == KeyRelease {
				n++
			}
		}
		return n >= 3
	})
	if err != nil {
		t.Fatalf("waiting for events: %v (got %+v)", err, w.Events())
	}
	var press *Event
	for _, e := range w.Events() {
		if e.Kind == ButtonPress {
			press = &e
			break
		}
	}
	if press == nil || press.X != 30 || press.Y != 40 || press.Button != 1 {
		t.Errorf("button press = %+v, want button 1 at (30,40)", press)
	}
	if got := w.Typed(); got != "aB" {
		t.Errorf("Typed() = %q, want %q", got, "aB")
	}
}

func TestXterm(t *testing.T) {
	dpy := StartXvfb(t, xvfb.Options{Width: 640, Height: 480})
	x := StartXterm(t, dpy, XtermSpec{Title: "xterm under test", Geometry: "40x10+0+0", Command: []string{"sleep", "60"}})
	if x.Window == 0 {
		t.Fatal("StartXterm: window id 0")
	}
}
