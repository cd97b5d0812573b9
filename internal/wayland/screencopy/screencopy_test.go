package screencopy_test

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

	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/wayland/screencopy"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// footShowing starts foot on c, running script in sh, and waits until a
// Grab shows at least minRed red pixels (the script's marker).
func footShowing(t *testing.T, c waylandtest.Compositor, cap *screencopy.Capturer, script string, minRed int) *frame.Frame {
	t.Helper()
	waylandtest.Client(t, c, "foot", "--override=colors.regular1=ff0000", "--override=colors.background=000000",
		"sh", "-c", script)
	deadline := time.Now().Add(30 * time.Second)
	for {
		f, err := cap.Grab(t.Context())
		if err != nil {
			t.Fatalf("Grab: %v", err)
		}
		if n := redPixels(f, f.Bounds()); n >= minRed {
			return f
		}
		if time.Now().After(deadline) {
			t.Fatalf("foot's red marker never showed (%d red pixels, want >= %d)", redPixels(f, f.Bounds()), minRed)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// redPixels counts pure red pixels of f within r (BGRX).
func redPixels(f *frame.Frame, r image.Rectangle) int {
	n := 0
	r = r.Intersect(f.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			p := f.Pix[y*f.Stride+x*4:]
			if p[2] == 0xff && p[1] == 0 && p[0] == 0 {
				n++
			}
		}
	}
	return n
}

func open(t testing.TB, c waylandtest.Compositor) *screencopy.Capturer {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cap, err := screencopy.Open(ctx, c.Socket(), "", "")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { cap.Close() })
	return cap
}

// TestGrabMatchesGrim captures a native Wayland client (foot drawing a red
// block) and compares the frame, pixel for pixel, with grim's capture of
// the same static screen.
func TestGrabMatchesGrim(t *testing.T) {
	waylandtest.Need(t, "grim")
	grabMatchesGrim(t, waylandtest.Start(t, 480, 320), 480, 320)
}

func grabMatchesGrim(t *testing.T, c waylandtest.Compositor, w, h int) {
	cap := open(t, c)
	if cw, ch := cap.Size(); cw != w || ch != h {
		t.Fatalf("Size() = %dx%d, want %dx%d", cw, ch, w, h)
	}
	footShowing(t, c, cap, `printf '\033[41m%30s\033[0m\n' ''; exec sleep 600`, 500)

	png := filepath.Join(t.TempDir(), "grim.png")
	for try := 0; ; try++ {
		before, err := cap.Grab(t.Context())
		if err != nil {
			t.Fatalf("Grab: %v", err)
		}
		grim := exec.Command("grim", png)
		grim.Env = c.Env()
		if out, err := grim.CombinedOutput(); err != nil {
			t.Fatalf("grim: %v: %s", err, out)
		}
		after, err := cap.Grab(t.Context())
		if err != nil {
			t.Fatalf("Grab: %v", err)
		}
		if before.Hash != after.Hash { // the screen changed meanwhile (foot's first frames): again
			if try > 20 {
				t.Fatalf("the screen never held still for a capture")
			}
			continue
		}
		want := readPNG(t, png)
		if got := after.RGBA(); !bytes.Equal(got.Pix, want.Pix) || got.Rect != want.Rect {
			t.Fatalf("screencopy frame differs from grim's (%v vs %v, first differing byte %d)", got.Rect, want.Rect, firstDiff(got.Pix, want.Pix))
		}
		if after.W != w || after.H != h || after.Display != c.Socket() || after.Target != "screen" {
			t.Errorf("frame = %dx%d display %q target %q, want %dx%d on %q, target screen", after.W, after.H, after.Display, after.Target, w, h, c.Socket())
		}
		return
	}
}

func readPNG(t *testing.T, path string) *image.RGBA {
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
	b := m.Bounds()
	out := image.NewRGBA(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := m.At(x, y).RGBA()
			i := out.PixOffset(x, y)
			out.Pix[i], out.Pix[i+1], out.Pix[i+2], out.Pix[i+3] = byte(r>>8), byte(g>>8), byte(bl>>8), 0xff
		}
	}
	return out
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestNextWaitsForDamage checks copy_with_damage: on a static screen Next
// does not return, and when the client draws, Next returns the new frame
// with damage covering the change.
func TestNextWaitsForDamage(t *testing.T) {
	nextWaitsForDamage(t, waylandtest.Start(t, 480, 320))
}

func nextWaitsForDamage(t *testing.T, c waylandtest.Compositor) {
	cap := open(t, c)
	flag := filepath.Join(t.TempDir(), "draw")
	first := footShowing(t, c, cap, `printf '\033[41m%10s\033[0m\n' ''; while [ ! -e `+flag+` ]; do sleep 0.05; done; printf '\n\n\n\033[41m%40s\033[0m\n' ''; exec sleep 600`, 100)

	// Drain: Next returns at once until it has seen every change so far
	// (the first call returns the whole screen as damaged).
	var last *frame.Frame
	for i := 0; ; i++ {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		f, _, err := cap.Next(ctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		last = f
		if i > 50 {
			t.Fatalf("Next never waited: the screen keeps changing")
		}
	}
	if last == nil {
		t.Fatalf("the first Next waited: want it to return the screen at once")
	}
	if last.Hash != first.Hash {
		t.Fatalf("the static screen's frames differ: Grab %x, Next %x", first.Hash, last.Hash)
	}
	before := redPixels(last, last.Bounds())

	// A static screen: Next waits (the compositor sends nothing).
	ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
	_, _, err := cap.Next(ctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next on a static screen = %v, want it to wait until the deadline", err)
	}

	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// Every pixel that changed from the previous frame lies in the damage
	// the compositor sent with the new one.
	prev := last
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		f, damage, err := cap.Next(ctx)
		cancel()
		if err != nil {
			t.Fatalf("Next after the client drew: %v", err)
		}
		if len(damage) == 0 {
			t.Fatalf("Next returned a frame without damage")
		}
		for y := 0; y < f.H; y++ {
			for x := 0; x < f.W; x++ {
				o := y*f.Stride + x*4
				if bytes.Equal(f.Pix[o:o+3], prev.Pix[o:o+3]) {
					continue
				}
				in := false
				for _, r := range damage {
					in = in || image.Pt(x, y).In(r)
				}
				if !in {
					t.Fatalf("pixel (%d,%d) changed outside the damage %v", x, y, damage)
				}
			}
		}
		if redPixels(f, f.Bounds()) > before {
			return
		}
		prev = f
		if time.Now().After(deadline) {
			t.Fatalf("the new red block never showed")
		}
	}
}

// TestGrabRegionIsTheSubFrame captures a region of the screen and checks
// it equals the same rectangle of a full capture, pixel for pixel.
func TestGrabRegionIsTheSubFrame(t *testing.T) {
	c := waylandtest.Start(t, 480, 320)
	cap := open(t, c)
	footShowing(t, c, cap, `printf '\033[41m%30s\033[0m\n' ''; exec sleep 600`, 500)
	r := image.Rect(2, 20, 203, 61)
	for try := 0; ; try++ {
		full, err := cap.Grab(t.Context())
		if err != nil {
			t.Fatalf("Grab: %v", err)
		}
		part, err := cap.GrabRegion(t.Context(), r, "window:test")
		if err != nil {
			t.Fatalf("GrabRegion: %v", err)
		}
		again, err := cap.Grab(t.Context())
		if err != nil {
			t.Fatalf("Grab: %v", err)
		}
		if full.Hash != again.Hash { // the screen changed meanwhile
			if try > 20 {
				t.Fatalf("the screen never held still")
			}
			continue
		}
		want := full.Sub(r, "window:test")
		if part.W != r.Dx() || part.H != r.Dy() || part.Target != "window:test" || part.Hash != want.Hash {
			t.Fatalf("GrabRegion(%v) = %dx%d %q hash %x; want %dx%d window:test hash %x (the full frame's view)",
				r, part.W, part.H, part.Target, part.Hash, r.Dx(), r.Dy(), want.Hash)
		}
		if redPixels(part, part.Bounds()) == 0 {
			t.Fatalf("the region holds none of foot's red block")
		}
		break
	}
	if _, err := cap.GrabRegion(t.Context(), image.Rect(500, 0, 600, 10), "x"); err == nil {
		t.Errorf("GrabRegion outside the output: no error")
	}
}

// TestGrabAfterCompositorExitFails: when the compositor goes away, Grab
// and Next fail at once naming the display, rather than waiting.
func TestGrabAfterCompositorExitFails(t *testing.T) {
	c := waylandtest.Start(t, 200, 100)
	cap := open(t, c)
	if _, err := cap.Grab(t.Context()); err != nil {
		t.Fatalf("Grab: %v", err)
	}
	c.Stop()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	_, err := cap.Grab(ctx)
	if err == nil || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), c.Socket()) {
		t.Fatalf("Grab after the compositor exited = %v, want an error naming %s", err, c.Socket())
	}
	if _, _, err := cap.Next(ctx); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next after the compositor exited = %v, want the connection's error", err)
	}
}
