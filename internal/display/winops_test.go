package display_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// eventually polls the window's state until ok holds; window managers act
// asynchronously. The deadline only bounds a broken run.
func eventually(t *testing.T, c *display.Conn, id uint32, what string, ok func(display.WindowState, error) bool) display.WindowState {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for {
		s, err := c.WindowState(ctx, id)
		if ok(s, err) {
			return s
		}
		select {
		case <-ctx.Done():
			t.Fatalf("window %#x: never %s; last state %+v, err %v", id, what, s, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func mapState(t *testing.T, c *display.Conn, id uint32) byte {
	t.Helper()
	a, err := xproto.GetWindowAttributes(c.X, xproto.Window(id)).Reply()
	if err != nil {
		t.Fatalf("GetWindowAttributes(%#x) = %v", id, err)
	}
	return a.MapState
}

func ip(v int) *int { return &v }

func TestWindowOps(t *testing.T) {
	for _, withWM := range []bool{false, true} {
		name := "no WM"
		if withWM {
			name = "openbox"
		}
		t.Run(name, func(t *testing.T) {
			dpy := testx.StartXvfb(t, xvfb.Options{Width: 800, Height: 600})
			if withWM {
				testx.StartWM(t, dpy)
			}
			c, err := display.Open(t.Context(), dpy, display.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			wm, err := c.WindowManager(t.Context())
			if err != nil || wm.Running != withWM {
				t.Fatalf("WindowManager() = %+v, %v; want running %v", wm, err, withWM)
			}
			xt := testx.StartXterm(t, dpy, testx.XtermSpec{Geometry: "40x10+10+10"})
			plain := testx.NewWindow(t, dpy, testx.Spec{Title: "plain", Class: "Plain", X: 300, Y: 300, W: 120, H: 90})
			id := xt.Window

			ws, err := c.WindowStates(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, w := range ws {
				found = found || w.ID == id
			}
			if !found {
				t.Fatalf("WindowStates() = %+v, want xterm %#x", ws, id)
			}

			res, err := c.FocusWindow(t.Context(), id)
			if err != nil {
				t.Fatalf("Focus = %v", err)
			}
			t.Logf("focus via %s", res.Method)
			eventually(t, c, id, "focused", func(s display.WindowState, err error) bool { return err == nil && s.Focused })
			if withWM {
				// The window manager sets the property after it focuses
				// the window: read it until it names the window.
				at, _ := c.Atom("_NET_ACTIVE_WINDOW")
				active := func() bool {
					r, err := xproto.GetProperty(c.X, false, c.Screen.Root, at, xproto.AtomWindow, 0, 1).Reply()
					return err == nil && len(r.Value) >= 4 && uint32(r.Value[0])|uint32(r.Value[1])<<8|uint32(r.Value[2])<<16|uint32(r.Value[3])<<24 == id
				}
				deadline := time.Now().Add(10 * time.Second)
				for !active() && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
				if !active() {
					t.Errorf("_NET_ACTIVE_WINDOW is not %#x after Focus", id)
				}
			} else {
				f, err := xproto.GetInputFocus(c.X).Reply()
				if err != nil || uint32(f.Focus) != id {
					t.Errorf("input focus = %v, %v; want %#x", f, err, id)
				}
			}

			if _, err := c.MoveResize(t.Context(), id, display.Geometry{X: ip(200), Y: ip(150)}); err != nil {
				t.Fatalf("move = %v", err)
			}
			eventually(t, c, id, "at 200,150", func(s display.WindowState, err error) bool { return err == nil && s.X == 200 && s.Y == 150 })
			if _, err := c.MoveResize(t.Context(), id, display.Geometry{W: ip(320), H: ip(200)}); err != nil {
				t.Fatalf("resize = %v", err)
			}
			// xterm sizes itself to whole character cells: accept the
			// nearest cell size below.
			eventually(t, c, id, "resized near 320x200", func(s display.WindowState, err error) bool {
				return err == nil && s.W <= 320 && s.W > 290 && s.H <= 200 && s.H > 170 && s.X == 200 && s.Y == 150
			})

			if _, err := c.Maximize(t.Context(), id); err != nil {
				t.Fatalf("Maximize = %v", err)
			}
			// The window manager sets the state before it resizes the
			// window: wait for both.
			s := eventually(t, c, id, "maximized", func(s display.WindowState, err error) bool {
				return err == nil && s.Maximized && s.W >= 600
			})
			if !withWM && (s.W != 800 || s.H != 600) {
				t.Errorf("maximized without WM = %dx%d, want 800x600", s.W, s.H)
			}
			if withWM && s.W < 600 {
				t.Errorf("maximized with WM = %dx%d, want nearly the screen", s.W, s.H)
			}

			if _, err := c.Minimize(t.Context(), id); err != nil {
				t.Fatalf("Minimize = %v", err)
			}
			eventually(t, c, id, "minimized", func(s display.WindowState, err error) bool { return err == nil && s.Minimized && !s.Mapped })
			if got := mapState(t, c, id); got == xproto.MapStateViewable {
				t.Errorf("map state after Minimize = viewable")
			}
			ws, err = c.WindowStates(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			listed := false
			for _, w := range ws {
				listed = listed || (w.ID == id && w.Minimized)
			}
			if !listed {
				t.Errorf("WindowStates() after Minimize = %+v, want %#x listed as minimized", ws, id)
			}
			if _, err := c.FocusWindow(t.Context(), id); err != nil {
				t.Fatalf("Focus (restore) = %v", err)
			}
			eventually(t, c, id, "restored", func(s display.WindowState, err error) bool { return err == nil && s.Mapped && !s.Minimized })

			if _, err := c.CloseWindow(t.Context(), id, display.CloseOptions{}); err != nil {
				t.Fatalf("CloseWindow(xterm) = %v", err)
			}
			eventually(t, c, id, "gone", func(_ display.WindowState, err error) bool { return errors.Is(err, display.ErrNoWindow) })

			// The plain window does not speak WM_DELETE_WINDOW.
			pid := plain.ID()
			if !withWM {
				if _, err := c.CloseWindow(t.Context(), pid, display.CloseOptions{}); !errors.Is(err, display.ErrNoDelete) {
					t.Errorf("CloseWindow(plain) = %v, want ErrNoDelete", err)
				}
			}
			res, err = c.CloseWindow(t.Context(), pid, display.CloseOptions{Kill: true, Grace: 200 * time.Millisecond})
			if err != nil {
				t.Fatalf("CloseWindow(plain, kill) = %v", err)
			}
			// Openbox itself kills a client that cannot be asked; without a
			// window manager acu does.
			if !withWM && res.Method != "KillClient" {
				t.Errorf("CloseWindow(plain, kill) method = %s, want KillClient", res.Method)
			}
			eventually(t, c, pid, "gone", func(_ display.WindowState, err error) bool { return errors.Is(err, display.ErrNoWindow) })
			if _, err := c.FocusWindow(t.Context(), pid); !errors.Is(err, display.ErrNoWindow) {
				t.Errorf("Focus(gone) = %v, want ErrNoWindow", err)
			}
		})
	}
}

func TestQueryPointer(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 800, Height: 600})
	w := testx.NewWindow(t, dpy, testx.Spec{Title: "under", Class: "U", X: 100, Y: 100, W: 200, H: 200})
	c, err := display.Open(t.Context(), dpy, display.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := xproto.WarpPointerChecked(c.X, 0, c.Screen.Root, 0, 0, 0, 0, 150, 160).Check(); err != nil {
		t.Fatal(err)
	}
	p, err := c.QueryPointer(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if p.X != 150 || p.Y != 160 || p.Window != w.ID() || len(p.Buttons) != 0 {
		t.Errorf("QueryPointer() = %+v, want 150,160 over %#x, no buttons", p, w.ID())
	}
}
