package virtual_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/wayland/screencopy"
	"github.com/acu-dev/acu/internal/wayland/sway"
	"github.com/acu-dev/acu/internal/wayland/virtual"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// footReading starts foot on c with its terminal in raw mode, prints a red
// block of 10 cells at the top left (after setup, terminal escapes), and
// copies every byte the terminal receives to a file. It returns the
// file and the block's rectangle once the block shows: the window is
// mapped (and focused) then, and the block gives the cell grid.
func footReading(t *testing.T, c waylandtest.Compositor, setup string) (out string, block image.Rectangle) {
	t.Helper()
	out = filepath.Join(t.TempDir(), "received")
	script := fmt.Sprintf(`stty raw -echo; printf '%s\033[41m%%10s\033[0m' ''; exec cat > %s`, setup, out)
	// One wheel step is one line (foot's default is 3), so one report.
	waylandtest.Client(t, c, "foot", "--override=colors.regular1=ff0000", "--override=colors.background=000000",
		"--override=scrollback.multiplier=1", "sh", "-c", script)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cap, err := screencopy.Open(ctx, c.Socket(), "", "")
	if err != nil {
		t.Fatalf("screencopy: %v", err)
	}
	defer cap.Close()
	for {
		f, err := cap.Grab(ctx)
		if err != nil {
			t.Fatalf("waiting for foot's red block: %v", err)
		}
		r := image.Rectangle{}
		for y := 0; y < f.H; y++ {
			for x := 0; x < f.W; x++ {
				p := f.Pix[y*f.Stride+x*4:]
				if p[2] == 0xff && p[1] == 0 && p[0] == 0 {
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

func open(t testing.TB, c waylandtest.Compositor) *virtual.Device {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	d, err := virtual.Open(ctx, c.Socket(), "")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// waitFor waits until the file holds want (or has grown past it).
func waitFor(t *testing.T, path string, want []byte) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, _ := os.ReadFile(path)
		if bytes.Equal(got, want) {
			return
		}
		if len(got) > len(want) || time.Now().After(deadline) {
			t.Fatalf("the app received %q, want %q", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTypeAnyCharacter types text in several scripts and key combos into
// foot, a native Wayland app, and checks the bytes its terminal received.
func TestTypeAnyCharacter(t *testing.T) {
	typeAnyCharacter(t, waylandtest.Start(t, 640, 400))
}

func typeAnyCharacter(t *testing.T, c waylandtest.Compositor) {
	d := open(t, c)
	out, _ := footReading(t, c, "")
	text := "héllo Wörld ✓ 日本語 € ß\t{x}"
	if err := d.Type(t.Context(), text); err != nil {
		t.Fatalf("Type: %v", err)
	}
	if err := d.Key(t.Context(), "ctrl+c Return shift+Tab"); err != nil {
		t.Fatalf("Key: %v", err)
	}
	waitFor(t, out, []byte(text+"\x03\r\033[Z"))
}

// TestTypeMoreCharactersThanAKeymapHolds types 300 distinct characters:
// the device uploads a second keymap midway and loses none.
func TestTypeMoreCharactersThanAKeymapHolds(t *testing.T) {
	c := waylandtest.Start(t, 640, 400)
	d := open(t, c)
	out, _ := footReading(t, c, "")
	var text []rune
	for r := rune(0x4e00); len(text) < 300; r++ {
		text = append(text, r)
	}
	if err := d.Type(t.Context(), string(text)); err != nil {
		t.Fatalf("Type: %v", err)
	}
	waitFor(t, out, []byte(string(text)))
}

// TestButtonsAndWheelAtCells clicks buttons 1-3 and turns the wheel over
// given cells of foot with xterm's SGR mouse reporting on, and checks the
// button and cell of each report the app received.
func TestButtonsAndWheelAtCells(t *testing.T) {
	buttonsAndWheelAtCells(t, waylandtest.Start(t, 640, 400))
}

func buttonsAndWheelAtCells(t *testing.T, c waylandtest.Compositor) {
	d := open(t, c)
	out, block := footReading(t, c, `\033[?1000h\033[?1006h`)
	cw, ch := block.Dx()/10, block.Dy()
	at := func(col, row int) (int, int) { // the centre of a 1-based cell
		return block.Min.X + (col-1)*cw + cw/2, block.Min.Y + (row-1)*ch + ch/2
	}
	var want []byte
	steps := []struct {
		button, col, row int
		report           int // SGR button code
		release          bool
	}{
		{1, 5, 3, 0, true}, {3, 12, 7, 2, true}, {2, 20, 2, 1, true},
		{4, 7, 4, 64, false}, {5, 7, 4, 65, false}, {6, 9, 5, 66, true}, {7, 9, 5, 67, true}, // foot reports a horizontal step as a press and a release
		{8, 3, 8, 128, true}, {9, 4, 8, 129, true},
	}
	for _, s := range steps {
		x, y := at(s.col, s.row)
		if err := d.Click(t.Context(), x, y, s.button, 1); err != nil {
			t.Fatalf("Click(%d,%d button %d): %v", x, y, s.button, err)
		}
		want = fmt.Appendf(want, "\033[<%d;%d;%dM", s.report, s.col, s.row)
		if s.release {
			want = fmt.Appendf(want, "\033[<%d;%d;%dm", s.report, s.col, s.row)
		}
		waitFor(t, out, want)
	}
	if err := d.Button(t.Context(), 10, true); err == nil {
		t.Errorf("Button(10): no error, want one naming the range 1..9")
	}
}

// TestDragReportsMotionWithButtonHeld drags with button 1 through foot
// with button-event mouse tracking on: the app sees the press at the
// start cell, motion with the button held, and the release at the end.
func TestDragReportsMotionWithButtonHeld(t *testing.T) {
	c := waylandtest.Start(t, 640, 400)
	d := open(t, c)
	out, block := footReading(t, c, `\033[?1002h\033[?1006h`)
	cw, ch := block.Dx()/10, block.Dy()
	at := func(col, row int) image.Point {
		return image.Pt(block.Min.X+(col-1)*cw+cw/2, block.Min.Y+(row-1)*ch+ch/2)
	}
	if err := d.Drag(t.Context(), 1, []image.Point{at(3, 3), at(8, 4), at(15, 6)}, 0); err != nil {
		t.Fatalf("Drag: %v", err)
	}
	want := "\033[<0;3;3M\033[<32;8;4M\033[<32;15;6M\033[<0;15;6m"
	waitFor(t, out, []byte(want))
	if err := d.Drag(t.Context(), 4, []image.Point{at(1, 1), at(2, 2)}, 0); err == nil {
		t.Errorf("Drag with the wheel (button 4): no error")
	}
}

// TestTypeIntoGTKEntry types into a native Wayland GTK app (zenity's entry
// dialog with GDK_BACKEND=wayland) and presses Return: the app prints what
// its entry holds.
func TestTypeIntoGTKEntry(t *testing.T) {
	waylandtest.Need(t, "zenity")
	c := waylandtest.Start(t, 640, 400)
	d := open(t, c)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "zenity", "--entry", "--title=acu-gtk", "--text=Name")
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8", "GDK_BACKEND=wayland", "NO_AT_BRIDGE=1"}, c.Env()...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("start zenity: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cancel(); <-exited })

	// The dialog is up (and its entry focused) once sway lists it focused.
	deadline := time.Now().Add(30 * time.Second)
	for {
		nodes, err := sway.Windows(ctx, c.IPCSocket())
		if err == nil && len(nodes) == 1 && nodes[0].Name == "acu-gtk" && nodes[0].Focused {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("zenity's dialog never showed focused: %+v, %v", nodes, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	const text = "Grüße ✓ 日本!"
	if err := d.Type(ctx, text); err != nil {
		t.Fatalf("Type: %v", err)
	}
	if err := d.Key(ctx, "Left BackSpace Return"); err != nil { // GTK's bindings: the keys must reach them
		t.Fatalf("Key: %v", err)
	}
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Fatalf("zenity: %v", err)
		}
	case <-ctx.Done():
		t.Fatalf("zenity did not close on Return")
	}
	if got, want := strings.TrimSuffix(stdout.String(), "\n"), "Grüße ✓ 日!"; got != want {
		t.Fatalf("zenity printed %q, want %q", got, want)
	}
}
