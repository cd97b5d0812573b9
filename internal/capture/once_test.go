package capture

import (
	"errors"
	"fmt"
	"image/color"
	"strings"
	"testing"

	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// TestOnceMatchesHub: for every kind of target, with and without privacy
// exclusions, Once returns the frame a Hub's Capture returns on the same
// screen: size, label, hash, pixels, and the same JPEG and PNG bytes.
func TestOnceMatchesHub(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 640, Height: 480})
	testx.NewWindow(t, dpy, testx.Spec{Title: "Public notes", X: 0, Y: 0, W: 100, H: 100, Pattern: pattern})
	testx.NewWindow(t, dpy, testx.Spec{Title: "My Bank — SECRET", X: 200, Y: 50, W: 120, H: 80, Fill: color.RGBA{R: 250, G: 250, B: 250}})
	testx.NewWindow(t, dpy, testx.Spec{Title: "chat", Class: "KeePassXC", X: 400, Y: 300, W: 50, H: 50, Fill: color.RGBA{R: 250}})
	// Partly off the screen: both clip it to the screen.
	edge := testx.NewWindow(t, dpy, testx.Spec{Title: "Edge", X: 600, Y: 440, W: 100, H: 100, Pattern: pattern})

	targets := []string{"screen", "pty:s1", "crop:0,0,1000,1000", "crop:100,200,700,650", "window:notes", "window:bank",
		"window:keepassxc", fmt.Sprintf("window:%#x", edge.ID())}
	for _, exclude := range [][]string{nil, {"secret", " KeePass "}} {
		t.Run(fmt.Sprintf("exclude=%d", len(exclude)), func(t *testing.T) {
			testOnceMatchesHub(t, dpy, targets, Options{Exclude: exclude})
		})
	}
}

func testOnceMatchesHub(t *testing.T, dpy string, targets []string, opts Options) {
	h := newHub(t, opts)
	for _, target := range targets {
		t.Run(target, func(t *testing.T) {
			tg := mustParse(t, target)
			want, err := h.Capture(t.Context(), dpy, tg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Once(t.Context(), dpy, tg, opts)
			if err != nil {
				t.Fatalf("Once(%s) = %v", target, err)
			}
			if got.W != want.W || got.H != want.H || got.Target != want.Target || got.Display != want.Display || got.Hash != want.Hash {
				t.Fatalf("Once(%s) = %dx%d %q on %q hash %016x, want %dx%d %q on %q hash %016x", target,
					got.W, got.H, got.Target, got.Display, got.Hash, want.W, want.H, want.Target, want.Display, want.Hash)
			}
			if err := samePixels(got.Pix, got.Stride, want.Pix, want.Stride, want.W, want.H); err != nil {
				t.Fatalf("Once(%s): %v", target, err)
			}
			if target == "window:bank" && len(opts.Exclude) > 0 {
				if err := samePixels(got.Pix, got.Stride, make([]byte, got.W*got.H*4), got.W*4, got.W, got.H); err != nil {
					t.Fatalf("Once(%s) of an excluded window: %v, want black", target, err)
				}
			}
			for _, enc := range []struct {
				name string
				f    func(*frame.Frame) ([]byte, error)
			}{{"JPEG", func(f *frame.Frame) ([]byte, error) { return f.JPEG(0, 72) }},
				{"JPEG(320, 50)", func(f *frame.Frame) ([]byte, error) { return f.JPEG(320, 50) }},
				{"PNG", (*frame.Frame).PNG}} {
				gb, gerr := enc.f(got)
				wb, werr := enc.f(want)
				if gerr != nil || werr != nil || string(gb) != string(wb) {
					t.Errorf("Once(%s).%s: %d bytes (%v), the Hub's frame %d bytes (%v)", target, enc.name, len(gb), gerr, len(wb), werr)
				}
			}
		})
	}
	// newHub's clean-up checks that no goroutine of Once's is left either.
}

func TestOnceErrors(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 320, Height: 200})
	testx.NewWindow(t, dpy, testx.Spec{Title: "Editor one", X: 0, Y: 0, W: 50, H: 50})
	testx.NewWindow(t, dpy, testx.Spec{Title: "Editor two", X: 60, Y: 0, W: 50, H: 50})

	var te *TargetError
	if _, err := Once(t.Context(), dpy, mustParse(t, "window:editor"), Options{}); !errors.As(err, &te) || !te.Ambiguous || len(te.Candidates) != 2 {
		t.Errorf("Once(ambiguous window) = %v, want an ambiguous TargetError with 2 candidates", err)
	}
	if _, err := Once(t.Context(), dpy, mustParse(t, "window:nothing like it"), Options{}); !errors.As(err, &te) || te.Ambiguous || len(te.Candidates) != 2 {
		t.Errorf("Once(no window) = %v, want a TargetError listing 2 windows", err)
	}
	for _, name := range []string{"", "  ", ":4094"} {
		if _, err := Once(t.Context(), name, Target{}, Options{}); err == nil || !strings.Contains(err.Error(), "acu display start") {
			t.Errorf("Once(%q) = %v, want an error saying how to start a display", name, err)
		}
	}
	if _, err := Once(t.Context(), "remote.example:0", Target{}, Options{}); err == nil || !strings.Contains(err.Error(), "ACU_ALLOW_REMOTE_X") {
		t.Errorf("Once(remote) = %v, want a refusal naming ACU_ALLOW_REMOTE_X", err)
	}
	d16 := testx.StartXvfb(t, xvfb.Options{Width: 64, Height: 64, Depth: 16})
	if _, err := Once(t.Context(), d16, Target{}, Options{}); err == nil || !strings.Contains(err.Error(), "24- and 32-bit") {
		t.Errorf("Once on a 16-bit display = %v, want an error naming the supported depths", err)
	}
	checkNoLeaks(t)
}
