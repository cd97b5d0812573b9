package main

import (
	"context"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/wayland"
	"github.com/acu-dev/acu/internal/wayland/sway"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// TestDisplayStartWayland runs `acu display start --wayland`, connects to
// the printed WAYLAND_DISPLAY, and lists and stops the compositor with the
// CLI.
func TestDisplayStartWayland(t *testing.T) {
	waylandtest.Need(t, "sway")
	env, _, _ := newEnv(t, ":0")
	out, errOut, code := acu(t, env, "display", "start", "--wayland", "--size", "320x200")
	if code != 0 {
		t.Fatalf("acu display start --wayland: exit %d: %s", code, errOut)
	}
	vars := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		k, v, _ := strings.Cut(line, "=")
		vars[k] = v
	}
	sock := vars["WAYLAND_DISPLAY"]
	if sock == "" || vars["XDG_RUNTIME_DIR"] == "" {
		t.Fatalf("stdout = %q, want WAYLAND_DISPLAY= and XDG_RUNTIME_DIR= lines", out)
	}
	t.Cleanup(func() { // after a failure: the test's context is over by now
		stop := exec.Command(acuBin, "display", "stop", sock)
		stop.Env = env
		_ = stop.Run()
	})

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	c, err := wayland.Dial(ctx, sock)
	if err != nil {
		t.Fatalf("dial the printed WAYLAND_DISPLAY: %v", err)
	}
	outs, err := wayland.BindOutputs(ctx, c)
	c.Close()
	if err != nil || len(outs) != 1 || outs[0].Width != 320 || outs[0].Height != 200 {
		t.Fatalf("outputs = %v, %v; want one of 320x200", outs, err)
	}

	list, _, _ := acu(t, env, "display", "list")
	if !strings.Contains(list, sock) || !strings.Contains(list, "320x200") {
		t.Errorf("display list = %q, want a row for %s at 320x200", list, sock)
	}
	if _, errOut, code := acu(t, env, "display", "stop", sock); code != 0 {
		t.Fatalf("acu display stop %s: exit %d: %s", sock, code, errOut)
	}
	if list, _, _ := acu(t, env, "display", "list"); strings.Contains(list, sock) {
		t.Errorf("display list after stop = %q, still lists %s", list, sock)
	}
	if _, err := os.Stat(vars["XDG_RUNTIME_DIR"]); !os.IsNotExist(err) {
		t.Errorf("runtime dir %s left after stop: %v", vars["XDG_RUNTIME_DIR"], err)
	}
	if _, errOut, code := acu(t, env, "display", "start", "--wayland", "--wm"); code == 0 || !strings.Contains(errOut, "--wm") {
		t.Errorf("display start --wayland --wm: exit %d, stderr %q; want a refusal naming --wm", code, errOut)
	}
}

// TestDoctorReportsWaylandSupport runs `acu doctor` with WAYLAND_DISPLAY
// naming a real headless sway: it lists the protocol acu uses for each
// feature, and says that the daemon does not drive Wayland yet.
func TestDoctorReportsWaylandSupport(t *testing.T) {
	c := waylandtest.Start(t, 200, 100)
	env, _, _ := newEnv(t, ":0")
	env = append(env, c.Env()...)
	out, errOut, _ := acu(t, env, "doctor")
	for _, want := range []string{
		"ok   wayland    " + c.Socket() + ": capture: zwlr_screencopy_manager_v1 v3; pointer: zwlr_virtual_pointer_manager_v1 v2; keyboard: zwp_virtual_keyboard_manager_v1 v1; windows: zwlr_foreign_toplevel_manager_v1 v3; clipboard: zwlr_data_control_manager_v1 v2",
		"warn wayland    the daemon does not drive Wayland displays yet",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("acu doctor has no line %q:\n%s\n%s", want, out, errOut)
		}
	}
}

// TestScreenshotWayland runs `acu screenshot` on a real headless sway: a
// window target gives a PNG of the window's size, and ACU_EXCLUDE_WINDOWS
// blacks the window out of a screen capture.
func TestScreenshotWayland(t *testing.T) {
	c := waylandtest.Start(t, 400, 300)
	waylandtest.Client(t, c, "foot", "--title=SHOTME", "--override=colors.background=ff0000", "sh", "-c", "exec sleep 600")
	env, dir, _ := newEnv(t, ":0")
	env = append(env, c.Env()...)
	var rect image.Rectangle
	deadline := time.Now().Add(30 * time.Second)
	for rect.Empty() {
		if nodes, err := sway.Windows(t.Context(), c.IPCSocket()); err == nil && len(nodes) == 1 {
			rect = nodes[0].Rect
		}
		if time.Now().After(deadline) {
			t.Fatalf("foot's window never showed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	out := filepath.Join(dir, "win.png")
	if _, errOut, code := acu(t, env, "screenshot", "--display", c.Socket(), "--target", "window:shotme", "-o", out); code != 0 {
		t.Fatalf("acu screenshot window:shotme: exit %d: %s", code, errOut)
	}
	if m := decodePNG(t, out); m.Bounds().Dx() != rect.Dx() || m.Bounds().Dy() != rect.Dy() {
		t.Errorf("window PNG is %v, want the window's %dx%d", m.Bounds(), rect.Dx(), rect.Dy())
	}
	// The window's background is red; excluded, the window is black.
	screen := filepath.Join(dir, "screen.png")
	env = append(env, "ACU_EXCLUDE_WINDOWS=shotme")
	if _, errOut, code := acu(t, env, "screenshot", "--display", c.Socket(), "-o", screen); code != 0 {
		t.Fatalf("acu screenshot: exit %d: %s", code, errOut)
	}
	m := decodePNG(t, screen)
	for y := rect.Min.Y; y < rect.Max.Y; y += 7 {
		for x := rect.Min.X; x < rect.Max.X; x += 7 {
			if r, g, b, _ := m.At(x, y).RGBA(); r|g|b != 0 {
				t.Fatalf("pixel (%d,%d) of the excluded window is not black", x, y)
			}
		}
	}
}

func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return m
}

// TestWaitResolvesOnWaylandWindow runs a smart wait with the OCR judge
// through the real daemon on a native Wayland window: foot shows the text
// only after the wait has started, and the wait resolves on it.
func TestWaitResolvesOnWaylandWindow(t *testing.T) {
	c := waylandtest.Start(t, 800, 500)
	flag := filepath.Join(t.TempDir(), "done")
	waylandtest.Client(t, c, "foot", "--title=builder", "--font=monospace:size=18",
		"--override=colors.background=ffffff", "--override=colors.foreground=000000",
		"sh", "-c", `echo building; while [ ! -e `+flag+` ]; do sleep 0.05; done; echo "Build finished"; exec sleep 600`)
	env, dataDir, port := newEnv(t, ":0")
	startDaemon(t, env, dataDir, port)

	type result struct {
		out, errOut string
		code        int
	}
	done := make(chan result, 1)
	go func() {
		out, errOut, code := acu(t, env, "wait", `"Build finished" is visible`, "--display", c.Socket(),
			"--target", "window:builder", "--timeout", "90", "--json")
		done <- result{out, errOut, code}
	}()
	// The wait is running (and has judged the window without the text)
	// before the app shows it.
	eventually(t, 60*time.Second, "the wait to start", func() bool {
		out, _, _ := acu(t, env, "waits", "--json")
		return strings.Contains(out, "Build finished")
	})
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(3 * time.Minute):
		t.Fatalf("acu wait did not return")
	}
	if r.code != 0 {
		t.Fatalf("acu wait: exit %d\nstdout: %s\nstderr: %s", r.code, r.out, r.errOut)
	}
	var w api.Wait
	if err := json.Unmarshal([]byte(r.out), &w); err != nil {
		t.Fatalf("acu wait --json printed %q: %v", r.out, err)
	}
	t.Logf("wait: %s %q screenshot %s", w.State, w.Message, w.Screenshot)
	if w.State != "resolved" || !strings.Contains(w.Message, "Build finished") {
		t.Fatalf("wait = %s %q, want resolved", w.State, w.Message)
	}
	// The screenshot the wait saved is of the Wayland window.
	if m := decodePNG(t, w.Screenshot); m.Bounds().Dx() < 100 || m.Bounds().Dx() > 800 {
		t.Errorf("the wait's screenshot is %v, want the foot window's", m.Bounds())
	}
}
