package snapshot_test

import (
	"image"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/privacy"
	"github.com/acu-dev/acu/internal/wayland/snapshot"
	"github.com/acu-dev/acu/internal/wayland/sway"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

func redIn(f *frame.Frame, r image.Rectangle) int {
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

func nonBlack(f *frame.Frame, r image.Rectangle) int {
	n := 0
	r = r.Intersect(f.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			p := f.Pix[y*f.Stride+x*4:]
			if p[0]|p[1]|p[2] != 0 {
				n++
			}
		}
	}
	return n
}

// twoWindows shows "ALPHA one" and "SECRET one" side by side, each with a
// red block, and returns their rectangles once both are drawn.
func twoWindows(t *testing.T) (*sway.Compositor, map[string]image.Rectangle) {
	c := waylandtest.Start(t, 640, 400)
	for _, title := range []string{"ALPHA one", "SECRET one"} {
		waylandtest.Client(t, c, "foot", "--title="+title, "--app-id=acu-test",
			"--override=colors.regular1=ff0000", "--override=colors.background=000000",
			"sh", "-c", `printf '\033[41m%10s\033[0m' ''; exec sleep 600`)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		nodes, err := sway.Windows(t.Context(), c.IPCSocket())
		rects := map[string]image.Rectangle{}
		for _, n := range nodes {
			rects[n.Name] = n.Rect
		}
		if err == nil && len(rects) == 2 && !rects["ALPHA one"].Overlaps(rects["SECRET one"]) {
			f, err := snapshot.Take(t.Context(), snapshot.Options{Socket: c.Socket()}, snapshot.Target{})
			if err != nil {
				t.Fatalf("Take: %v", err)
			}
			if redIn(f, rects["ALPHA one"]) > 0 && redIn(f, rects["SECRET one"]) > 0 {
				return c, rects
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the two windows never showed: %+v, %v", nodes, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTakeBlacksOutExcludedWindows: with "secret" excluded, the excluded
// window's rectangle is black in a screen capture, the other is not.
func TestTakeBlacksOutExcludedWindows(t *testing.T) {
	c, rects := twoWindows(t)
	o := snapshot.Options{Socket: c.Socket(), Display: "wl-test", IPC: c.IPCSocket(), Exclude: privacy.New([]string{"secret"})}
	f, err := snapshot.Take(t.Context(), o, snapshot.Target{})
	if err != nil {
		t.Fatalf("Take: %v", err)
	}
	if n := nonBlack(f, rects["SECRET one"]); n != 0 {
		t.Errorf("the excluded window shows %d non-black pixels", n)
	}
	if redIn(f, rects["ALPHA one"]) == 0 {
		t.Errorf("the other window lost its red block")
	}
	if f.Display != "wl-test" || f.Target != "screen" || f.W != 640 || f.H != 400 {
		t.Errorf("frame = %dx%d %q on %q, want 640x400 screen on wl-test", f.W, f.H, f.Target, f.Display)
	}
	// A crop over both: still black where the excluded window is.
	f, err = snapshot.Take(t.Context(), o, snapshot.Target{Crop: [4]int{0, 0, 1000, 500}})
	if err != nil {
		t.Fatalf("Take crop: %v", err)
	}
	sec := rects["SECRET one"].Intersect(image.Rect(0, 0, 640, 200))
	if f.H != 200 || nonBlack(f, sec) != 0 || f.Target != "crop:0,0,1000,500" {
		t.Errorf("crop: %dx%d %q, %d non-black pixels of the excluded window", f.W, f.H, f.Target, nonBlack(f, sec))
	}
}

// TestTakeWindow captures one window by part of its title; an ambiguous or
// unknown name is an error listing the windows.
func TestTakeWindow(t *testing.T) {
	c, rects := twoWindows(t)
	o := snapshot.Options{Socket: c.Socket(), IPC: c.IPCSocket()}
	f, err := snapshot.Take(t.Context(), o, snapshot.Target{Window: "alpha"})
	if err != nil {
		t.Fatalf("Take window:alpha: %v", err)
	}
	r := rects["ALPHA one"]
	if f.W != r.Dx() || f.H != r.Dy() || f.Target != "window:ALPHA one" || redIn(f, f.Bounds()) == 0 {
		t.Fatalf("window:alpha = %dx%d %q with %d red pixels; want %dx%d window:ALPHA one with its red block",
			f.W, f.H, f.Target, redIn(f, f.Bounds()), r.Dx(), r.Dy())
	}
	for q, want := range map[string]string{"one": "matches 2 windows", "gamma": "matches no window"} {
		if _, err := snapshot.Take(t.Context(), o, snapshot.Target{Window: q}); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "SECRET one") {
			t.Errorf("Take window:%s = %v, want an error saying it %s and listing the windows", q, err, want)
		}
	}
	if _, err := snapshot.Take(t.Context(), snapshot.Options{Socket: c.Socket()}, snapshot.Target{Window: "alpha"}); err == nil || !strings.Contains(err.Error(), "SWAYSOCK") {
		t.Errorf("Take window:alpha without IPC = %v, want an error naming SWAYSOCK", err)
	}
}
