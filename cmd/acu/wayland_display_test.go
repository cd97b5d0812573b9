package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/wayland"
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
// feature, the protocol that shows the user's input, and which of the
// daemon's parts take the display.
func TestDoctorReportsWaylandSupport(t *testing.T) {
	c := waylandtest.Start(t, 200, 100)
	env, _, _ := newEnv(t, ":0")
	env = append(env, c.Env()...)
	out, errOut, _ := acu(t, env, "doctor")
	for _, want := range []string{
		"ok   wayland    " + c.Socket() + ": capture: zwlr_screencopy_manager_v1 v3; pointer: zwlr_virtual_pointer_manager_v1 v2; keyboard: zwp_virtual_keyboard_manager_v1 v1; windows: zwlr_foreign_toplevel_manager_v1 v3; clipboard: zwlr_data_control_manager_v1 v2",
		"warn wayland    give the daemon " + c.Socket() + ": smart waits, the live view, recordings, `acu screenshot`, actions by pixels, window operations, the pointer, the clipboard, launches, the agent loop, the computer-use dialects, the MCP tools, tasks and the live view's take-over take it (docs/wayland.md)",
		"ok   wayland    the user first: org_kde_kwin_idle v1 reports the seat's input (none while a window inhibits idle",
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
	rect := waylandtest.Window(t.Context(), t, c, "SHOTME", nil).Rect
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
	w := waitForBuildFinished(t, env, flag, "--display", c.Socket(), "--target", "window:builder")
	// The screenshot the wait saved is of the Wayland window.
	if m := decodePNG(t, w.Screenshot); m.Bounds().Dx() < 100 || m.Bounds().Dx() > 800 {
		t.Errorf("the wait's screenshot is %v, want the foot window's", m.Bounds())
	}
}

// TestLiveViewAndRecordingOnWayland: the daemon's live view streams a
// Wayland display's frames, and a recording of it decodes at its size.
func TestLiveViewAndRecordingOnWayland(t *testing.T) {
	c := waylandtest.Start(t, 400, 300)
	waylandtest.Client(t, c, "foot", "--override=colors.background=ff0000", "sh", "-c", "exec sleep 600")
	env, dataDir, port := newEnv(t, ":0")
	startDaemon(t, env, dataDir, port)
	cl := apiClient(t, dataDir, port)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	// The live view: the first frame event is the Wayland screen, and
	// once foot has drawn, a frame shows its red.
	req, err := http.NewRequestWithContext(ctx, "GET", cl.BaseURL()+"/v1/live/frames?display="+url.QueryEscape(c.Socket()), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tokenOf(t, dataDir))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /v1/live/frames: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET /v1/live/frames: %s: %s", resp.Status, b)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 8<<20)
	for red := false; !red; {
		if !sc.Scan() {
			t.Fatalf("the frame stream ended: %v", sc.Err())
		}
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var f api.LiveFrame
		if err := json.Unmarshal([]byte(data), &f); err != nil {
			t.Fatalf("frame event %q: %v", data, err)
		}
		if f.ScreenW != 400 || f.ScreenH != 300 {
			t.Fatalf("live frame of a %dx%d screen, want 400x300", f.ScreenW, f.ScreenH)
		}
		b, _ := base64.StdEncoding.DecodeString(f.JPEG)
		m, err := jpeg.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("live frame JPEG: %v", err)
		}
		r, g, bl, _ := m.At(m.Bounds().Dx()/2, m.Bounds().Dy()/2).RGBA()
		red = r>>8 > 200 && g>>8 < 60 && bl>>8 < 60
	}
	resp.Body.Close()

	// A recording of the display.
	rec, err := cl.StartRecording(ctx, api.StartRecording{Display: c.Socket(), Format: "webm"})
	if err != nil {
		t.Fatalf("StartRecording: %v", err)
	}
	time.Sleep(3 * time.Second)
	if _, err := cl.StopRecording(ctx, rec.ID); err != nil {
		t.Fatalf("StopRecording: %v", err)
	}
	file := filepath.Join(t.TempDir(), "rec.webm")
	if out, stderr, code := acu(t, env, "record", "get", rec.ID, "-o", file); code != 0 {
		t.Fatalf("acu record get: exit %d, %q, %s", code, out, stderr)
	}
	pr, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name,width,height",
		"-of", "csv=p=0", file).Output()
	if err != nil || strings.TrimSpace(string(pr)) != "vp8,400,300" {
		t.Fatalf("ffprobe of the recording: %q, %v; want vp8,400,300", pr, err)
	}

	// A relative name is refused with what to give instead.
	if _, err := cl.StartRecording(ctx, api.StartRecording{Display: "wayland-1"}); err == nil || !strings.Contains(err.Error(), "absolute path") {
		t.Errorf("StartRecording on wayland-1: %v, want a refusal asking for the absolute path", err)
	}
}
