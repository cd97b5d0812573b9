// Package ocrtest puts real text on a real X screen for OCR tests: it starts
// a private Xvfb, runs X clients (xterm) on it and grabs the root window into
// a frame.Frame. Tests in internal/ocr and internal/judge use it; once
// internal/testx and internal/capture are in the tree they can replace it.
package ocrtest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/internal/frame"
)

// Display is a running private Xvfb.
type Display struct {
	Name string // ":N"
	W, H int
	conn *xgb.Conn
	root xproto.Window
}

// StartXvfb starts Xvfb at w x h x 24 on a display number it picks itself
// (-displayfd) and stops it in t.Cleanup. A missing Xvfb fails the test.
func StartXvfb(t testing.TB, w, h int) *Display {
	t.Helper()
	if _, err := exec.LookPath("Xvfb"); err != nil {
		t.Fatalf("Xvfb is required: apt-get install xvfb: %v", err)
	}
	r, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", fmt.Sprintf("%dx%dx24", w, h), "-nolisten", "tcp", "-ac")
	cmd.ExtraFiles = []*os.File{wr}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start Xvfb: %v", err)
	}
	wr.Close()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	line, err := bufio.NewReader(r).ReadString('\n')
	r.Close()
	if err != nil {
		t.Fatalf("read Xvfb display number: %v", err)
	}
	name := ":" + strings.TrimSpace(line)
	conn, err := xgb.NewConnDisplay(name)
	if err != nil {
		t.Fatalf("connect to %s: %v", name, err)
	}
	t.Cleanup(conn.Close)
	root := xproto.Setup(conn).DefaultScreen(conn).Root
	return &Display{Name: name, W: w, H: h, conn: conn, root: root}
}

// Start runs an X client on the display and kills it in t.Cleanup.
func (d *Display) Start(t testing.TB, name string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "DISPLAY="+d.Name)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	return cmd
}

// Xterm runs script with sh inside an xterm at geometry ("80x10+0+0") with
// the given colours and font options, and returns a path whose existence
// says the script got past the point where it runs `touch "$ACU_MARK"`.
func (d *Display) Xterm(t testing.TB, geometry, fg, bg string, fontArgs []string, script string) (mark string) {
	t.Helper()
	mark = filepath.Join(t.TempDir(), "mark")
	args := []string{"-geometry", geometry, "-fg", fg, "-bg", bg, "+sb", "-bw", "0"}
	args = append(args, fontArgs...)
	args = append(args, "-e", "sh", "-c", "ACU_MARK="+mark+"; export ACU_MARK; "+script+"; exec sleep 1000")
	d.Start(t, "xterm", args...)
	return mark
}

// Grab captures the root window as a BGRX frame.
func (d *Display) Grab(t testing.TB) *frame.Frame {
	t.Helper()
	f, err := d.grab()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (d *Display) grab() (*frame.Frame, error) {
	// GetImage replies are limited by the request size; grab in bands.
	pix := make([]byte, d.W*d.H*4)
	band := max(1, (1<<20)/(d.W*4))
	for y := 0; y < d.H; y += band {
		h := min(band, d.H-y)
		img, err := xproto.GetImage(d.conn, xproto.ImageFormatZPixmap, xproto.Drawable(d.root),
			0, int16(y), uint16(d.W), uint16(h), 0xffffffff).Reply()
		if err != nil {
			return nil, fmt.Errorf("grab %s: %w", d.Name, err)
		}
		copy(pix[y*d.W*4:], img.Data)
	}
	return frame.New(pix, d.W, d.H, d.W*4, d.Name, "screen", time.Now()), nil
}

// WaitSettled waits until mark exists (when not empty) and two grabs in a
// row are equal and differ from the blank screen, then returns the last
// grab. It gives up when ctx ends.
func (d *Display) WaitSettled(ctx context.Context, t testing.TB, mark string) *frame.Frame {
	t.Helper()
	var prev *frame.Frame
	for {
		if ctx.Err() != nil {
			t.Fatalf("screen of %s did not settle: %v", d.Name, ctx.Err())
		}
		ready := true
		if mark != "" {
			if _, err := os.Stat(mark); err != nil {
				ready = false
			}
		}
		if ready {
			f, err := d.grab()
			if err != nil {
				t.Fatal(err)
			}
			if prev != nil && string(prev.Pix) == string(f.Pix) && !blank(f) {
				return f
			}
			prev = f
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func blank(f *frame.Frame) bool {
	first := f.Pix[:3]
	for i := 0; i < len(f.Pix); i += 4 {
		if f.Pix[i] != first[0] || f.Pix[i+1] != first[1] || f.Pix[i+2] != first[2] {
			return false
		}
	}
	return true
}
