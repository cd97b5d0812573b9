package ocr_test

import (
	"context"
	"image"
	"image/color"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/ocr"
	"github.com/acu-dev/acu/internal/ocr/ocrtest"
)

func newEngine(t testing.TB, o ocr.Options) *ocr.Engine {
	t.Helper()
	e, err := ocr.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestNewMissingBinary(t *testing.T) {
	_, err := ocr.New(ocr.Options{Binary: "tesseract-not-installed-here"})
	if err == nil || !strings.Contains(err.Error(), "apt-get install tesseract-ocr tesseract-ocr-eng") {
		t.Fatalf("New(missing binary) error = %v, want one naming the apt-get install", err)
	}
}

func TestNewBadOptions(t *testing.T) {
	for _, o := range []ocr.Options{{Scale: 9}, {Invert: "sideways"}, {Threshold: "magic"}} {
		if _, err := ocr.New(o); err == nil {
			t.Errorf("New(%+v) = nil error, want one", o)
		}
	}
}

// TestRecognizeXterm reads text that xterm really drew under Xvfb, in a dark
// and a light theme side by side, and checks the words' boxes land inside the
// terminal that drew them.
func TestRecognizeXterm(t *testing.T) {
	d := ocrtest.StartXvfb(t, 800, 300)
	font := []string{"-fa", "DejaVu Sans Mono", "-fs", "10"}
	m1 := d.Xterm(t, "40x6+0+0", "white", "black", font, `printf 'make: building acu\nBuild succeeded\n'; touch "$ACU_MARK"`)
	m2 := d.Xterm(t, "40x6+400+150", "black", "white", nil, `printf 'Download complete\n'; touch "$ACU_MARK"`)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	d.WaitSettled(ctx, t, m1)
	f := d.WaitSettled(ctx, t, m2)

	e := newEngine(t, ocr.Options{})
	res, err := e.RecognizeFrame(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	text := res.Text()
	t.Logf("text:\n%s", text)
	for _, want := range []struct {
		word string
		in   image.Rectangle
	}{
		{"succeeded", image.Rect(0, 0, 400, 150)},
		{"complete", image.Rect(400, 150, 800, 300)},
	} {
		found := false
		for _, w := range res.Words {
			if strings.EqualFold(strings.Trim(w.Text, ".,"), want.word) {
				found = true
				if !w.Box.In(want.in) || w.Box.Dx() < 10 || w.Box.Dy() < 5 {
					t.Errorf("word %q box %v, want a box inside %v", w.Text, w.Box, want.in)
				}
				if !strings.Contains(res.Lines[w.Line].Text, w.Text) {
					t.Errorf("word %q line %q does not contain it", w.Text, res.Lines[w.Line].Text)
				}
			}
		}
		if !found {
			t.Errorf("RecognizeFrame found no %q in %q", want.word, text)
		}
	}

	// The same frame is answered from the cache.
	runs := e.Runs()
	if _, err := e.RecognizeFrame(ctx, f); err != nil {
		t.Fatal(err)
	}
	if e.Runs() != runs {
		t.Errorf("second RecognizeFrame of the same frame ran tesseract again (%d runs, want %d)", e.Runs(), runs)
	}

	// A window-like view of the frame (shared pixels, wider stride): boxes
	// are in the view's coordinates.
	view := f.Sub(image.Rect(400, 150, 800, 300), "crop")
	resView, err := e.RecognizeFrame(ctx, view)
	if err != nil {
		t.Fatal(err)
	}
	foundView := false
	for _, w := range resView.Words {
		if strings.EqualFold(w.Text, "complete") {
			foundView = true
			if !w.Box.In(image.Rect(0, 0, 400, 150)) {
				t.Errorf("RecognizeFrame(Sub) box %v, want one inside the view (0,0)-(400,150)", w.Box)
			}
		}
	}
	if !foundView {
		t.Errorf("RecognizeFrame(Sub) text %q lacks complete", resView.Text())
	}

	// Recognize on an image.Image sub-rectangle maps boxes to its coordinates.
	rgba := image.NewRGBA(image.Rect(400, 150, 800, 300))
	for y := 150; y < 300; y++ {
		for x := 400; x < 800; x++ {
			p := f.Pix[y*f.Stride+x*4:]
			rgba.SetRGBA(x, y, color.RGBA{p[2], p[1], p[0], 255})
		}
	}
	res2, err := e.Recognize(ctx, rgba)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range res2.Words {
		if strings.EqualFold(w.Text, "complete") {
			found = true
			if !w.Box.In(rgba.Bounds()) {
				t.Errorf("Recognize(sub-image) box %v outside %v", w.Box, rgba.Bounds())
			}
		}
	}
	if !found {
		t.Errorf("Recognize(sub-image) text %q lacks complete", res2.Text())
	}
}
