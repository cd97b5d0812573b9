package elements_test

import (
	"strings"
	"testing"

	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/testx"
)

// An xterm has no accessibility tree: its text reaches the map through
// OCR, next to the zenity dialog's tree elements with their labels merged.
func TestMapMergesOCR(t *testing.T) {
	d := newDesktop(t)
	testx.StartXterm(t, d.dpy, testx.XtermSpec{
		Title:    "acu-ocr",
		Geometry: "60x6+0+0",
		Args:     []string{"-fa", "Monospace", "-fs", "16"},
		Command:  []string{"sh", "-c", "echo Quarterly report ready; exec sleep 600"},
	})
	d.zenity(t, "--question", "--title=Acu Question", "--text=Delete the file?")
	x := d.extractor(t, true)
	m, err := x.Extract(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("map:\n%s", m.Text())
	var ocrLine *elements.Element
	for i := range m.Elements {
		e := &m.Elements[i]
		if e.Source == elements.FromOCR && strings.Contains(strings.ToLower(e.Text), "quarterly report") {
			ocrLine = e
		}
		if e.Source == elements.FromOCR && (e.Text == "Yes" || e.Text == "No" || strings.Contains(e.Text, "Delete the")) {
			t.Errorf("OCR text duplicates a tree element: %s", e.String())
		}
	}
	if ocrLine == nil {
		t.Fatalf("no OCR element for the xterm's text:\n%s", m.Text())
	}
	if ocrLine.Type != elements.TypeText || ocrLine.ID != "ocr_quarterly_report" {
		t.Errorf("OCR element %s: want type text and id ocr_quarterly_report", ocrLine.String())
	}
	if ocrLine.Box.Min.X > 40 || ocrLine.Box.Min.Y > 60 || ocrLine.Box.Dy() < 10 {
		t.Errorf("OCR box %v: want the xterm's first line at the top left", ocrLine.Box)
	}
	for _, name := range []string{"Yes", "No"} {
		if e := mustEl(t, m, elements.TypeButton, name); e.Source != elements.FromBoth {
			t.Errorf("button %s source %s, want tree+ocr", name, e.Source)
		}
	}
	// The same screen again: the same ids, no diff.
	m2, err := x.Extract(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := elements.Compare(m, m2); !diff.Empty() {
		t.Errorf("second map of the same screen differs:\n%s", diff)
	}
}
