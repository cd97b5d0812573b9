package input

import (
	"context"
	"fmt"
	"image"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/internal/testx"
)

func pt(x, y int) *image.Point { p := image.Pt(x, y); return &p }

func TestPixelPrimitives(t *testing.T) {
	tests := []struct {
		name string
		do   func(ctx context.Context, d *Device) error
		want []string
	}{
		{"triple click", func(ctx context.Context, d *Device) error { return d.ClickAt(ctx, pt(1001, 7), ButtonLeft, 3) },
			[]string{"button_press 1 @1001,7", "button_release 1 @1001,7", "button_press 1 @1001,7", "button_release 1 @1001,7", "button_press 1 @1001,7", "button_release 1 @1001,7"}},
		{"right click off screen clamps", func(ctx context.Context, d *Device) error { return d.ClickAt(ctx, pt(5000, -3), ButtonRight, 1) },
			[]string{"button_press 3 @1279,0", "button_release 3 @1279,0"}},
		{"down then up elsewhere", func(ctx context.Context, d *Device) error {
			if err := d.ButtonDown(ctx, pt(10, 20), ButtonLeft); err != nil {
				return err
			}
			return d.ButtonUp(ctx, pt(30, 40), ButtonLeft)
		}, []string{"button_press 1 @10,20", "button_release 1 @30,40"}},
		{"scroll left at a pixel", func(ctx context.Context, d *Device) error { return d.ScrollAt(ctx, pt(333, 444), -2, 0) },
			[]string{"button_press 6 @333,444", "button_release 6 @333,444", "button_press 6 @333,444", "button_release 6 @333,444"}},
	}
	d := newTestDevice(t, fullArea, Options{ClickDelay: -1, DoubleClickGap: -1})
	w := fullWindow(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w.ResetEvents()
			if err := tt.do(t.Context(), d); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			evs := waitKind(t, w, testx.ButtonRelease, len(tt.want)/2)
			if diff := cmp.Diff(tt.want, buttons(evs)); diff != "" {
				t.Errorf("%s: button events mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestButtonDownOutlivesTheAction(t *testing.T) {
	d := newTestDevice(t, fullArea, Options{})
	w := fullWindow(t)
	if err := d.ButtonDown(t.Context(), pt(50, 60), ButtonMiddle); err != nil {
		t.Fatal(err)
	}
	if err := d.ButtonDown(t.Context(), nil, ButtonMiddle); err == nil || !strings.Contains(err.Error(), "already down") {
		t.Errorf("second ButtonDown = %v, want already down", err)
	}
	if err := d.MoveTo(t.Context(), image.Pt(70, 80)); err != nil {
		t.Fatal(err)
	}
	evs := waitKind(t, w, testx.ButtonPress, 1)
	if n := count(evs, testx.ButtonRelease); n != 0 {
		t.Fatalf("the button was released after ButtonDown: %v", buttons(evs))
	}
	// Close releases what is still down.
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	evs = waitKind(t, w, testx.ButtonRelease, 1)
	if diff := cmp.Diff([]string{"button_press 2 @50,60", "button_release 2 @70,80"}, buttons(evs)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDragAlongPathWithHold(t *testing.T) {
	d := newTestDevice(t, fullArea, Options{DragSteps: 2, DragStepDelay: -1})
	w := fullWindow(t)
	path := []image.Point{{100, 100}, {300, 100}, {300, 301}}
	if err := d.DragPath(t.Context(), ButtonLeft, path, 30*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	evs := waitKind(t, w, testx.ButtonRelease, 1)
	var got []string
	pressed := false
	var pressAt, firstMove uint32
	for _, e := range evs {
		switch e.Kind {
		case testx.ButtonPress:
			pressed, pressAt = true, e.Time
			got = append(got, fmt.Sprintf("press @%d,%d", e.RootX, e.RootY))
		case testx.ButtonRelease:
			got = append(got, fmt.Sprintf("release @%d,%d", e.RootX, e.RootY))
		case testx.Motion:
			if pressed {
				if firstMove == 0 {
					firstMove = e.Time
				}
				if e.State&xproto.ButtonMask1 == 0 {
					t.Errorf("motion without the button held")
				}
				got = append(got, fmt.Sprintf("move @%d,%d", e.RootX, e.RootY))
			}
		}
	}
	want := []string{"press @100,100", "move @200,100", "move @300,100", "move @300,200", "move @300,301", "release @300,301"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("drag (-want +got):\n%s", diff)
	}
	if firstMove-pressAt < 30 {
		t.Errorf("first move %d ms after the press, want the 30 ms hold first", firstMove-pressAt)
	}
	if err := d.DragPath(t.Context(), ButtonLeft, path[:1], 0); err == nil {
		t.Error("DragPath with one point succeeded")
	}
}

func TestKeyHoldRepeat(t *testing.T) {
	d := newTestDevice(t, fullArea, Options{})
	w := fullWindow(t)
	if err := d.KeyHold(t.Context(), "a", 40*time.Millisecond, 3); err != nil {
		t.Fatal(err)
	}
	evs := waitKind(t, w, testx.KeyRelease, 3)
	var presses []uint32
	for _, e := range evs {
		switch e.Kind {
		case testx.KeyPress:
			presses = append(presses, e.Time)
			if e.Rune != 'a' {
				t.Errorf("pressed %q, want a", e.Rune)
			}
		case testx.KeyRelease:
			if held := e.Time - presses[len(presses)-1]; held < 40 {
				t.Errorf("key held %d ms, want at least 40", held)
			}
		}
	}
	if len(presses) != 3 {
		t.Errorf("%d presses, want 3", len(presses))
	}
	if err := d.KeyHold(t.Context(), "a", 0, MaxRepeat+1); err == nil {
		t.Error("KeyHold beyond MaxRepeat succeeded")
	}
}

func TestCheckText(t *testing.T) {
	d := newTestDevice(t, fullArea, Options{DryRun: true})
	for _, s := range []string{"hello", "Zürich €5 ☃"} {
		if err := d.CheckText(s); err != nil {
			t.Errorf("CheckText(%q) = %v", s, err)
		}
	}
	if err := d.CheckText("a\x01"); err == nil {
		t.Error("CheckText with a control character succeeded")
	}
}
