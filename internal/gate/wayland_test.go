package gate_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/wayland/sway"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// zenityEntry starts zenity's entry dialog natively on c (GDK_BACKEND=
// wayland) titled title; the returned func waits for it to exit and
// returns what it printed.
func zenityEntry(t *testing.T, ctx context.Context, c *sway.Compositor, title string) func() (string, error) {
	t.Helper()
	waylandtest.Need(t, "zenity")
	ctx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(ctx, "zenity", "--entry", "--title="+title, "--text=Name")
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8", "GDK_BACKEND=wayland", "NO_AT_BRIDGE=1"}, c.Env()...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("start zenity: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cancel(); <-exited; exited <- nil })
	return func() (string, error) {
		select {
		case err := <-exited:
			exited <- err
			return strings.TrimSuffix(stdout.String(), "\n"), err
		case <-ctx.Done():
			return "", errors.New("zenity did not exit")
		}
	}
}

// waitWindow waits until the gate lists a window titled title (focused
// when focused is set) on dpy.
func waitWindow(t *testing.T, ctx context.Context, g *gate.Gate, dpy, title string, focused bool) api.Window {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		l, err := g.Windows(ctx, dpy)
		if err == nil {
			for _, w := range l.Windows {
				if w.Title == title && (w.Focused || !focused) && w.W > 0 {
					return w
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no window %q (focused %v) on %s: %+v, %v", title, focused, dpy, l, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestWaylandHandsFillGTK drives a GTK entry on a real headless sway
// through the gate's hands: a click lands in the window sway's tree puts
// there (con_id, title, app_id), held ctrl selects all, typed text and
// repeated keys reach GTK's bindings, and zenity prints the result. A
// deny-list on the window's app id refuses the same click, audited.
func TestWaylandHandsFillGTK(t *testing.T) {
	waylandtest.Need(t, "sway")
	c := waylandtest.Start(t, 800, 500)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	dpy := c.Socket()
	var au audits
	g := gate.New(gate.Options{DefaultDisplay: dpy, Audit: au.add, Policy: gate.Policy{PauseOnUser: true}})
	defer g.Close()
	ctx = gate.WithCaller(ctx, gate.Caller{Token: "t", Engine: "api"})

	done := zenityEntry(t, ctx, c, "acu-gtk")
	w := waitWindow(t, ctx, g, dpy, "acu-gtk", true)
	if w.Class != "zenity" || w.Instance != "zenity" {
		t.Errorf("window = %+v, want class and instance zenity (its app_id)", w)
	}
	nodes, err := sway.Windows(ctx, c.IPCSocket())
	if err != nil || len(nodes) != 1 {
		t.Fatalf("sway tree: %+v, %v", nodes, err)
	}
	if w.ID != fmt.Sprintf("%#x", nodes[0].ID) {
		t.Errorf("window id = %s, want sway's con_id %d", w.ID, nodes[0].ID)
	}

	h, err := g.Hands(ctx, dpy)
	if err != nil {
		t.Fatalf("Hands: %v", err)
	}
	if h.Conn() != nil {
		t.Errorf("Hands.Conn on Wayland = %v, want nil (no X connection)", h.Conn())
	}
	if _, err := g.Conn(ctx, dpy); err == nil || !strings.Contains(err.Error(), "Wayland") {
		t.Errorf("Gate.Conn on Wayland: %v, want an error saying it is a Wayland display", err)
	}
	if _, err := h.ClickAt(ctx, nil, gate.ButtonLeft, 1); err == nil || !strings.Contains(err.Error(), "give a position") {
		t.Errorf("ClickAt(nil) before any move: %v, want an error asking for a position", err)
	}
	// The entry: the middle of the dialog's content is its label and entry
	// row; a click there lands in the dialog.
	mid := image.Pt(w.X+w.W/2, w.Y+w.H/2)
	land, err := h.ClickAt(ctx, &mid, gate.ButtonLeft, 1)
	if err != nil {
		t.Fatalf("ClickAt: %v", err)
	}
	if land.Window == nil || land.Window.Title != "acu-gtk" || land.Window.Class != "zenity" || land.Window.IDString() != w.ID {
		t.Errorf("landing = %+v, want the dialog (%s)", land.Window, w.ID)
	}
	if p, err := g.Pointer(ctx, dpy); err != nil || p.X != mid.X || p.Y != mid.Y || p.Window != w.ID {
		t.Errorf("Pointer = %+v, %v; want %v in %s", p, err, mid, w.ID)
	}

	// Focus back to the entry (the click may have hit the label), text
	// in, then ctrl held selects it all and the real text replaces it.
	if _, err := h.KeyHold(ctx, "shift+Tab", 0, 1); err != nil {
		t.Fatalf("KeyHold shift+Tab: %v", err)
	}
	for _, step := range []func() error{
		func() error { _, err := h.Type(ctx, "zzz"); return err },
		func() error { return h.ModsDown(ctx, "ctrl") },
		func() error { _, err := h.KeyHold(ctx, "a", 0, 1); return err },
		func() error { return h.ModsUp(ctx) },
		func() error { _, err := h.Type(ctx, "Grüße ✓ 日本!xy"); return err },
		func() error { _, err := h.KeyHold(ctx, "BackSpace", 0, 2); return err },
		func() error { _, err := h.KeyHold(ctx, "Left BackSpace", 0, 1); return err },
	} {
		if err := step(); err != nil {
			t.Fatalf("input: %v", err)
		}
	}

	// The ordering proof: the compositor took the keys and the dialog
	// repainted (the first Order starts the damage loop).
	h.Order(ctx, nil, time.Now(), time.Second)
	began := time.Now()
	if _, err := h.Type(ctx, "Q"); err != nil {
		t.Fatalf("Type: %v", err)
	}
	if r := h.Order(ctx, nil, began, 5*time.Second); !r.Proved || !strings.Contains(r.Note, "repaint") {
		t.Errorf("Order after typing = %+v, want proved by a repaint", r)
	}
	if _, err := h.KeyHold(ctx, "BackSpace", 0, 1); err != nil {
		t.Fatalf("KeyHold: %v", err)
	}

	// The deny-list by app id refuses a click in the dialog, and the
	// refusal is audited.
	gd := gate.New(gate.Options{DefaultDisplay: dpy, Audit: au.add, Policy: gate.Policy{Deny: []*regexp.Regexp{regexp.MustCompile("^zenity$")}}})
	defer gd.Close()
	hd, err := gd.Hands(ctx, dpy)
	if err != nil {
		t.Fatalf("Hands: %v", err)
	}
	_, err = hd.ClickAt(ctx, &mid, gate.ButtonLeft, 1)
	refusedWith(t, "click in a denied window", err, api.CodeWindowDenied)
	_, err = hd.Type(ctx, "no")
	refusedWith(t, "type into a denied window", err, api.CodeWindowDenied)

	// A key held down past the seat's repeat delay (sway's 600 ms) repeats
	// in the app: more than one z.
	if _, err := h.KeyHold(ctx, "z", 2*time.Second, 1); err != nil {
		t.Fatalf("KeyHold z for 2s: %v", err)
	}
	if _, err := h.KeyHold(ctx, "Return", 0, 1); err != nil {
		t.Fatalf("Return: %v", err)
	}
	got, err := done()
	if err != nil {
		t.Fatalf("zenity: %v", err)
	}
	// The cursor is before the "!" (Left above).
	if !regexp.MustCompile(`^Grüße ✓ 日zz+!$`).MatchString(got) {
		t.Errorf("zenity printed %q, want %q with the held z repeated", got, "Grüße ✓ 日zz…!")
	}
	var clicks, typed, refused int
	for _, ev := range au.all() {
		switch {
		case ev.Refused != "":
			refused++
		case ev.Effect == "click" && ev.Window == "acu-gtk":
			clicks++
		case ev.Effect == "type":
			typed++
		}
	}
	if clicks != 1 || typed < 3 || refused != 2 {
		t.Errorf("audit: %d clicks in acu-gtk, %d types, %d refusals; want 1, >= 3, 2: %+v", clicks, typed, refused, au.all())
	}
}

// TestWaylandWindows lists, focuses, moves, resizes and closes foot
// windows on a real sway through the gate, launches one with wait_window,
// refuses maximize (sway ignores it) and X11's kill, and round-trips the
// clipboard with wl-clipboard.
func TestWaylandWindows(t *testing.T) {
	waylandtest.Need(t, "sway")
	waylandtest.Need(t, "foot")
	c := waylandtest.Start(t, 800, 500)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	dpy := c.Socket()
	var au audits
	g := gate.New(gate.Options{DefaultDisplay: dpy, Audit: au.add, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8"}})
	defer g.Close()

	waylandtest.Client(t, c, "foot", "--title=left", "--app-id=acu-left")
	waitWindow(t, ctx, g, dpy, "left", false)
	res, err := g.Launch(ctx, api.LaunchRequest{Display: dpy, Argv: []string{"foot", "--title=right", "--app-id=acu-right"}, WaitWindow: true, Timeout: 30})
	if err != nil || res.Window == nil || res.Window.Title != "right" || res.Window.Class != "acu-right" || res.PID == 0 {
		t.Fatalf("Launch foot with wait_window = %+v, %v; want its window", res, err)
	}
	right := *res.Window
	t.Cleanup(func() { _ = killPID(res.PID) })
	left := waitWindow(t, ctx, g, dpy, "left", false)
	right = waitWindow(t, ctx, g, dpy, "right", true) // a new window takes the focus
	if left.Focused || left.ID == right.ID {
		t.Fatalf("left = %+v, right = %+v: want two windows, right focused", left, right)
	}

	if r, err := g.WindowOp(ctx, left.ID, api.WindowFocus, api.WindowOp{Display: dpy}); err != nil || r.Window == nil || !r.Window.Focused {
		t.Fatalf("focus left = %+v, %v; want it focused", r, err)
	}
	x, y, w, h := 120, 90, 300, 200
	if r, err := g.WindowOp(ctx, left.ID, api.WindowMove, api.WindowOp{Display: dpy, X: &x, Y: &y}); err != nil || r.Window == nil || r.Window.X != x || r.Window.Y != y {
		t.Fatalf("move left to %d,%d = %+v, %v", x, y, r.Window, err)
	}
	if r, err := g.WindowOp(ctx, left.ID, api.WindowResize, api.WindowOp{Display: dpy, W: &w, H: &h}); err != nil || r.Window == nil || r.Window.W != w || r.Window.H != h || r.Window.X != x || r.Window.Y != y {
		t.Fatalf("resize left to %dx%d = %+v, %v; want it there at %d,%d", w, h, r.Window, err, x, y)
	}
	_, err = g.WindowOp(ctx, left.ID, api.WindowMaximize, api.WindowOp{Display: dpy})
	if ge := (*gate.Error)(nil); !errors.As(err, &ge) || ge.Kind != gate.Conflict || !strings.Contains(err.Error(), "not available on this compositor") {
		t.Errorf("maximize on sway: %v, want a Conflict saying the compositor cannot", err)
	}
	if _, err := g.WindowOp(ctx, left.ID, api.WindowClose, api.WindowOp{Display: dpy, Kill: true}); err == nil || !strings.Contains(err.Error(), "X11") {
		t.Errorf("close with kill on Wayland: %v, want a refusal saying kill is X11's", err)
	}
	if _, err := g.WindowOp(ctx, "0x7fff", api.WindowFocus, api.WindowOp{Display: dpy}); err == nil || !strings.Contains(err.Error(), "no window") {
		t.Errorf("focus an unknown window: %v, want no such window", err)
	}

	// A click in the moved window lands there; foot, still, repaints for
	// nothing, so an Order with no input since proves nothing.
	hands, err := g.Hands(ctx, dpy)
	if err != nil {
		t.Fatalf("Hands: %v", err)
	}
	in := image.Pt(x+w/2, y+h/2)
	if l, err := hands.ClickAt(ctx, &in, gate.ButtonLeft, 1); err != nil || l.Window == nil || l.Window.Title != "left" {
		t.Errorf("click in the moved window landed in %+v, %v; want left", l.Window, err)
	}
	hands.Order(ctx, &in, time.Now(), 100*time.Millisecond) // starts the damage loop
	time.Sleep(200 * time.Millisecond)
	if r := hands.Order(ctx, &in, time.Now(), 300*time.Millisecond); r.Proved || !strings.Contains(r.Note, "did not repaint") {
		t.Errorf("Order with nothing sent since = %+v, want not proved, saying the window did not repaint", r)
	}

	// Clipboard: what acu writes, wl-paste prints; what wl-copy holds,
	// acu reads.
	waylandtest.Need(t, "wl-paste")
	if _, err := g.SetClipboard(ctx, api.Clipboard{Display: dpy, Text: "from acu ✓"}); err != nil {
		t.Fatalf("SetClipboard: %v", err)
	}
	paste := exec.CommandContext(ctx, "wl-paste", "--no-newline")
	paste.Env = c.Env()
	if out, err := paste.Output(); err != nil || string(out) != "from acu ✓" {
		t.Errorf("wl-paste after SetClipboard = %q, %v", out, err)
	}
	cp := exec.CommandContext(ctx, "wl-copy", "from wl-copy")
	cp.Env = c.Env()
	if err := cp.Run(); err != nil {
		t.Fatalf("wl-copy: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := g.GetClipboard(ctx, dpy, "", "")
		if err == nil && got.Text == "from wl-copy" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GetClipboard after wl-copy = %+v, %v", got, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := g.GetClipboard(ctx, dpy, api.SelectionPrimary, ""); err == nil || !strings.Contains(err.Error(), "clipboard selection only") {
		t.Errorf("primary on Wayland: %v, want a refusal", err)
	}
	// wl-copy serves until another client takes the clipboard: this ends it.
	if _, err := g.SetClipboard(ctx, api.Clipboard{Display: dpy, Text: "back"}); err != nil {
		t.Fatalf("SetClipboard: %v", err)
	}

	if r, err := g.WindowOp(ctx, right.ID, api.WindowClose, api.WindowOp{Display: dpy}); err != nil || r.Method != "sway:kill" {
		t.Fatalf("close right = %+v, %v", r, err)
	}
	deadline = time.Now().Add(20 * time.Second)
	for {
		l, err := g.Windows(ctx, dpy)
		if err == nil && len(l.Windows) == 1 && l.Windows[0].Title == "left" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after close: windows %+v, %v; want left only", l, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var ops []string
	for _, ev := range au.all() {
		if strings.HasPrefix(ev.Effect, "window:") || ev.Effect == "launch" || ev.Effect == "clipboard" {
			ops = append(ops, ev.Effect)
		}
	}
	if want := "launch window:focus window:move window:resize clipboard clipboard window:close"; strings.Join(ops, " ") != want {
		t.Errorf("audited %q, want %q", strings.Join(ops, " "), want)
	}
}

func killPID(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
