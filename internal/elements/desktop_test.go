package elements_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/input"
	"github.com/acu-dev/acu/internal/ocr"
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
	base    *atspitest.Desktop
}

func newDesktop(t testing.TB) *desktop {
	t.Helper()
	b := atspitest.NewDesktop(t)
	eng, err := ocr.New(ocr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &desktop{dpy: b.Display, session: b.Session, hub: b.Hub, tree: b.Tree, ocr: eng, dev: b.Input, base: b}
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
	return d.base.Zenity(t, args...)
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
