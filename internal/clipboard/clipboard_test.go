package clipboard_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/clipboard"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/leakcheck"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

func TestMain(m *testing.M) { leakcheck.Main(m, "acu/internal/clipboard") }

func open(t *testing.T) (string, *clipboard.Clipboard) {
	t.Helper()
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 320, Height: 240})
	c, err := display.Open(t.Context(), dpy, display.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cb, err := clipboard.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cb.Close)
	return dpy, cb
}

// xclip runs the independent X client; missing xclip fails (install it
// with scripts/install-deps.sh).
func xclip(t *testing.T, dpy string, stdin []byte, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "xclip", args...)
	cmd.Env = append(os.Environ(), "DISPLAY="+dpy)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("xclip %v: %v: %s", args, err, stderr.String())
	}
	return out
}

// serve starts xclip as the selection's owner until it has served one
// request or the test ends.
func serve(t *testing.T, dpy string, data []byte, args ...string) {
	t.Helper()
	cmd := exec.Command("xclip", append([]string{"-quiet", "-loops", "1", "-i"}, args...)...)
	cmd.Env = append(os.Environ(), "DISPLAY="+dpy)
	cmd.Stdin = bytes.NewReader(data)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start xclip: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
}

// get retries while the selection is still empty: xclip takes it
// asynchronously.
func get(t *testing.T, cb *clipboard.Clipboard, sel, mime string) clipboard.Content {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for {
		c, err := cb.Get(ctx, sel, mime)
		if err == nil {
			return c
		}
		if !errors.Is(err, clipboard.ErrEmpty) || ctx.Err() != nil {
			t.Fatalf("Get(%s, %s) = %v", sel, mime, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), uint8(x ^ y), 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const text = "héllo, wörld ✓ 世界 🙂\nline two"

func TestSetReadByXclip(t *testing.T) {
	dpy, cb := open(t)
	for _, sel := range []string{"clipboard", "primary"} {
		t.Run(sel, func(t *testing.T) {
			if err := cb.Set(t.Context(), sel, clipboard.Content{MIME: clipboard.Text, Data: []byte(text)}); err != nil {
				t.Fatal(err)
			}
			if got := string(xclip(t, dpy, nil, "-o", "-selection", sel)); got != text {
				t.Errorf("xclip -o = %q, want %q", got, text)
			}
			if got := string(xclip(t, dpy, nil, "-o", "-selection", sel, "-t", "TARGETS")); !strings.Contains(got, "UTF8_STRING") {
				t.Errorf("TARGETS = %q, want UTF8_STRING among them", got)
			}
			// STRING is Latin-1, what it cannot hold becomes "?": xclip
			// prints the bytes as they came.
			want := toLatin1Bytes("héllo, wörld ? ?? ?\nline two")
			if got := xclip(t, dpy, nil, "-o", "-selection", sel, "-t", "STRING"); !bytes.Equal(got, want) {
				t.Errorf("xclip -t STRING = %q, want %q", got, want)
			}
		})
	}
	t.Run("png", func(t *testing.T) {
		img := pngBytes(t, 64, 48)
		if err := cb.Set(t.Context(), "clipboard", clipboard.Content{MIME: clipboard.PNG, Data: img}); err != nil {
			t.Fatal(err)
		}
		if got := xclip(t, dpy, nil, "-o", "-selection", "clipboard", "-t", "image/png"); !bytes.Equal(got, img) {
			t.Errorf("xclip -t image/png gave %d bytes, want the %d set", len(got), len(img))
		}
	})
	t.Run("incr", func(t *testing.T) {
		// Larger than one request: acu sends it by INCR.
		big := bytes.Repeat([]byte("acu ✓ INCR piece "), 200_000) // 4 MB
		if err := cb.Set(t.Context(), "clipboard", clipboard.Content{MIME: clipboard.Text, Data: big}); err != nil {
			t.Fatal(err)
		}
		for i := range 2 { // twice: a finished transfer leaves nothing behind
			if got := xclip(t, dpy, nil, "-o", "-selection", "clipboard"); !bytes.Equal(got, big) {
				t.Errorf("xclip -o (round %d) = %d bytes, want the %d set", i, len(got), len(big))
			}
		}
	})
	t.Run("too large", func(t *testing.T) {
		err := cb.Set(t.Context(), "clipboard", clipboard.Content{MIME: clipboard.PNG, Data: make([]byte, cb.MaxSize()+1)})
		if !errors.Is(err, clipboard.ErrTooLarge) {
			t.Errorf("Set(too large) = %v, want ErrTooLarge", err)
		}
	})
}

func toLatin1Bytes(s string) []byte {
	var out []byte
	for _, r := range s {
		out = append(out, byte(r))
	}
	return out
}

func TestGetFromXclip(t *testing.T) {
	dpy, cb := open(t)
	t.Run("text", func(t *testing.T) {
		if err := cb.Set(t.Context(), "clipboard", clipboard.Content{MIME: clipboard.Text, Data: []byte("acu's own")}); err != nil {
			t.Fatal(err)
		}
		if got := get(t, cb, "clipboard", clipboard.Text); string(got.Data) != "acu's own" {
			t.Errorf("Get while acu owns = %q", got.Data)
		}
		// xclip takes the selection over; acu reads it from xclip.
		serve(t, dpy, []byte(text), "-selection", "clipboard")
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		for {
			c, err := cb.Get(ctx, "clipboard", clipboard.Text)
			if err == nil && string(c.Data) == text {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("Get after xclip took the clipboard = %q, %v; want %q", c.Data, err, text)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	t.Run("primary png", func(t *testing.T) {
		img := pngBytes(t, 32, 32)
		serve(t, dpy, img, "-selection", "primary", "-t", "image/png")
		if got := get(t, cb, "primary", clipboard.PNG); !bytes.Equal(got.Data, img) {
			t.Errorf("Get(primary, png) = %d bytes, want %d", len(got.Data), len(img))
		}
	})
	t.Run("incr", func(t *testing.T) {
		// xclip sends anything above a quarter of the extended request
		// size (1 MiB on Xvfb) by INCR.
		big := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB
		serve(t, dpy, big, "-selection", "clipboard")
		if got := get(t, cb, "clipboard", clipboard.Text); !bytes.Equal(got.Data, big) {
			t.Errorf("Get(4 MiB by INCR) = %d bytes, want %d", len(got.Data), len(big))
		}
	})
	t.Run("bad selection", func(t *testing.T) {
		if _, err := cb.Get(t.Context(), "secondary", clipboard.Text); err == nil {
			t.Error("Get(secondary) = nil error")
		}
	})
}
