package server

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// desktopFixture serves the desktop routes of a real gate.Gate on a
// fresh Xvfb running openbox.
func desktopFixture(t *testing.T, appDir string) (*api.Client, string) {
	t.Helper()
	cl, _, dpy := desktopServer(t, appDir)
	return cl, dpy
}

const readToken = "read-token-0123456789"

// desktopServer also returns a client whose token has only the read scope.
func desktopServer(t *testing.T, appDir string) (admin, read *api.Client, dpy string) {
	t.Helper()
	dpy = testx.StartXvfb(t, xvfb.Options{Width: 800, Height: 600})
	testx.StartWM(t, dpy)
	svc := gate.New(gate.Options{DefaultDisplay: dpy, AppDirs: []string{appDir}, Env: os.Environ()})
	t.Cleanup(svc.Close)
	s := New(Options{Token: testToken, MaxBody: 1 << 20, Version: "test", Desktop: svc,
		LookupToken: func(_ context.Context, secret string) (Principal, bool) {
			return Principal{ID: "reader", Scope: api.ScopeRead}, secret == readToken
		}})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return api.NewClient(srv.URL, testToken), api.NewClient(srv.URL, readToken), dpy
}

func TestDesktopReadScopeCannotAct(t *testing.T) {
	_, read, dpy := desktopServer(t, t.TempDir())
	ctx := t.Context()
	if _, err := read.Windows(ctx, dpy); err != nil {
		t.Errorf("Windows with a read token = %v", err)
	}
	if _, err := read.Pointer(ctx, dpy); err != nil {
		t.Errorf("Pointer with a read token = %v", err)
	}
	x := 1
	for name, call := range map[string]func() error{
		"window op": func() error {
			_, err := read.WindowOp(ctx, "0x1", api.WindowMove, api.WindowOp{X: &x, Y: &x})
			return err
		},
		"clipboard set": func() error { _, err := read.SetClipboard(ctx, api.Clipboard{Text: "x"}); return err },
		"clipboard get": func() error { _, err := read.GetClipboard(ctx, dpy, "", ""); return err },
		"launch":        func() error { _, err := read.Launch(ctx, api.LaunchRequest{Argv: []string{"true"}}); return err },
	} {
		var se *api.StatusError
		if err := call(); !errors.As(err, &se) || se.Status != http.StatusForbidden {
			t.Errorf("%s with a read token = %v, want 403", name, err)
		}
	}
}

func statusOf(t *testing.T, err error, status int, field string) {
	t.Helper()
	var se *api.StatusError
	if !errors.As(err, &se) || se.Status != status || se.Field != field {
		t.Errorf("error = %v, want %d naming field %q", err, status, field)
	}
}

func TestDesktopWindowsOverHTTP(t *testing.T) {
	cl, dpy := desktopFixture(t, t.TempDir())
	ctx := t.Context()
	xt := testx.StartXterm(t, dpy, testx.XtermSpec{Geometry: "40x10+10+10"})
	id := (&api.Window{}).ID
	l, err := cl.Windows(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range l.Windows {
		if w.Title == xt.Title {
			id = w.ID
		}
	}
	if id == "" || l.WM == "" {
		t.Fatalf("Windows() = %+v, want the xterm and openbox", l)
	}
	until := func(what string, ok func(api.Window) bool) {
		t.Helper()
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		for ctx.Err() == nil {
			l, err := cl.Windows(ctx, dpy)
			if err == nil {
				for _, w := range l.Windows {
					if w.ID == id && ok(w) {
						return
					}
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("window %s never %s", id, what)
	}
	x, y := 150, 120
	if res, err := cl.WindowOp(ctx, id, api.WindowMove, api.WindowOp{X: &x, Y: &y}); err != nil || res.Method != "_NET_MOVERESIZE_WINDOW" {
		t.Fatalf("move = %+v, %v", res, err)
	}
	until("moved", func(w api.Window) bool { return w.X == 150 && w.Y == 120 })
	if _, err := cl.WindowOp(ctx, id, api.WindowFocus, api.WindowOp{}); err != nil {
		t.Fatal(err)
	}
	until("focused", func(w api.Window) bool { return w.Focused })
	if _, err := cl.WindowOp(ctx, id, api.WindowMaximize, api.WindowOp{}); err != nil {
		t.Fatal(err)
	}
	until("maximized", func(w api.Window) bool { return w.Maximized })
	if _, err := cl.WindowOp(ctx, id, api.WindowMinimize, api.WindowOp{}); err != nil {
		t.Fatal(err)
	}
	until("minimized", func(w api.Window) bool { return w.Minimized })

	t.Run("bad input", func(t *testing.T) {
		_, err := cl.WindowOp(ctx, id, "explode", api.WindowOp{})
		statusOf(t, err, 400, "op")
		_, err = cl.WindowOp(ctx, id, api.WindowMove, api.WindowOp{X: &x})
		statusOf(t, err, 400, "y")
		_, err = cl.WindowOp(ctx, id, api.WindowFocus, api.WindowOp{X: &x})
		statusOf(t, err, 400, "x")
		_, err = cl.WindowOp(ctx, "0x7fffff0", api.WindowFocus, api.WindowOp{})
		statusOf(t, err, 404, "id")
		_, err = cl.WindowOp(ctx, "banana", api.WindowFocus, api.WindowOp{})
		statusOf(t, err, 400, "id")
		_, err = cl.Windows(ctx, "not a display")
		statusOf(t, err, 400, "display")
	})

	if _, err := cl.WindowOp(ctx, id, api.WindowClose, api.WindowOp{}); err != nil {
		t.Fatal(err)
	}
	_, err = cl.WindowOp(ctx, id, api.WindowFocus, api.WindowOp{})
	for ctx.Err() == nil && err == nil {
		time.Sleep(20 * time.Millisecond)
		_, err = cl.WindowOp(ctx, id, api.WindowFocus, api.WindowOp{})
	}
	statusOf(t, err, 404, "id") // closed: gone

	p, err := cl.Pointer(ctx, dpy)
	if err != nil || p.NX < 0 || p.NX > 1000 || p.Buttons == nil {
		t.Errorf("Pointer() = %+v, %v", p, err)
	}
}

func xclip(t *testing.T, dpy string, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "xclip", args...)
	cmd.Env = append(os.Environ(), "DISPLAY="+dpy)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("xclip %v: %v", args, err)
	}
	return out
}

func TestDesktopClipboardOverHTTP(t *testing.T) {
	cl, dpy := desktopFixture(t, t.TempDir())
	ctx := t.Context()
	const text = "grüße ✓ 日本"
	if _, err := cl.SetClipboard(ctx, api.Clipboard{Text: text}); err != nil {
		t.Fatal(err)
	}
	if got := string(xclip(t, dpy, "-o", "-selection", "clipboard")); got != text {
		t.Errorf("xclip read %q, want %q", got, text)
	}
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewGray(image.Rect(0, 0, 8, 8))); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.SetClipboard(ctx, api.Clipboard{Selection: "primary", ImagePNG: img.Bytes()}); err != nil {
		t.Fatal(err)
	}
	if got := xclip(t, dpy, "-o", "-selection", "primary", "-t", "image/png"); !bytes.Equal(got, img.Bytes()) {
		t.Errorf("xclip read %d bytes of PNG, want %d", len(got), len(img.Bytes()))
	}
	got, err := cl.GetClipboard(ctx, "", "primary", api.ClipPNG)
	if err != nil || !bytes.Equal(got.ImagePNG, img.Bytes()) {
		t.Errorf("GetClipboard(primary, png) = %d bytes, %v", len(got.ImagePNG), err)
	}
	// A second client owns the clipboard; acu reads it.
	in := exec.Command("xclip", "-quiet", "-loops", "1", "-i", "-selection", "clipboard")
	in.Env = append(os.Environ(), "DISPLAY="+dpy)
	in.Stdin = bytes.NewReader([]byte("from xclip ✓"))
	if err := in.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Process.Kill(); _ = in.Wait() })
	deadline, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for {
		c, err := cl.GetClipboard(deadline, dpy, "", "")
		if err == nil && c.Text == "from xclip ✓" {
			break
		}
		if deadline.Err() != nil {
			t.Fatalf("GetClipboard after xclip = %+v, %v", c, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, err = cl.GetClipboard(ctx, dpy, "secondary", "")
	statusOf(t, err, 400, "selection")
	_, err = cl.SetClipboard(ctx, api.Clipboard{ImagePNG: []byte("not a png")})
	statusOf(t, err, 400, "image_png")
}

func TestDesktopLaunchOverHTTP(t *testing.T) {
	apps := t.TempDir()
	writeFile(t, filepath.Join(apps, "acu-test-term.desktop"),
		"[Desktop Entry]\nType=Application\nName=ACU Test Terminal\nExec=xterm -T \"acu launched entry\" %U\n")
	writeFile(t, filepath.Join(apps, "needs-term.desktop"), "[Desktop Entry]\nType=Application\nName=Top\nExec=top\nTerminal=true\n")
	cl, dpy := desktopFixture(t, apps)
	ctx := t.Context()
	kill := func(pid int) { t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) }) }

	for _, tt := range []struct {
		name  string
		req   api.LaunchRequest
		title string
	}{
		{"entry by name", api.LaunchRequest{DesktopEntry: "ACU Test Terminal", WaitWindow: true, Timeout: 30}, "acu launched entry"},
		{"argv", api.LaunchRequest{Display: dpy, Argv: []string{"xterm", "-T", "acu launched argv"}, WaitWindow: true, Timeout: 30}, "acu launched argv"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := cl.Launch(ctx, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			kill(res.PID)
			if res.Window == nil || res.Window.Title != tt.title || res.Window.PID != res.PID {
				t.Fatalf("Launch() = %+v, want window %q of pid %d", res, tt.title, res.PID)
			}
			// Detached: its own process group.
			if pgid, err := syscall.Getpgid(res.PID); err != nil || pgid != res.PID {
				t.Errorf("process group of %d = %d, %v; want its own", res.PID, pgid, err)
			}
		})
	}
	_, err := cl.Launch(ctx, api.LaunchRequest{DesktopEntry: "needs-term"})
	statusOf(t, err, 400, "desktop_entry")
	_, err = cl.Launch(ctx, api.LaunchRequest{DesktopEntry: "nothing-like-this"})
	statusOf(t, err, 404, "desktop_entry")
	_, err = cl.Launch(ctx, api.LaunchRequest{})
	statusOf(t, err, 400, "desktop_entry")
	_, err = cl.Launch(ctx, api.LaunchRequest{Argv: []string{"no-such-program-acu"}})
	statusOf(t, err, 400, "argv")
}

func writeFile(t *testing.T, p, body string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
