package elements_test

import (
	"context"
	"fmt"
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

// desktop is a private X display with a session bus, the accessibility bus
// and the parts an Extractor needs.
type desktop struct {
	dpy     string
	session *atspitest.Session
	hub     *capture.Hub
	tree    *atspi.Client
	ocr     *ocr.Engine
	dev     *input.Device
}

func newDesktop(t testing.TB) *desktop {
	t.Helper()
	d := &desktop{dpy: testx.StartXvfb(t, xvfb.Options{})}
	d.session = atspitest.Start(t, d.dpy)
	hub, err := capture.NewHub(capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hub.Close() })
	d.hub = hub
	tree, err := atspi.Connect(context.Background(), atspi.Options{SessionBus: d.session.SessionBus})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tree.Close() })
	d.tree = tree
	eng, err := ocr.New(ocr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d.ocr = eng
	conn, err := display.Open(context.Background(), d.dpy, display.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	dev, err := input.New(conn, input.Area{W: int(conn.Screen.Width), H: int(conn.Screen.Height)}, input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	d.dev = dev
	return d
}

func (d *desktop) extractor(t testing.TB, withOCR bool) *elements.Extractor {
	t.Helper()
	o := elements.Options{Display: d.dpy, Capture: d.hub, Tree: d.tree, Input: d.dev}
	if withOCR {
		o.OCR = d.ocr
	}
	x, err := elements.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// zenity starts a zenity dialog and waits until its widgets are on the
// accessibility bus.
func (d *desktop) zenity(t testing.TB, args ...string) *atspitest.App {
	t.Helper()
	app := d.session.StartApp(t, "zenity", args...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := atspitest.WaitApp(ctx, d.tree, "zenity"); err != nil {
		t.Fatalf("%v; zenity stderr: %s", err, app.Stderr())
	}
	return app
}

func findEl(m *elements.Map, typ, text string) (*elements.Element, bool) {
	for i := range m.Elements {
		e := &m.Elements[i]
		if e.Type == typ && e.Text == text {
			return e, true
		}
	}
	return nil, false
}

func mustEl(t testing.TB, m *elements.Map, typ, text string) *elements.Element {
	t.Helper()
	e, ok := findEl(m, typ, text)
	if !ok {
		t.Fatalf("no %s %q in the map:\n%s", typ, text, m.Text())
	}
	return e
}

func describe(m *elements.Map) string {
	var b strings.Builder
	for _, e := range m.Elements {
		fmt.Fprintf(&b, "%s %s %q %v %s\n", e.ID, e.Type, e.Text, e.Box, e.Source)
	}
	return b.String()
}
