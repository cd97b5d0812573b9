package main

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/wayland/portal"
)

// needMutter skips the test when the headless GNOME session (or another
// program named) is not installed, or fails it with ACU_REQUIRE_PORTAL=1
// (scripts/test.sh).
func needMutter(t *testing.T, programs ...string) {
	t.Helper()
	for _, p := range append([]string{"mutter", "pipewire", "wireplumber", "dbus-daemon", "gst-launch-1.0"}, programs...) {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("ACU_REQUIRE_PORTAL") == "1" {
				t.Fatalf("%s is not installed, and ACU_REQUIRE_PORTAL=1 requires it (scripts/install-deps.sh): %v", p, err)
			}
			t.Skipf("%s is not installed (scripts/install-deps.sh installs the headless GNOME session): %v", p, err)
		}
	}
}

// startGnome starts a headless mutter and returns it with the env of acu
// processes that drive it (its session bus as DBUS_SESSION_BUS_ADDRESS).
func startGnome(t *testing.T, w, h int, programs ...string) (*portal.Headless, []string, string, int) {
	t.Helper()
	needMutter(t, programs...)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	g, err := portal.StartHeadless(ctx, portal.Options{Width: w, Height: h})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Stop)
	env, dataDir, port := newEnv(t, ":0")
	// acu cannot see GNOME's windows, so with a deny-list (the default
	// lists password managers) it refuses input there: the test's user
	// clears it, as docs/wayland.md says to.
	env = append(env, "DBUS_SESSION_BUS_ADDRESS="+g.BusAddress(), "ACU_ACT_DENY=")
	return g, env, dataDir, port
}

// gnomeClient starts a native Wayland program on the GNOME session; its
// stdout goes to out.
func gnomeClient(t *testing.T, g *portal.Headless, out *syncBuffer, name string, args ...string) chan struct{} {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8", "GDK_BACKEND=wayland", "NO_AT_BRIDGE=1"}, g.Env()...)
	if out != nil {
		cmd.Stdout = out
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	return done
}

// lightBox is the bounds of the light pixels (a GTK dialog on mutter's
// dark desktop), the pointer's few pixels aside.
func lightBox(m image.Image) image.Rectangle {
	var box image.Rectangle
	b := m.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		n, x0, x1 := 0, 0, 0
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl, _ := m.At(x, y).RGBA(); r>>8 > 0xc0 && g>>8 > 0xc0 && bl>>8 > 0xc0 {
				if n == 0 {
					x0 = x
				}
				n, x1 = n+1, x+1
			}
		}
		if n > 40 { // a row of the dialog, not of the pointer
			box = box.Union(image.Rect(x0, y, x1, y+1))
		}
	}
	return box
}

// TestGnomeActionsFillZenity runs the real daemon with a headless
// mutter (GNOME) as the display: `acu screenshot --display` shows
// zenity's dialog; acu's clipboard (PUT /v1/clipboard) is what ctrl+v
// pastes into its entry and what zenity copies is what GET /v1/clipboard
// reads; POST /v1/actions clicks, types (characters outside the keyboard
// layout pasted) and clicks OK through mutter's remote desktop, answering
// with a screenshot of the monitor; zenity prints what was typed.
func TestGnomeActionsFillZenity(t *testing.T) {
	g, env, dataDir, port := startGnome(t, 1024, 600, "zenity")
	sock := g.Socket()
	var out syncBuffer
	done := gnomeClient(t, g, &out, "zenity", "--entry", "--title=acu-gnome", "--text=Name")
	shot := filepath.Join(t.TempDir(), "shot.png")
	var box image.Rectangle
	eventually(t, 60*time.Second, "zenity's dialog in acu screenshot", func() bool {
		_, errOut, code := acu(t, env, "screenshot", "--display", sock, "-o", shot)
		if code != 0 {
			t.Fatalf("acu screenshot --display %s: exit %d: %s", sock, code, errOut)
		}
		m := decodePNG(t, shot)
		if m.Bounds() != image.Rect(0, 0, 1024, 600) {
			t.Fatalf("acu screenshot is %v, want the 1024x600 monitor", m.Bounds())
		}
		box = lightBox(m)
		return box.Dx() > 150 && box.Dy() > 100
	})
	d := startDaemon(t, env, dataDir, port)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	// zenity's entry dialog: the entry across the middle, OK at the bottom right.
	entry := api.Pt(box.Min.X+box.Dx()/2, box.Min.Y+box.Dy()*55/100)
	ok := api.Pt(box.Max.X-45, box.Max.Y-25)
	// The clipboard through mutter's remote desktop: acu's text is what
	// ctrl+v pastes into the entry.
	if _, err := d.client.SetClipboard(ctx, api.Clipboard{Display: sock, Text: "Lovelace ✓"}); err != nil {
		t.Fatalf("PUT /v1/clipboard: %v", err)
	}
	if got, err := d.client.GetClipboard(ctx, sock, "", ""); err != nil || got.Text != "Lovelace ✓" {
		t.Fatalf("GET /v1/clipboard = %+v, %v", got, err)
	}
	// GTK pastes asynchronously: the keys typed next wait for a second
	// request (typed text outside the layout waits for its own pastes).
	if resp, err := d.client.Act(ctx, api.ActRequest{Display: sock, Image: "1024x600", Actions: []api.Action{
		{Kind: api.ActClick, At: entry},
		{Kind: api.ActType, Text: "Ada "},
		{Kind: api.ActKey, Keys: "ctrl+v"},
	}}); err != nil || !resp.OK {
		t.Fatalf("POST /v1/actions = %+v, %v", resp, err)
	}
	want := "Ada Lovelace ✓ 1815 Zürich — ×"
	eventually(t, 30*time.Second, "the paste in zenity's entry", func() bool {
		// ctrl+a ctrl+c copies the entry as GTK does; acu reads it back.
		if _, err := d.client.Act(ctx, api.ActRequest{Display: sock, Actions: []api.Action{{Kind: api.ActKey, Keys: "ctrl+a ctrl+c End"}}}); err != nil {
			t.Fatalf("POST /v1/actions (copy): %v", err)
		}
		got, err := d.client.GetClipboard(ctx, sock, "", "")
		return err == nil && got.Text == "Ada Lovelace ✓"
	})
	resp, err := d.client.Act(ctx, api.ActRequest{Display: sock, Image: "1024x600", Actions: []api.Action{
		{Kind: api.ActType, Text: " 1815 Zürich — ×X"},
		{Kind: api.ActKey, Keys: "BackSpace ctrl+a ctrl+c"},
		{Kind: api.ActClick, At: ok},
	}, Screenshot: &api.ShotOptions{Format: "png"}})
	if err != nil || !resp.OK {
		t.Fatalf("POST /v1/actions = %+v, %v", resp, err)
	}
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatalf("zenity did not exit; daemon log:\n%s", d.log.String())
	}
	if got := strings.TrimSpace(out.String()); got != want {
		t.Errorf("zenity printed %q, want %q", got, want)
	}
	// What zenity copied before OK is what acu reads.
	eventually(t, 30*time.Second, "zenity's copy on the clipboard", func() bool {
		got, err := d.client.GetClipboard(ctx, sock, "", "")
		return err == nil && got.Text == want
	})
	if s := resp.Screenshot; s == nil || s.Width != 1024 || s.Height != 600 || s.Format != "png" {
		t.Errorf("the actions' screenshot = %+v, want a 1024x600 PNG of the monitor", s)
	} else if _, err := png.Decode(bytes.NewReader(s.Data)); err != nil {
		t.Errorf("screenshot PNG: %v", err)
	}
	if p, err := d.client.Pointer(ctx, sock); err != nil || p.X != *ok.X || p.Y != *ok.Y {
		t.Errorf("GET /v1/pointer = %+v, %v; want %d,%d where acu put it", p, err, *ok.X, *ok.Y)
	}
	// A control character is refused before anything is sent.
	_, err = d.client.Act(ctx, api.ActRequest{Display: sock, Actions: []api.Action{{Kind: api.ActType, Text: "a\x07"}}})
	var se *api.StatusError
	if !errors.As(err, &se) || se.Status != 400 || !strings.Contains(err.Error(), "control") {
		t.Errorf("POST /v1/actions typing a control character on GNOME: %v, want a 400 naming it", err)
	}
	if _, err := d.client.Windows(ctx, sock); err == nil || !strings.Contains(err.Error(), "not available on GNOME") {
		t.Errorf("GET /v1/windows on GNOME: %v, want an error saying window lists are not available on GNOME", err)
	}
}

// TestGnomeWaitResolves runs a smart wait with the OCR judge through the
// real daemon on a headless mutter: foot shows the text only after the
// wait has started, and the wait resolves on it from mutter's screen cast.
func TestGnomeWaitResolves(t *testing.T) {
	g, env, dataDir, port := startGnome(t, 800, 500, "foot")
	flag := filepath.Join(t.TempDir(), "done")
	if err := os.Chmod(filepath.Dir(flag), 0o777); err != nil {
		t.Fatal(err)
	}
	gnomeClient(t, g, nil, "foot", "--fullscreen", "--font=monospace:size=18",
		"--override=colors.background=ffffff", "--override=colors.foreground=000000",
		"sh", "-c", `echo building; while [ ! -e `+flag+` ]; do sleep 0.05; done; echo "Build finished"; exec sleep 600`)
	startDaemon(t, env, dataDir, port)
	w := waitForBuildFinished(t, env, flag, "--display", g.Socket())
	if m := decodePNG(t, w.Screenshot); m.Bounds() != image.Rect(0, 0, 800, 500) {
		t.Errorf("the wait's screenshot is %v, want mutter's 800x500 monitor", m.Bounds())
	}
}
