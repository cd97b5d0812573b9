package mutterframes_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/wayland/mutterframes"
	"github.com/acu-dev/acu/internal/wayland/portal"
)

func need(t testing.TB, programs ...string) {
	t.Helper()
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("ACU_REQUIRE_PORTAL") == "1" {
				t.Fatalf("%s is not installed, and ACU_REQUIRE_PORTAL=1 requires it (scripts/install-deps.sh): %v", p, err)
			}
			t.Skipf("%s is not installed (scripts/install-deps.sh installs the headless GNOME session): %v", p, err)
		}
	}
}

func red(f *frame.Frame, x, y int) bool {
	i := y*f.Stride + x*4 // BGRx
	return f.Pix[i+2] > 0xf0 && f.Pix[i+1] < 0x10 && f.Pix[i] < 0x10
}

// TestHubReadsMutter reads a real headless mutter's screen through the
// hub: the router tells mutter from other compositors, a frame is the
// monitor's size, a watch fires when an app draws and the next frame
// shows it; window targets and exclusions are refused with reasons.
func TestHubReadsMutter(t *testing.T) {
	need(t, "mutter", "pipewire", "wireplumber", "dbus-daemon", "gst-launch-1.0", "foot")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	h, err := portal.StartHeadless(ctx, portal.Options{Width: 800, Height: 500})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Stop)
	dpy := h.Socket()
	hub := mutterframes.New(mutterframes.Options{Bus: func() string { return h.BusAddress() }})
	defer hub.Close()
	if !hub.Is(ctx, dpy) {
		t.Fatalf("Is(%s) = false on mutter", dpy)
	}
	f, err := hub.Capture(ctx, dpy, capture.Target{Kind: capture.Screen})
	if err != nil {
		t.Fatal(err)
	}
	if f.W != 800 || f.H != 500 || red(f, 400, 250) {
		t.Fatalf("first frame %dx%d (red: %v), want the 800x500 monitor without foot", f.W, f.H, red(f, 400, 250))
	}
	ch, err := hub.Watch(ctx, dpy, capture.Target{Kind: capture.Crop, Crop: [4]int{250, 250, 750, 750}})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("foot", "--fullscreen", "--override=colors.background=ff0000", "sleep", "600")
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8"}, h.Env()...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				t.Fatal("the watch closed")
			}
		case <-ctx.Done():
			t.Fatalf("no watch event nor red frame: %v; mutter's log:\n%s", ctx.Err(), h.Log("mutter"))
		}
		f, err = hub.Capture(ctx, dpy, capture.Target{Kind: capture.Crop, Crop: [4]int{250, 250, 750, 750}})
		if err != nil {
			t.Fatal(err)
		}
		if f.W == 400 && f.H == 250 && red(f, 200, 125) {
			break
		}
	}
	if _, err := hub.Capture(ctx, dpy, capture.Target{Kind: capture.Window, Query: "foot"}); err == nil || !strings.Contains(err.Error(), "not available on GNOME") {
		t.Errorf("a window target on mutter: %v, want an error saying windows are not available on GNOME", err)
	}
	excl := mutterframes.New(mutterframes.Options{Bus: func() string { return h.BusAddress() }, Exclude: []string{"secret"}})
	defer excl.Close()
	if _, err := excl.Capture(ctx, dpy, capture.Target{Kind: capture.Screen}); err == nil || !strings.Contains(err.Error(), "ACU_EXCLUDE_WINDOWS") {
		t.Errorf("capture with exclusions on mutter: %v, want a refusal naming ACU_EXCLUDE_WINDOWS", err)
	}
	noBus := mutterframes.New(mutterframes.Options{})
	defer noBus.Close()
	if _, err := noBus.Capture(ctx, dpy, capture.Target{Kind: capture.Screen}); err == nil || !strings.Contains(err.Error(), "DBUS_SESSION_BUS_ADDRESS") {
		t.Errorf("capture without a bus: %v, want an error naming DBUS_SESSION_BUS_ADDRESS", err)
	}
}

// TestHubStopsWhenUnused: a display's screen cast and pipeline close
// after the hub's Idle time with nothing reading or watching, not while a
// watch is open, and a read after that opens them again.
func TestHubStopsWhenUnused(t *testing.T) {
	need(t, "mutter", "pipewire", "wireplumber", "dbus-daemon", "gst-launch-1.0")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	h, err := portal.StartHeadless(ctx, portal.Options{Width: 320, Height: 200})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Stop)
	hub := mutterframes.New(mutterframes.Options{Bus: func() string { return h.BusAddress() }, Idle: 200 * time.Millisecond})
	defer hub.Close()
	screen := capture.Target{Kind: capture.Screen}
	wctx, stop := context.WithCancel(ctx)
	if _, err := hub.Watch(wctx, h.Socket(), screen); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if n := hub.Open(); n != 1 {
		t.Fatalf("with a watch open, %d screen casts are open, want 1", n)
	}
	stop()
	for hub.Open() != 0 {
		if ctx.Err() != nil {
			t.Fatal("the unused screen cast was never closed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if f, err := hub.Capture(ctx, h.Socket(), screen); err != nil || f.W != 320 {
		t.Fatalf("a read after the close: %v, %v; want a fresh 320x200 frame", f, err)
	}
	if n := hub.Open(); n != 1 {
		t.Fatalf("after a read, %d screen casts are open, want 1", n)
	}
}
