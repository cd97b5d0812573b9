package portal

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// need skips the test when a program of the GNOME session is missing,
// or fails it when ACU_REQUIRE_PORTAL=1.
func need(t *testing.T, programs ...string) {
	t.Helper()
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("ACU_REQUIRE_PORTAL") == "1" {
				t.Fatalf("%s is not installed, and ACU_REQUIRE_PORTAL=1 requires it (run scripts/install-deps.sh): %v", p, err)
			}
			t.Skipf("%s is not installed (scripts/install-deps.sh installs it): %v", p, err)
		}
	}
}

func startSession(t *testing.T) (*Headless, *Session) {
	t.Helper()
	need(t, "mutter", "pipewire", "wireplumber", "dbus-daemon", "gst-launch-1.0")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h, err := StartHeadless(ctx, Options{Width: 1280, Height: 720})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Stop)
	s, err := Open(ctx, h.BusAddress(), "")
	if err != nil {
		t.Fatalf("%v\nmutter's log:\n%s", err, h.Log("mutter"))
	}
	t.Cleanup(func() { s.Close() })
	return h, s
}

// client starts a native Wayland program on the session, its output into out.
func client(t *testing.T, h *Headless, out *bytes.Buffer, name string, args ...string) (*exec.Cmd, chan struct{}) {
	t.Helper()
	need(t, name)
	cmd := exec.Command(name, args...)
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8",
		"GDK_BACKEND=wayland", "NO_AT_BRIDGE=1"}, h.Env()...)
	if out != nil {
		cmd.Stdout = out
	}
	cmd.Stderr = &bytes.Buffer{}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	return cmd, done
}

// changed counts the pixels that differ between two frames of one size.
func changed(a, b image.Image) int {
	n := 0
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if a.At(x, y) != b.At(x, y) {
				n++
			}
		}
	}
	return n
}

// waitFrame grabs frames of the session's stream until ok holds for one,
// and returns it.
func waitFrame(t *testing.T, ctx context.Context, h *Headless, s *Session, what string, ok func(image.Image) bool) image.Image {
	t.Helper()
	for {
		img, err := Grab(ctx, h.PipeWireSocket(), s.Node())
		if err != nil {
			t.Fatal(err)
		}
		if ok(img) {
			return img
		}
		if ctx.Err() != nil {
			if dir := os.Getenv("ACU_PORTAL_FRAMES"); dir != "" {
				if f, err := os.Create(filepath.Join(dir, "last-frame.png")); err == nil {
					_ = png.Encode(f, img)
					f.Close()
				}
			}
			t.Fatalf("waiting for %s: %v (ACU_PORTAL_FRAMES=DIR keeps the last frame); mutter's log:\n%s", what, ctx.Err(), h.Log("mutter"))
		}
	}
}

// TestFramesShowTheScreen reads the monitor's PipeWire stream: a frame is
// the monitor's size, and an app's window drawn after the first frame
// changes the next ones.
func TestFramesShowTheScreen(t *testing.T) {
	h, s := startSession(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if s.Node() == 0 {
		t.Fatal("no PipeWire node")
	}
	blank, err := Grab(ctx, h.PipeWireSocket(), s.Node())
	if err != nil {
		t.Fatal(err)
	}
	if got := blank.Bounds(); got != image.Rect(0, 0, 1280, 720) {
		t.Fatalf("frame is %v, want the 1280x720 monitor", got)
	}
	need(t, "foot")
	client(t, h, nil, "foot", "--fullscreen", "--override=colors.background=ff0000", "sleep", "600")
	red := waitFrame(t, ctx, h, s, "foot's red background", func(img image.Image) bool {
		r, g, b, _ := img.At(640, 360).RGBA()
		return r>>8 > 0xf0 && g>>8 < 0x10 && b>>8 < 0x10
	})
	if n := changed(blank, red); n < 1280*720/2 {
		t.Fatalf("a fullscreen red window changed %d pixels of the frame", n)
	}
}

// TestTypeIntoGTKEntry types into a GTK entry (zenity, a native Wayland
// client of mutter) through the remote-desktop session: zenity prints
// what its entry holds when Return closes it.
func TestTypeIntoGTKEntry(t *testing.T) {
	h, s := startSession(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	blank, err := Grab(ctx, h.PipeWireSocket(), s.Node())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd, done := client(t, h, &out, "zenity", "--entry", "--title", "portal-typing", "--text", "Name")
	// The dialog is drawn (and mutter has focused it) before the keys go.
	waitFrame(t, ctx, h, s, "zenity's dialog", func(img image.Image) bool { return changed(blank, img) > 2000 })
	want := "Hello, World 42! ~[x]"
	if err := s.Type(ctx, want+"Q"); err != nil {
		t.Fatal(err)
	}
	if err := s.Key(ctx, "BackSpace Home shift+End ctrl+x ctrl+v ctrl+v Return"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatalf("zenity did not exit; mutter's log:\n%s", h.Log("mutter"))
	}
	// BackSpace removed the Q; Home, shift+End selected the rest, ctrl+x
	// cut it and ctrl+v pasted it twice.
	if got := strings.TrimSpace(out.String()); got != want+want {
		t.Fatalf("zenity printed %q, want %q; its stderr: %s", got, want+want, cmd.Stderr)
	}
}

// TestPointerAtMonitorPixels clicks and scrolls in foot, fullscreen with
// xterm's SGR mouse reporting on, and checks foot's own reports: the
// buttons, and cells that scale with the pixel positions given.
func TestPointerAtMonitorPixels(t *testing.T) {
	h, s := startSession(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out := filepath.Join(t.TempDir(), "reports")
	if err := os.WriteFile(out, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(out), 0o777); err != nil {
		t.Fatal(err)
	}
	// The red block shows once mouse reporting is on.
	script := fmt.Sprintf(`stty raw -echo; printf '\033[?1000h\033[?1006h\033[41m%%10s\033[0m' ''; exec cat > %s`, out)
	need(t, "foot")
	client(t, h, nil, "foot", "--fullscreen", "--override=colors.background=00ff00", "--override=colors.regular1=ff0000", "--override=scrollback.multiplier=1", "sh", "-c", script)
	waitFrame(t, ctx, h, s, "foot's red block on green", func(img image.Image) bool {
		r, g, b, _ := img.At(640, 360).RGBA()
		r0, g0, b0, _ := img.At(4, 4).RGBA()
		return r>>8 < 0x10 && g>>8 > 0xf0 && b>>8 < 0x10 && r0>>8 > 0xc0 && g0>>8 < 0x40 && b0>>8 < 0x40
	})
	steps := []struct {
		x, y   float64
		button int // 0: one wheel step down
	}{{2, 2, 1}, {1240, 690, 3}, {640, 360, 2}, {640, 360, 0}}
	for _, st := range steps {
		var err error
		if st.button == 0 {
			if err = s.Move(ctx, st.x, st.y); err == nil {
				err = s.Scroll(ctx, 0, 1)
			}
		} else {
			err = s.Click(ctx, st.x, st.y, st.button)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	re := regexp.MustCompile(`\x1b\[<(\d+);(\d+);(\d+)([Mm])`)
	var got [][]string
	for ctx.Err() == nil {
		b, _ := os.ReadFile(out)
		if got = re.FindAllStringSubmatch(string(b), -1); len(got) >= 7 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(got) != 7 {
		t.Fatalf("foot reported %d mouse events, want 7 (3 presses, 3 releases, a wheel step): %q", len(got), got)
	}
	num := func(s string) int { n, _ := strconv.Atoi(s); return n }
	// SGR codes: 0 left, 2 right, 1 middle, 65 wheel down; M press, m release.
	wantCodes := []string{"0M", "0m", "2M", "2m", "1M", "1m", "65M"}
	for i, g := range got {
		if g[1]+g[4] != wantCodes[i] {
			t.Fatalf("report %d is %q, want button code and kind %s; all: %q", i, g[0], wantCodes[i], got)
		}
	}
	if got[0][2] != "1" || got[0][3] != "1" {
		t.Fatalf("a click at pixel 2,2 reported cell %s,%s, want 1,1", got[0][2], got[0][3])
	}
	// foot's cells start at pixel 0 (no padding) and are w wide: a click
	// at x is in column floor(x/w)+1. The column reported at x=1240
	// bounds w, and so the column x=640 must be in; the same for rows.
	inCell := func(what string, far, farAt, mid, midAt int) {
		t.Helper()
		if far < 10 {
			t.Fatalf("a click at %s=%d reported %d: foot's grid is not the whole monitor", what, farAt, far)
		}
		wMin, wMax := float64(farAt)/float64(far), float64(farAt)/float64(far-1)
		lo, hi := int(float64(midAt)/wMax)+1, int(float64(midAt)/wMin)+1
		if mid < lo || mid > hi {
			t.Fatalf("a click at %s=%d reported %d, want %d-%d (at %s=%d it reported %d)", what, midAt, mid, lo, hi, what, farAt, far)
		}
	}
	inCell("x", num(got[2][2]), 1240, num(got[4][2]), 640)
	inCell("y", num(got[2][3]), 690, num(got[4][3]), 360)
	if got[6][2] != got[4][2] || got[6][3] != got[4][3] {
		t.Fatalf("the wheel step at 640,360 reported cell %s,%s, the click there %s,%s", got[6][2], got[6][3], got[4][2], got[4][3])
	}
}

// TestOpenRefusesABusWithoutMutter names what is missing when the bus
// has no mutter (a KDE or wlroots session, or a plain bus).
func TestOpenRefusesABusWithoutMutter(t *testing.T) {
	need(t, "dbus-daemon")
	dir := t.TempDir()
	cmd := exec.Command("dbus-daemon", "--session", "--address=unix:path="+filepath.Join(dir, "bus"), "--nofork", "--nopidfile")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for i := 0; i < 500; i++ {
		if _, err := os.Stat(filepath.Join(dir, "bus")); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := Open(ctx, "unix:path="+filepath.Join(dir, "bus"), "")
	if err == nil || !strings.Contains(err.Error(), "not GNOME's mutter") || !strings.Contains(err.Error(), "GNOME and KDE") {
		t.Fatalf("Open on a bus without mutter: %v, want an error saying mutter is not there and naming the docs", err)
	}
}

// TestHeadlessStopLeavesNothing: Stop ends every process of the session
// and removes its runtime directory.
func TestHeadlessStopLeavesNothing(t *testing.T) {
	need(t, "mutter", "pipewire", "wireplumber", "dbus-daemon")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h, err := StartHeadless(ctx, Options{Width: 640, Height: 480})
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, p := range h.procs {
		pids = append(pids, p.cmd.Process.Pid)
	}
	if len(pids) != 4 {
		t.Fatalf("the session has %d processes, want 4 (bus, pipewire, wireplumber, mutter)", len(pids))
	}
	h.Stop()
	for _, pid := range pids {
		// Reaped by Stop: no such process, not even a zombie.
		if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
			t.Errorf("process %d still exists after Stop: %v", pid, err)
		}
	}
	if _, err := os.Stat(h.RuntimeDir()); !os.IsNotExist(err) {
		t.Errorf("runtime dir %s left after Stop: %v", h.RuntimeDir(), err)
	}
}
