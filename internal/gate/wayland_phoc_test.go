package gate_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/wayland/screencopy"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// phocWindow waits until the gate lists a window titled title on dpy
// that satisfies ok.
func phocWindow(t *testing.T, ctx context.Context, g *gate.Gate, dpy, title string, ok func(api.Window) bool) (api.Window, api.WindowList) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		l, err := g.Windows(ctx, dpy)
		if err == nil {
			for _, w := range l.Windows {
				if w.Title == title && ok(w) {
					return w, l
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no window %q as wanted on %s: %+v, %v", title, dpy, l, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// redBox is the bounding box of pure red pixels on the compositor's
// screen, polled until ok holds.
func redBox(t *testing.T, socket string, ok func(image.Rectangle) bool) image.Rectangle {
	t.Helper()
	cap, err := screencopy.Open(t.Context(), socket, "", "")
	if err != nil {
		t.Fatalf("screencopy: %v", err)
	}
	defer cap.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		f, err := cap.Grab(t.Context())
		if err != nil {
			t.Fatalf("Grab: %v", err)
		}
		var r image.Rectangle
		for y := 0; y < f.H; y++ {
			for x := 0; x < f.W; x++ {
				p := f.Pix[y*f.Stride+x*4:]
				if p[2] == 0xff && p[1] == 0 && p[0] == 0 {
					r = r.Union(image.Rect(x, y, x+1, y+1))
				}
			}
		}
		if ok(r) || time.Now().After(deadline) {
			return r
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestWaylandGateOnPhoc runs the gate on phoc, a wlroots compositor
// without sway's IPC, so its windows come from the toplevel protocol
// alone: the list has titles, app ids and states, no rectangles, and a
// note saying so; focus, maximize (the window's red then fills the
// output in a screencopy frame) and close work, minimize (which phoc
// ignores), move and resize are 409s; text typed through the virtual
// keyboard lands in the activated window (zenity prints it); the
// clipboard round-trips; a launch waits for its new window. With a
// deny-list, a click is refused because the window under it cannot be
// known, and typing is refused in a denied activated window but passes
// in another.
func TestWaylandGateOnPhoc(t *testing.T) {
	c := waylandtest.StartPhoc(t, 800, 600)
	waylandtest.Need(t, "zenity")
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	ctx = gate.WithCaller(ctx, gate.Caller{Token: "t", Engine: "api"})
	dpy := c.Socket()
	var au audits
	g := gate.New(gate.Options{DefaultDisplay: dpy, Audit: au.add})
	defer g.Close()

	// zenity's entry, native on Wayland; its output is what it received.
	zctx, zcancel := context.WithCancel(ctx)
	z := exec.CommandContext(zctx, "zenity", "--entry", "--title=acu-phoc", "--text=Name")
	z.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8", "GDK_BACKEND=wayland", "NO_AT_BRIDGE=1"}, c.Env()...)
	var zout bytes.Buffer
	z.Stdout = &zout
	if err := z.Start(); err != nil {
		t.Fatalf("start zenity: %v", err)
	}
	zdone := make(chan error, 1)
	go func() { zdone <- z.Wait() }()
	defer func() { zcancel(); <-zdone }()

	zw, l := phocWindow(t, ctx, g, dpy, "acu-phoc", func(w api.Window) bool { return w.Focused })
	if l.WM != "wlr-foreign-toplevel" || !strings.Contains(l.Note, "no window geometry") {
		t.Errorf("list wm %q note %q, want wlr-foreign-toplevel and a note saying there is no geometry", l.WM, l.Note)
	}
	if zw.Class != "zenity" || zw.X != 0 || zw.W != 0 || !zw.Mapped {
		t.Errorf("zenity's window = %+v, want class zenity (its app id), no rectangle, mapped", zw)
	}

	// A launch on this compositor waits for the new toplevel.
	lr, err := g.Launch(ctx, api.LaunchRequest{Display: dpy, WaitWindow: true, Timeout: 30,
		Argv: []string{"foot", "--title=RED", "--app-id=acu-red", "--window-size-pixels=300x200", "--override=colors.background=ff0000", "sh", "-c", "exec sleep 600"}})
	if err != nil || lr.Window == nil || lr.Window.Title != "RED" {
		t.Fatalf("Launch foot with wait_window: %+v, %v", lr, err)
	}
	defer syscall.Kill(lr.PID, syscall.SIGKILL) // foot exits on close; this covers a failure before it
	red, _ := phocWindow(t, ctx, g, dpy, "RED", func(w api.Window) bool { return w.Focused })
	if lr.Window.ID != red.ID {
		t.Errorf("launch's window %s, listed %s", lr.Window.ID, red.ID)
	}
	before := redBox(t, dpy, func(r image.Rectangle) bool { return !r.Empty() })
	if before.Dx() >= 800 {
		t.Fatalf("RED is %v before maximize: the test would prove nothing", before)
	}

	// Maximize: the state, and the window's size on screen.
	res, err := g.WindowOp(ctx, red.ID, api.WindowMaximize, api.WindowOp{Display: dpy})
	if err != nil || res.Window == nil || !res.Window.Maximized || res.Method != "wlr-foreign-toplevel:set_maximized" {
		t.Fatalf("maximize: %+v, %v", res, err)
	}
	if after := redBox(t, dpy, func(r image.Rectangle) bool { return r.Dx() > 780 && r.Dy() > 550 }); after.Dx() <= 780 {
		t.Errorf("RED is %v on screen after maximize, want the 800x600 output", after)
	}
	// Minimize (phoc ignores it), move and resize: 409s saying so.
	for _, op := range []struct {
		op   string
		req  api.WindowOp
		want string
	}{
		{api.WindowMinimize, api.WindowOp{Display: dpy}, "ignores the request"},
		{api.WindowMove, api.WindowOp{Display: dpy, X: phocInt(10), Y: phocInt(10)}, "no protocol to place a window"},
		{api.WindowResize, api.WindowOp{Display: dpy, W: phocInt(200), H: phocInt(100)}, "no protocol to place a window"},
	} {
		_, err := g.WindowOp(ctx, red.ID, op.op, op.req)
		var ge *gate.Error
		if !errors.As(err, &ge) || ge.Kind != gate.Conflict || !strings.Contains(err.Error(), op.want) {
			t.Errorf("%s: %v, want a conflict saying %q", op.op, err, op.want)
		}
	}

	// Focus zenity, type into it through the virtual keyboard.
	if _, err := g.WindowOp(ctx, zw.ID, api.WindowFocus, api.WindowOp{Display: dpy}); err != nil {
		t.Fatalf("focus zenity: %v", err)
	}
	phocWindow(t, ctx, g, dpy, "acu-phoc", func(w api.Window) bool { return w.Focused })

	// A deny-list on zenity: typing into it (the activated window) is
	// refused; a click anywhere is refused, its window being unknown.
	gd := gate.New(gate.Options{DefaultDisplay: dpy, Audit: au.add, Policy: gate.Policy{Deny: []*regexp.Regexp{regexp.MustCompile("^zenity$")}}})
	defer gd.Close()
	hd, err := gd.Hands(ctx, dpy)
	if err != nil {
		t.Fatalf("Hands (deny-list): %v", err)
	}
	_, err = hd.Type(ctx, "x")
	refusedWith(t, "typing into the activated, denied zenity", err, api.CodeWindowDenied)
	p := image.Pt(400, 300)
	_, err = hd.ClickAt(ctx, &p, gate.ButtonLeft, 1)
	refusedWith(t, "a click where no window can be known", err, api.CodeWindowDenied)
	if err == nil || !strings.Contains(err.Error(), "no window geometry") {
		t.Errorf("click refusal: %v, want it to say the compositor gives no window geometry", err)
	}

	h, err := g.Hands(ctx, dpy)
	if err != nil {
		t.Fatalf("Hands: %v", err)
	}
	// A click with no deny-list goes through (its window unknown), and
	// its ordering proof is a repaint anywhere on the screen.
	h.Order(ctx, nil, time.Now(), time.Second) // starts the damage loop
	began := time.Now()
	land, err := h.ClickAt(ctx, &p, gate.ButtonLeft, 1)
	if err != nil || land.Window != nil {
		t.Fatalf("ClickAt without a deny-list: %+v, %v; want it sent, landing in no known window", land, err)
	}
	if r := h.Order(ctx, &p, began, 10*time.Second); !r.Proved {
		t.Errorf("Order after the click = %+v, want proved by a repaint of the screen", r)
	}
	if _, err := g.WindowOp(ctx, zw.ID, api.WindowFocus, api.WindowOp{Display: dpy}); err != nil {
		t.Fatalf("focus zenity again: %v", err)
	}
	phocWindow(t, ctx, g, dpy, "acu-phoc", func(w api.Window) bool { return w.Focused })
	began = time.Now()
	land, err = h.Type(ctx, "hello phoc ✓")
	if err != nil {
		t.Fatalf("Type: %v", err)
	}
	if land.Window == nil || land.Window.Title != "acu-phoc" {
		t.Errorf("typing landed in %+v, want zenity's activated window", land.Window)
	}
	if r := h.Order(ctx, nil, began, 10*time.Second); !r.Proved {
		t.Errorf("Order after typing = %+v, want proved by a repaint", r)
	}
	if _, err := h.KeyHold(ctx, "Return", 0, 1); err != nil {
		t.Fatalf("Return: %v", err)
	}
	select {
	case <-zdone:
		zdone <- nil
	case <-ctx.Done():
		t.Fatalf("zenity did not exit after Return; it printed %q", zout.String())
	}
	if got := strings.TrimSuffix(zout.String(), "\n"); got != "hello phoc ✓" {
		t.Errorf("zenity printed %q, want %q", got, "hello phoc ✓")
	}

	// With zenity gone, RED is activated: typing there passes the deny-list.
	phocWindow(t, ctx, g, dpy, "RED", func(w api.Window) bool { return w.Focused })
	if _, err := hd.Type(ctx, "ok"); err != nil {
		t.Errorf("typing into RED with zenity denied: %v", err)
	}

	// The clipboard, through wlr-data-control.
	if _, err := g.SetClipboard(ctx, api.Clipboard{Display: dpy, Text: "from acu on phoc"}); err != nil {
		t.Fatalf("SetClipboard: %v", err)
	}
	if cb, err := g.GetClipboard(ctx, dpy, "", ""); err != nil || cb.Text != "from acu on phoc" {
		t.Errorf("GetClipboard: %+v, %v", cb, err)
	}

	// Close asks foot to close; it exits and its window goes.
	if _, err := g.WindowOp(ctx, red.ID, api.WindowClose, api.WindowOp{Display: dpy}); err != nil {
		t.Fatalf("close: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		l, err := g.Windows(ctx, dpy)
		if err == nil && len(l.Windows) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("windows after close: %+v, %v", l, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func phocInt(v int) *int { return &v }
