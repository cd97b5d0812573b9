package gate_test

import (
	"context"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/wayland/screencopy"
	"github.com/acu-dev/acu/internal/wayland/sway"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// footMouse starts foot on c in raw mode with xterm's SGR button-event
// mouse tracking on, showing a red block of 10 cells at the top left, and
// copies what its terminal receives to a file. It returns the file and
// the block once it shows (the cell grid).
func footMouse(t *testing.T, c *sway.Compositor) (string, image.Rectangle) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "received")
	script := fmt.Sprintf(`stty raw -echo; printf '\033[?1002h\033[?1006h\033[41m%%10s\033[0m' ''; exec cat > %s`, out)
	waylandtest.Client(t, c, "foot", "--override=colors.regular1=ff0000", "--override=colors.background=000000",
		"--override=scrollback.multiplier=1", "sh", "-c", script)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cp, err := screencopy.Open(ctx, c.Socket(), "", "")
	if err != nil {
		t.Fatalf("screencopy: %v", err)
	}
	defer cp.Close()
	for {
		f, err := cp.Grab(ctx)
		if err != nil {
			t.Fatalf("waiting for foot's red block: %v", err)
		}
		r := image.Rectangle{}
		for y := 0; y < f.H; y++ {
			for x := 0; x < f.W; x++ {
				if p := f.Pix[y*f.Stride+x*4:]; p[2] == 0xff && p[1] == 0 && p[0] == 0 {
					r = r.Union(image.Rect(x, y, x+1, y+1))
				}
			}
		}
		if _, err := os.Stat(out); err == nil && r.Dx() >= 10 && r.Dx()%10 == 0 {
			return out, r
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestWaylandPointerEffects presses, releases, scrolls and drags through
// the gate's hands on foot, and clicks by Do's 0..1000 coordinates
// through an engine's own device (HandsFor): foot's own mouse reports
// say which button at which cell.
func TestWaylandPointerEffects(t *testing.T) {
	waylandtest.Need(t, "sway")
	waylandtest.Need(t, "foot")
	c := waylandtest.Start(t, 640, 400)
	out, block := footMouse(t, c)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	g := gate.New(gate.Options{DefaultDisplay: c.Socket()})
	defer g.Close()
	h, err := g.HandsFor(ctx, "", gate.DeviceOptions{DragSteps: 2})
	if err != nil {
		t.Fatalf("HandsFor: %v", err)
	}
	cw, ch := block.Dx()/10, block.Dy()
	cell := func(col, row int) *image.Point {
		return &image.Point{X: block.Min.X + (col-1)*cw + cw/2, Y: block.Min.Y + (row-1)*ch + ch/2}
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
