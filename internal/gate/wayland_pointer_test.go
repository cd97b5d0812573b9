package gate_test

import (
	"context"
	"image"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// TestWaylandPointerEffects presses, releases, scrolls and drags through
// the gate's hands on foot, and clicks by Do's 0..1000 coordinates
// through an engine's own device (HandsFor): foot's own mouse reports
// say which button at which cell.
func TestWaylandPointerEffects(t *testing.T) {
	waylandtest.Need(t, "sway")
	waylandtest.Need(t, "foot")
	c := waylandtest.Start(t, 640, 400)
	// foot with xterm's SGR button-event mouse tracking on.
	foot := waylandtest.StartFoot(t, c, `\033[?1002h\033[?1006h`)
	out := foot.Out
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	g := gate.New(gate.Options{DefaultDisplay: c.Socket()})
	defer g.Close()
	h, err := g.HandsFor(ctx, "", gate.DeviceOptions{DragSteps: 2})
	if err != nil {
		t.Fatalf("HandsFor: %v", err)
	}
	cell := func(col, row int) *image.Point {
		p := foot.Cell(col, row)
		return &p
	}
	read := func(want string) {
		t.Helper()
		re := regexp.MustCompile("^" + want + "$")
		deadline := time.Now().Add(20 * time.Second)
		for {
			got, _ := os.ReadFile(out)
			if re.Match(got) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("foot received %q, want %q", got, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	esc := regexp.QuoteMeta("\033[<")
	if _, err := h.ButtonDown(ctx, cell(5, 3), gate.ButtonRight); err != nil {
		t.Fatalf("ButtonDown: %v", err)
	}
	if p, err := g.Pointer(ctx, ""); err != nil || len(p.Buttons) != 1 || p.Buttons[0] != 3 {
		t.Errorf("Pointer with the right button down = %+v, %v", p, err)
	}
	if _, err := h.ButtonDown(ctx, nil, gate.ButtonRight); err == nil {
		t.Errorf("a second ButtonDown of the same button: no error")
	}
	if _, err := h.ButtonUp(ctx, nil, gate.ButtonRight); err != nil {
		t.Fatalf("ButtonUp: %v", err)
	}
	want := esc + `2;5;3M` + esc + `2;5;3m`
	read(want)
	if _, err := h.ScrollAt(ctx, cell(7, 4), 0, 2); err != nil {
		t.Fatalf("ScrollAt: %v", err)
	}
	want += esc + `65;7;4M` + esc + `65;7;4M`
	read(want)
	if _, err := h.DragPath(ctx, gate.ButtonLeft, []image.Point{*cell(3, 3), *cell(9, 5)}, 0); err != nil {
		t.Fatalf("DragPath: %v", err)
	}
	// The press at the start, motion with the button held (the steps'
	// cells), the release at the end.
	want += esc + `0;3;3M(` + esc + `32;\d+;\d+M)+` + esc + `0;9;5m`
	read(want)
	a := h.Area()
	nx, ny := a.ToNorm(cell(12, 6).X, cell(12, 6).Y)
	if _, err := h.Do(ctx, gate.Action{Kind: gate.KindDoubleClick, X: nx, Y: ny}); err != nil {
		t.Fatalf("Do double_click: %v", err)
	}
	want += esc + `0;12;6M` + esc + `0;12;6m` + esc + `0;12;6M` + esc + `0;12;6m`
	read(want)
}
