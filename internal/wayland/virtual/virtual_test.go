package virtual_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/wayland/virtual"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

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
	out := waylandtest.StartFoot(t, c, "").Out
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
	out := waylandtest.StartFoot(t, c, "").Out
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
	foot := waylandtest.StartFoot(t, c, `\033[?1000h\033[?1006h`)
	out := foot.Out
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
		p := foot.Cell(s.col, s.row)
		x, y := p.X, p.Y
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
	foot := waylandtest.StartFoot(t, c, `\033[?1002h\033[?1006h`)
	out, at := foot.Out, foot.Cell
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
	waylandtest.Window(ctx, t, c, "acu-gtk", nil)
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
