package gate_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/wayland/portal"
)

// startMutter starts a real headless mutter (its own bus, PipeWire and
// WirePlumber), skipping when one is not installed, or failing with
// ACU_REQUIRE_PORTAL=1 (scripts/test.sh).
func startMutter(t testing.TB, programs ...string) *portal.Headless {
	t.Helper()
	for _, p := range append([]string{"mutter", "pipewire", "wireplumber", "dbus-daemon", "gst-launch-1.0"}, programs...) {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("ACU_REQUIRE_PORTAL") == "1" {
				t.Fatalf("%s is not installed, and ACU_REQUIRE_PORTAL=1 requires it (scripts/install-deps.sh): %v", p, err)
			}
			t.Skipf("%s is not installed (scripts/install-deps.sh installs the headless GNOME session): %v", p, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h, err := portal.StartHeadless(ctx, portal.Options{Width: 1280, Height: 720})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Stop)
	return h
}

// mutterZenity starts zenity's entry dialog on mutter; the returned func
// waits for it to exit and returns what it printed.
func mutterZenity(t *testing.T, ctx context.Context, h *portal.Headless) func() (string, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(ctx, "zenity", "--entry", "--title=acu-gnome", "--text=Name")
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8", "GDK_BACKEND=wayland", "NO_AT_BRIDGE=1"}, h.Env()...)
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

// dialogBox grabs frames of mutter's monitor (a screen cast of the
// test's own, as a person looking at the screen) until a light dialog
// shows on the black desktop, and returns its bounds.
func dialogBox(t *testing.T, ctx context.Context, h *portal.Headless) (image.Rectangle, image.Image) {
	t.Helper()
	s, err := portal.Open(ctx, h.BusAddress(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for {
		img, err := portal.Grab(ctx, h.PipeWireSocket(), s.Node())
		if err != nil {
			t.Fatal(err)
		}
		var box image.Rectangle
		b := img.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			n, x0, x1 := 0, 0, 0
			for x := b.Min.X; x < b.Max.X; x++ {
				r, g, bl, _ := img.At(x, y).RGBA()
				if r>>8 > 0xc0 && g>>8 > 0xc0 && bl>>8 > 0xc0 {
					if n == 0 {
						x0 = x
					}
					n, x1 = n+1, x+1
				}
			}
			if n > 40 { // a row of the dialog, not of the pointer drawn in
				box = box.Union(image.Rect(x0, y, x1, y+1))
			}
		}
		if box.Dx() > 150 && box.Dy() > 80 {
			if dir := os.Getenv("ACU_PORTAL_FRAMES"); dir != "" {
				f, _ := os.Create(filepath.Join(dir, "gnome-dialog.png"))
				_ = png.Encode(f, img)
				f.Close()
			}
			return box, img
		}
		if ctx.Err() != nil {
			t.Fatalf("no dialog on mutter's screen: %v\nmutter's log:\n%s", ctx.Err(), h.Log("mutter"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestGnomeHandsFillZenity drives zenity's GTK entry dialog on a real
// headless mutter through the gate: the display's device is mutter's
// remote-desktop session (mutter offers no wlroots input protocol), the
// pointer is where acu put it, typed text and keys reach GTK (the text's
// characters outside the keyboard layout pasted), a click on OK closes
// the dialog, and zenity prints what was typed.
func TestGnomeHandsFillZenity(t *testing.T) {
	h := startMutter(t, "zenity")
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	dpy := h.Socket()
	var au audits
	g := gate.New(gate.Options{DefaultDisplay: dpy, Audit: au.add, Env: []string{"DBUS_SESSION_BUS_ADDRESS=" + h.BusAddress()}})
	defer g.Close()
	ctx = gate.WithCaller(ctx, gate.Caller{Token: "t", Engine: "api"})

	done := mutterZenity(t, ctx, h)
	box, _ := dialogBox(t, ctx, h)
	t.Logf("dialog at %v", box)

	hands, err := g.Hands(ctx, dpy)
	if err != nil {
		t.Fatalf("Hands on mutter: %v", err)
	}
	if _, err := hands.ClickAt(ctx, nil, gate.ButtonLeft, 1); err == nil || !strings.Contains(err.Error(), "give a position") {
		t.Errorf("ClickAt(nil) before any move: %v, want an error asking for a position", err)
	}
	if _, err := hands.Type(ctx, "a\x07b"); err == nil || !strings.Contains(err.Error(), "control") {
		t.Errorf("Type of a control character on GNOME: %v, want an error naming it", err)
	}
	// Grüße ✓ 日本 is outside the session's US layout: pasted.
	if _, err := hands.Type(ctx, "Hello GNOME 42! Grüße ✓ 日本X"); err != nil {
		t.Fatalf("Type: %v", err)
	}
	if _, err := hands.KeyHold(ctx, "BackSpace", 0, 1); err != nil {
		t.Fatalf("Key: %v", err)
	}
	ok := image.Pt(box.Max.X-45, box.Max.Y-25)
	if _, err := hands.ClickAt(ctx, &ok, gate.ButtonLeft, 1); err != nil {
		t.Fatalf("ClickAt OK: %v", err)
	}
	if p, err := hands.Pointer(ctx); err != nil || p != ok {
		t.Errorf("Pointer = %v, %v; want %v, where acu put it", p, err, ok)
	}
	got, err := done()
	if want := "Hello GNOME 42! Grüße ✓ 日本"; err != nil || got != want {
		t.Fatalf("zenity printed %q (%v), want %q", got, err, want)
	}
	if _, err := g.Windows(ctx, dpy); err == nil || !strings.Contains(err.Error(), "not available on GNOME") {
		t.Errorf("Windows on mutter: %v, want an error saying they are not available on GNOME", err)
	}

	// With a deny-list, input on GNOME could land in a denied window that
	// acu cannot see: pointer and keys are refused, and audited.
	gd := gate.New(gate.Options{DefaultDisplay: dpy, Audit: au.add, Env: []string{"DBUS_SESSION_BUS_ADDRESS=" + h.BusAddress()},
		Policy: gate.Policy{Deny: []*regexp.Regexp{regexp.MustCompile("^Secrets$")}}})
	defer gd.Close()
	hd, err := gd.Hands(ctx, dpy)
	if err != nil {
		t.Fatalf("Hands on mutter with a deny-list: %v", err)
	}
	if _, err := hd.ClickAt(ctx, &ok, gate.ButtonLeft, 1); err == nil || !strings.Contains(err.Error(), "deny-list") {
		t.Errorf("a click on GNOME with a deny-list: %v, want a refusal naming the deny-list", err)
	}
	if _, err := hd.Type(ctx, "x"); err == nil || !strings.Contains(err.Error(), "deny-list") {
		t.Errorf("typing on GNOME with a deny-list: %v, want a refusal naming the deny-list", err)
	}
}

// TestGnomeUserFirst: on a real headless mutter the gate's user-first
// check reads mutter's idle monitor. 200 of acu's own clicks in a row are
// never taken for the user's; after input from another remote-desktop
// session (the user here: it is not acu's) an effect is refused as
// user_active until the quiet period has passed.
func TestGnomeUserFirst(t *testing.T) {
	h := startMutter(t)
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	dpy := h.Socket()
	person, err := portal.Open(ctx, h.BusAddress(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer person.Close()
	const quiet = 700 * time.Millisecond
	var au audits
	g := gate.New(gate.Options{DefaultDisplay: dpy, Audit: au.add, Env: []string{"DBUS_SESSION_BUS_ADDRESS=" + h.BusAddress()},
		Policy: gate.Policy{PauseOnUser: true, Quiet: quiet}})
	defer g.Close()
	hands, err := g.Hands(ctx, dpy)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if _, err := hands.ClickAt(ctx, &image.Point{X: 20 + i, Y: 20 + i%7}, gate.ButtonLeft, 1); err != nil {
			t.Fatalf("acu's own click %d: %v", i, err)
		}
	}
	if _, err := hands.Type(ctx, "acu types"); err != nil {
		t.Fatalf("acu's own typing: %v", err)
	}
	// The user's input within 20 ms after acu's is taken for acu's
	// (portal's ownGrace): the user clicks later than that.
	time.Sleep(100 * time.Millisecond)
	if err := person.Click(ctx, 600, 400, 1); err != nil {
		t.Fatal(err)
	}
	if err := person.Settled(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = hands.ClickAt(ctx, &image.Point{X: 30, Y: 30}, gate.ButtonLeft, 1)
	r, ok := gate.IsRefused(err)
	if !ok || r.Code != api.CodeUserActive {
		t.Fatalf("a click right after the user's: %v, want a user_active refusal", err)
	}
	if r.RetryAfter <= 0 || r.RetryAfter > quiet {
		t.Errorf("retry after %s, want within the quiet period %s", r.RetryAfter, quiet)
	}
	time.Sleep(r.RetryAfter + 50*time.Millisecond)
	if _, err := hands.ClickAt(ctx, &image.Point{X: 30, Y: 30}, gate.ButtonLeft, 1); err != nil {
		t.Fatalf("a click after the user was still for %s: %v", quiet, err)
	}
	// The user's input after acu's own effect, read before the next.
	time.Sleep(100 * time.Millisecond)
	if err := person.Move(ctx, 500, 300); err != nil {
		t.Fatal(err)
	}
	if err := person.Settled(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := hands.Type(ctx, "x"); err == nil {
		t.Fatal("typing right after the user moved the pointer was not refused")
	}
}

// TestGnomeOrder: the ordering proof on a real headless mutter. A click
// on the empty desktop repaints nothing (the proof's screen cast leaves
// the pointer out), so it is not proved; typing into zenity's entry is
// proved by mutter's idle monitor (it handled the keys) and the entry's
// repaint, and zenity prints the text.
func TestGnomeOrder(t *testing.T) {
	h := startMutter(t, "zenity")
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	dpy := h.Socket()
	g := gate.New(gate.Options{DefaultDisplay: dpy, Env: []string{"DBUS_SESSION_BUS_ADDRESS=" + h.BusAddress()}})
	defer g.Close()
	ctx = gate.WithCaller(ctx, gate.Caller{Token: "t", Engine: "api"})
	hands, err := g.Hands(ctx, dpy)
	if err != nil {
		t.Fatal(err)
	}
	p := image.Pt(900, 600)
	hands.Order(ctx, &p, time.Now(), time.Second) // starts the proof's screen cast
	began := time.Now()
	if _, err := hands.ClickAt(ctx, &p, gate.ButtonLeft, 1); err != nil {
		t.Fatal(err)
	}
	if r := hands.Order(ctx, &p, began, 500*time.Millisecond); r.Proved || !strings.Contains(r.Note, "did not repaint") {
		t.Errorf("Order after a click on the empty desktop = %+v, want not proved: nothing repainted", r)
	}

	done := mutterZenity(t, ctx, h)
	box, _ := dialogBox(t, ctx, h)
	began = time.Now()
	if _, err := hands.Type(ctx, "in order"); err != nil {
		t.Fatal(err)
	}
	r := hands.Order(ctx, nil, began, 10*time.Second)
	if !r.Proved || !strings.Contains(r.Note, "idle monitor") {
		t.Errorf("Order after typing into zenity = %+v, want proved by mutter's idle monitor and a repaint", r)
	}
	ok := image.Pt(box.Max.X-45, box.Max.Y-25)
	if _, err := hands.ClickAt(ctx, &ok, gate.ButtonLeft, 1); err != nil {
		t.Fatal(err)
	}
	if got, err := done(); err != nil || got != "in order" {
		t.Fatalf("zenity printed %q (%v), want %q", got, err, "in order")
	}
}
