package elements_test

import (
	"context"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/ocr"
	"github.com/acu-dev/acu/internal/wayland/frames"
	"github.com/acu-dev/acu/internal/wayland/virtual"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// TestWaylandElementMapInScreenPixels builds the element map of a headless
// sway showing a native Wayland form (GTK 3 with GDK_BACKEND=wayland, Qt 5
// with QT_QPA_PLATFORM=wayland) floated away from the screen's origin,
// through the Wayland capture hub, the accessibility bus and sway's window
// rectangles. The form's toolkit reports its widgets relative to its own
// window; the map must put them where they are on screen. Proved by
// pixels: OCR reads "Submit" inside the button's box, and clicks at the
// centres of the button and the entry, with typing between, make the
// application itself print what was typed.
func TestWaylandElementMapInScreenPixels(t *testing.T) {
	waylandtest.Need(t, "/usr/bin/python3")
	for _, tk := range []string{atspitest.GTK, atspitest.Qt} {
		t.Run(tk, func(t *testing.T) {
			if tk == atspitest.Qt {
				needQtWayland(t)
			}
			testWaylandForm(t, tk)
		})
	}
}

func testWaylandForm(t *testing.T, toolkit string) {
	c := waylandtest.Start(t, 1024, 640)
	title := "acu-wl-" + toolkit
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	// Floated away from the origin: sway places it, title bar included,
	// with its top left corner at 313,187.
	app := atspitest.StartWaylandForm(ctx, t, c, toolkit, title, image.Rect(313, 187, 913, 407))
	tree, win := app.Tree, app.Window
	t.Logf("sway: window %v, content %v", win.Rect, win.Content)

	hub := frames.New(frames.Options{})
	defer hub.Close()
	eng, err := ocr.New(ocr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := elements.New(elements.Options{Display: c.Socket(), Capture: hub, Tree: tree, OCR: eng,
		Windows: elements.SwayWindows(c.IPCSocket())})
	if err != nil {
		t.Fatal(err)
	}

	// The map is read until the button and the entry lie in the form's
	// window on screen: right after the move and resize the application
	// may still be laid out at its former size, and sway's tree settles a
	// moment after (its title bar is counted in the window's rect until
	// the move is committed). Without the placement they never do.
	var m *elements.Map
	var btn, entry *elements.Element
	mctx, mcancel := context.WithTimeout(ctx, 60*time.Second)
	defer mcancel()
	for {
		got, err := x.Extract(mctx)
		if err != nil && mctx.Err() == nil {
			t.Fatalf("Extract: %v", err)
		}
		if got != nil {
			m = got
		}
		b, okB := findEl(m, elements.TypeButton, "Submit")
		e, okE := findElType(m, elements.TypeInput, "Value")
		win = waylandtest.Window(ctx, t, c, title, nil)
		if okB && okE {
			btn, entry = b, e
			if btn.Box.In(win.Content) && entry.Box.In(win.Content) {
				break
			}
		}
		if mctx.Err() != nil {
			if btn != nil {
				t.Fatalf("Submit at %v, Value at %v: not inside the form's window on screen %v:\n%s", btn.Box, entry.Box, win.Content, describe(m))
			}
			t.Fatalf("no Submit button and Value entry in the map:\n%s\nform stderr: %s", describe(m), app.Stderr())
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("map of %s (sway content %v):\n%s", toolkit, win.Content, describe(m))
	// The button's label is on screen inside the box the map gives it.
	res, err := eng.RecognizeFrame(ctx, m.Frame.Sub(btn.Box, "button"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text(), "Submit") {
		t.Errorf("OCR of the button's box %v reads %q, want Submit", btn.Box, res.Text())
	}

	// Clicks at the elements' centres land on them: Submit (the empty
	// entry submits an empty line and the button takes the focus), then
	// the entry (the focus goes back to it, or the typing is lost), then
	// Submit again.
	d, err := virtual.Open(ctx, c.Socket(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	click := func(e *elements.Element) {
		p := e.Center()
		// The pointer enters the window first, as a person's does (Qt may
		// drop a press that comes with the pointer's entry).
		if err := d.Move(ctx, p.X, p.Y); err != nil {
			t.Fatalf("move to %s at %v: %v", e.ID, p, err)
		}
		if err := d.Click(ctx, p.X, p.Y, 1, 1); err != nil {
			t.Fatalf("click %s at %v: %v", e.ID, p, err)
		}
	}
	click(btn)
	waitOutput(ctx, t, app.App, []string{""}, btn)
	click(entry)
	const typed = "wayland-placed"
	if err := d.Type(ctx, typed); err != nil {
		t.Fatal(err)
	}
	click(btn)
	waitOutput(ctx, t, app.App, []string{"", typed}, entry)
}

// needQtWayland skips the test when Qt 5's Wayland platform plugin
// (Debian's qtwayland5, which scripts/install-deps.sh installs) is
// missing, or fails it when ACU_REQUIRE_WAYLAND=1.
func needQtWayland(t *testing.T) {
	t.Helper()
	if m, _ := filepath.Glob("/usr/lib/*/qt5/plugins/platforms/libqwayland-generic.so"); len(m) > 0 {
		return
	}
	const why = "Qt 5's Wayland platform plugin is not installed (package qtwayland5; scripts/install-deps.sh installs it)"
	if os.Getenv("ACU_REQUIRE_WAYLAND") == "1" {
		t.Fatal(why + ", and ACU_REQUIRE_WAYLAND=1 requires it")
	}
	t.Skip(why)
}

// waitOutput waits until the form printed want, line by line.
func waitOutput(ctx context.Context, t *testing.T, app *atspitest.App, want []string, last *elements.Element) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	wantOut := strings.Join(want, "\n") + "\n"
	for app.Stdout() != wantOut {
		if ctx.Err() != nil || !strings.HasPrefix(wantOut, app.Stdout()) {
			t.Fatalf("the form printed %q, want %q: the click at %v missed %s %v", app.Stdout(), wantOut, last.Center(), last.ID, last.Box)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func findElType(m *elements.Map, typ, text string) (*elements.Element, bool) {
	for i := range m.Elements {
		e := &m.Elements[i]
		if e.Type == typ && (e.Text == text || e.Desc == text) {
			return e, true
		}
	}
	return nil, false
}

// TestPlacementFailure: when the compositor's windows cannot be read (no
// sway IPC beside the socket), tree elements would be at wrong pixels, so
// the map holds OCR text only and says why in TreeErr; without OCR the
// extraction fails with that reason.
func TestPlacementFailure(t *testing.T) {
	d := newDesktop(t)
	d.zenity(t, "--question", "--title=Acu Placement", "--text=Placed?")
	noIPC := elements.SwayWindowsBeside(filepath.Join(t.TempDir(), "wayland-1"))
	x, err := elements.New(elements.Options{Display: d.dpy, Capture: d.hub, Tree: d.tree, OCR: d.ocr, Windows: noIPC})
	if err != nil {
		t.Fatal(err)
	}
	m, err := x.Extract(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if m.TreeErr == nil || !strings.Contains(m.TreeErr.Error(), "no sway IPC socket") {
		t.Errorf("TreeErr = %v, want the missing sway IPC socket", m.TreeErr)
	}
	for _, e := range m.Elements {
		if e.Source&elements.FromTree != 0 {
			t.Errorf("a tree element in a map whose windows could not be placed: %s", e.String())
		}
	}
	if !strings.Contains(m.Text(), "Placed?") {
		t.Errorf("no OCR text of the dialog:\n%s", m.Text())
	}
	x, err = elements.New(elements.Options{Display: d.dpy, Capture: d.hub, Tree: d.tree, Windows: noIPC})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Extract(t.Context()); err == nil || !strings.Contains(err.Error(), "no sway IPC socket") {
		t.Errorf("Extract without OCR: %v, want the missing sway IPC socket", err)
	}
}
