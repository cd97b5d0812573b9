package capture

import (
	"errors"
	"image"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acu-dev/acu/internal/display"
)

func TestParseTarget(t *testing.T) {
	tests := []struct {
		in   string
		want Target
		str  string
	}{
		{"screen", Target{Kind: Screen}, "screen"},
		{"", Target{Kind: Screen}, "screen"},
		{" Screen ", Target{Kind: Screen}, "screen"},
		{"window:Firefox", Target{Kind: Window, Query: "Firefox"}, "window:Firefox"},
		{"window:My: app", Target{Kind: Window, Query: "My: app"}, "window:My: app"},
		{"window:0x1a00003", Target{Kind: Window, Query: "0x1a00003", ID: 0x1a00003}, "window:0x1a00003"},
		{"window:12345", Target{Kind: Window, Query: "12345", ID: 12345}, "window:12345"},
		{"crop:100,100,900,900", Target{Kind: Crop, Crop: [4]int{100, 100, 900, 900}}, "crop:100,100,900,900"},
		{"crop: 0, 0, 1000, 1000", Target{Kind: Crop, Crop: [4]int{0, 0, 1000, 1000}}, "crop:0,0,1000,1000"},
		{"pty:s1", Target{Kind: PTY, Query: "s1"}, "pty:s1"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseTarget(tt.in)
			if err != nil {
				t.Fatalf("ParseTarget(%q) = %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseTarget(%q) (-want +got):\n%s", tt.in, diff)
			}
			if got.String() != tt.str {
				t.Errorf("String() = %q, want %q", got.String(), tt.str)
			}
		})
	}
	for _, bad := range []string{"window:", "window:  ", "crop:1,2,3", "crop:0,0,1001,10", "crop:500,0,100,10",
		"crop:a,b,c,d", "screen:1", "pty:", "desktop", ":99"} {
		if got, err := ParseTarget(bad); err == nil {
			t.Errorf("ParseTarget(%q) = %+v, want error", bad, got)
		}
	}
}

func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"screen", "window:x", "window:0x10", "crop:1,2,3,4", "pty:a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tg, err := ParseTarget(s)
		if err != nil {
			return
		}
		again, err := ParseTarget(tg.String())
		if err != nil {
			t.Fatalf("ParseTarget(%q).String() = %q does not parse: %v", s, tg.String(), err)
		}
		if again != tg {
			t.Fatalf("round trip of %q: %+v != %+v", s, again, tg)
		}
		if tg.Kind == Crop {
			r := CropRect(tg.Crop, 1920, 1080)
			if r.Empty() && tg.Crop[2]-tg.Crop[0] > 1 && tg.Crop[3]-tg.Crop[1] > 1 {
				t.Fatalf("CropRect(%v) empty", tg.Crop)
			}
			if !r.In(image.Rect(0, 0, 1920, 1080)) {
				t.Fatalf("CropRect(%v) = %v outside the screen", tg.Crop, r)
			}
		}
	})
}

func TestCropRect(t *testing.T) {
	if got, want := CropRect([4]int{0, 0, 1000, 1000}, 1280, 720), image.Rect(0, 0, 1280, 720); got != want {
		t.Errorf("CropRect(full) = %v, want %v", got, want)
	}
	if got, want := CropRect([4]int{500, 500, 1000, 1000}, 1280, 720), image.Rect(640, 360, 1280, 720); got != want {
		t.Errorf("CropRect(quadrant) = %v, want %v", got, want)
	}
}

func TestTargetErrorMessage(t *testing.T) {
	e := &TargetError{Display: ":99", Target: "window:edit", Ambiguous: true,
		Candidates: []display.Window{{ID: 0x200001, Title: "Editor one", Class: "Ed"}, {ID: 0x400001, Title: "Editor two"}}}
	var err error = e
	if !errors.Is(err, ErrTarget) {
		t.Error("errors.Is(TargetError, ErrTarget) = false")
	}
	msg := err.Error()
	for _, want := range []string{":99", "window:edit", "0x200001", `"Editor one"`, "(Ed)", "0x400001"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Error() = %q, want it to contain %q", msg, want)
		}
	}
}

// TestHubRefusesBadDisplayNames: names xgb would panic on, or dial over
// TCP, are refused before the hub keeps any state for them.
func TestHubRefusesBadDisplayNames(t *testing.T) {
	h, err := NewHub(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, name := range []string{":0/x", "127.0.0.1:40", "/tmp/.X11-unix/X0:0", ":1.2.3"} {
		if _, err := h.Capture(t.Context(), name, Target{Kind: Screen}); !errors.Is(err, display.ErrBadName) {
			t.Errorf("Capture(%q) = %v, want ErrBadName", name, err)
		}
		if _, err := h.Watch(t.Context(), name, Target{Kind: Screen}); !errors.Is(err, display.ErrBadName) {
			t.Errorf("Watch(%q) = %v, want ErrBadName", name, err)
		}
	}
	h.mu.Lock()
	n := len(h.sources)
	h.mu.Unlock()
	if n != 0 {
		t.Errorf("hub keeps %d sources for refused names", n)
	}
}
