package input

import (
	"testing"
	"time"

	xdisplay "github.com/acu-dev/acu/internal/display"
)

// TestHold: a hold written on one connection is seen on another (as by
// another acu process), makes Watch report input however still the
// pointer is, ends with ClearHold, and counts for nothing past Until.
func TestHold(t *testing.T) {
	ctx := t.Context()
	a, err := xdisplay.Open(ctx, dpy, xdisplay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := xdisplay.Open(ctx, dpy, xdisplay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	hw := NewHoldWatch(b)
	w := NewWatch(b, WatchOptions{})
	if err := w.Mark(ctx); err != nil {
		t.Fatal(err)
	}
	if held, _, err := hw.Held(ctx); err != nil || held {
		t.Fatalf("Held before any hold = %v, %v; want false", held, err)
	}
	now := time.Now()
	if err := SetHold(ctx, a, Hold{By: "a browser", Since: now, Until: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if held, detail, err := hw.Held(ctx); err != nil || !held || detail == "" {
		t.Errorf("Held = %v, %q, %v; want true with who", held, detail, err)
	}
	if foreign, detail, err := w.Foreign(ctx); err != nil || !foreign {
		t.Errorf("Watch.Foreign while held = %v, %q, %v; want true", foreign, detail, err)
	}
	if _, held, err := ReadHold(ctx, b, now.Add(2*time.Minute)); err != nil || held {
		t.Errorf("ReadHold past Until = %v, %v; want not held", held, err)
	}
	if err := ClearHold(ctx, a); err != nil {
		t.Fatal(err)
	}
	if held, _, err := hw.Held(ctx); err != nil || held {
		t.Errorf("Held after ClearHold = %v, %v; want false", held, err)
	}
	if foreign, detail, err := w.Foreign(ctx); err != nil || foreign {
		t.Errorf("Watch.Foreign after the hold = %v, %q, %v; want false", foreign, detail, err)
	}
}
