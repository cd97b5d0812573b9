package ocr_test

import (
	"context"
	"image"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/ocr"
	"github.com/acu-dev/acu/internal/ocr/ocrtest"
)

// TestRecognizeChanged reads a real xterm under Xvfb, then the page after
// one more line appeared: only a strip around the changed rows is read (one
// Tesseract run over a fraction of the page), the new words are found with
// boxes in the page's coordinates, the unchanged lines are kept, and the
// text agrees with a whole-page read. An unchanged page reads nothing.
func TestRecognizeChanged(t *testing.T) {
	d := ocrtest.StartXvfb(t, 1024, 600)
	font := []string{"-fa", "DejaVu Sans Mono", "-fs", "12"}
	m := d.Xterm(t, "70x20+20+20", "black", "white", font,
		`printf 'alpha build started\nbravo compiling sources\ncharlie linking binary\n'; touch "$ACU_MARK"; sleep 2; printf 'delta Export finished\n'; touch "$ACU_MARK.2"; exec sleep 600`)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	f1 := d.WaitSettled(ctx, t, m)
	e := newEngine(t, ocr.Options{})
	r1, snap, st1, err := e.RecognizeChanged(ctx, f1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !st1.Full || !strings.Contains(r1.Text(), "compiling") {
		t.Fatalf("first page: %+v %q, want a whole read with the text", st1, r1.Text())
	}
	f2 := d.WaitSettled(ctx, t, m+".2")
	runs := e.Runs()
	r2, snap2, st2, err := e.RecognizeChanged(ctx, f2, snap)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after a new line: %+v\n%s", st2, r2.Text())
	if st2.Full || st2.Strips != 1 || e.Runs()-runs != 1 || st2.RowsRead*3 > f2.H {
		t.Errorf("after one new line: %+v, %d Tesseract runs; want one strip of under a third of the %d rows", st2, e.Runs()-runs, f2.H)
	}
	var found bool
	for _, w := range r2.Words {
		if w.Text == "finished" {
			found = true
			if w.Box.Min.Y < 60 || !w.Box.In(image.Rect(0, 0, 1024, 600)) || !strings.Contains(r2.Lines[w.Line].Text, "Export") {
				t.Errorf("word %q box %v line %q: want below the first lines, on its line", w.Text, w.Box, r2.Lines[w.Line].Text)
			}
		}
	}
	if !found {
		t.Errorf("no \"finished\" in %q", r2.Text())
	}
	whole, err := e.RecognizeFrame(ctx, f2)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"alpha", "compiling", "binary", "Export", "finished"} {
		if strings.Contains(whole.Text(), w) != strings.Contains(r2.Text(), w) {
			t.Errorf("%q: whole page %v, changed read %v", w, strings.Contains(whole.Text(), w), strings.Contains(r2.Text(), w))
		}
	}
	runs = e.Runs()
	if _, _, st3, err := e.RecognizeChanged(ctx, f2, snap2); err != nil || st3.RowsRead != 0 || e.Runs() != runs {
		t.Errorf("unchanged page: %+v, %v, %d runs; want nothing read", st3, err, e.Runs()-runs)
	}
}

// TestRecognizeChangedStripAtTop: a line appears under the first of an
// xterm in the screen's top-left corner, so the strip read starts at row
// 0 and is shorter than the window's border: the border must not be taken
// for ink beside the text (it was: "Build DONE" read as "Buil").
func TestRecognizeChangedStripAtTop(t *testing.T) {
	d := ocrtest.StartXvfb(t, 1024, 600)
	font := []string{"-fa", "Monospace", "-fs", "18", "-bw", "1"} // the border testx's xterms have
	m := d.Xterm(t, "50x6+0+0", "black", "white", font,
		`echo Building; touch "$ACU_MARK"; sleep 2; echo Build DONE; touch "$ACU_MARK.2"; exec sleep 600`)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	f1 := d.WaitSettled(ctx, t, m)
	e := newEngine(t, ocr.Options{})
	_, snap, _, err := e.RecognizeChanged(ctx, f1, nil)
	if err != nil {
		t.Fatal(err)
	}
	f2 := d.WaitSettled(ctx, t, m+".2")
	r, _, st, err := e.RecognizeChanged(ctx, f2, snap)
	if err != nil {
		t.Fatal(err)
	}
	if st.Full || !strings.Contains(r.Text(), "Build DONE") || !strings.Contains(r.Text(), "Building") {
		t.Errorf("after a line under the top one: %+v %q, want a strip read with \"Building\" and \"Build DONE\"", st, r.Text())
	}
}
