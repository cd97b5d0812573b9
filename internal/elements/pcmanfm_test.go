package elements_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/input"
	"github.com/acu-dev/acu/internal/ocr"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// pcmanfmDesktop is the desktop internal/taskbench gives its pcmanfm
// tasks: a 1280x800 screen with a window manager, a session bus with the
// accessibility bus, pcmanfm with a $HOME of its own showing dir, and an
// extractor reading the screen as acu's maps do (OCR at OCRScale).
func pcmanfmDesktop(t *testing.T, dir string) (*elements.Extractor, *input.Device) {
	t.Helper()
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 1280, Height: 800, WindowManager: true})
	s := atspitest.Start(t, dpy)
	hub, err := capture.NewHub(capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hub.Close() })
	tree, err := atspi.Connect(t.Context(), atspi.Options{SessionBus: s.SessionBus})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tree.Close() })
	conn, err := display.Open(t.Context(), dpy, display.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	dev, err := input.New(conn, input.Area{W: conn.Screen.Width, H: conn.Screen.Height}, input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	eng, err := ocr.New(ocr.Options{Scale: elements.OCRScale})
	if err != nil {
		t.Fatal(err)
	}
	x, err := elements.New(elements.Options{Display: dpy, Capture: hub, Tree: tree, OCR: eng, Input: dev})
	if err != nil {
		t.Fatal(err)
	}

	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "LANG=C.UTF-8"}
	for _, kv := range s.Env() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "LANG", "LC_ALL":
			continue
		}
		env = append(env, kv)
	}
	app := s.StartAppEnv(t, env, "pcmanfm", "--no-desktop", dir)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		ws, err := conn.Windows(ctx)
		if err == nil {
			for _, w := range ws {
				if w.Mapped && strings.Contains(w.Title, filepath.Base(dir)) {
					return x, dev
				}
			}
		}
		if ctx.Err() != nil || app.Exited() {
			t.Fatalf("pcmanfm's window %q never showed; pcmanfm stderr: %s", filepath.Base(dir), app.Stderr())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pcmanfm's context menu on a file holds "Rename...": the element map
// must read it so, or an agent asking for it finds nothing. GTK underlines
// its R faintly, touching the letter's foot, and OCR read "Bename..."
// until the underline was taken off the page (internal/ocr/underline.go).
func TestMapPcmanfmContextMenu(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "files")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"draft.txt": "text\n", "keep.txt": "keep\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	x, dev := pcmanfmDesktop(t, dir)

	var file *elements.Element
	for range 20 {
		m, err := x.Extract(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for i := range m.Elements {
			// The label on the screen (the tree's icon view items have no
			// place of their own).
			if e := &m.Elements[i]; e.Source != elements.FromTree && strings.Contains(e.Text, "draft.txt") {
				file = e
				break
			}
		}
		if file != nil {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if file == nil {
		t.Fatal("no element for draft.txt in pcmanfm's window")
	}
	t.Logf("right-click %s", file)
	c := file.Center()
	nx, ny := dev.Area().ToNorm(c.X, c.Y)
	if err := dev.RightClick(t.Context(), nx, ny); err != nil {
		t.Fatal(err)
	}
	var m *elements.Map
	for range 20 {
		var err error
		if m, err = x.Extract(t.Context()); err != nil {
			t.Fatal(err)
		}
		if hasTextPart(m, "Copy Path") {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if !hasText(m, "Rename...") && !hasText(m, "Rename…") {
		t.Errorf("no element \"Rename...\" in the map of pcmanfm's context menu:\n%s", describe(m))
	}
}

func hasText(m *elements.Map, text string) bool {
	for _, e := range m.Elements {
		if e.Text == text {
			return true
		}
	}
	return false
}

func hasTextPart(m *elements.Map, part string) bool {
	for _, e := range m.Elements {
		if strings.Contains(e.Text, part) {
			return true
		}
	}
	return false
}
