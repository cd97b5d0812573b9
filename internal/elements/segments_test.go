package elements

import (
	"image"
	"testing"

	"github.com/acu-dev/acu/internal/ocr"
)

// TestMergeSplitsLabelsSideBySide: Tesseract reads two icon labels of a
// file view as one line ("draft.txt keep.txt"); a click at that element's
// centre would land between them. Words further apart than wideGap line
// heights are separate elements; words of one label stay together.
func TestMergeSplitsLabelsSideBySide(t *testing.T) {
	w := func(text string, x0, x1 int) ocr.Word {
		return ocr.Word{Text: text, Box: image.Rect(x0, 300, x1, 314), Conf: 90}
	}
	res := ocr.Result{
		Words: []ocr.Word{w("draft.txt", 528, 585), w("keep.txt", 623, 680), w("Open", 600, 632), w("With...", 636, 684)},
		Lines: []ocr.Line{
			{Text: "draft.txt keep.txt", Box: image.Rect(528, 300, 680, 314), Conf: 90, Words: []int{0, 1}},
			{Text: "Open With...", Box: image.Rect(600, 300, 684, 314), Conf: 90, Words: []int{2, 3}},
		},
	}
	els := Merge(nil, res, 0)
	var got []string
	for _, e := range els {
		got = append(got, e.Text)
	}
	want := []string{"draft.txt", "keep.txt", "Open With..."}
	if len(got) != len(want) {
		t.Fatalf("elements %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("elements %q, want %q", got, want)
		}
	}
	if b := els[0].Box; b != image.Rect(528, 300, 585, 314) {
		t.Errorf("draft.txt's box %v, want its own word's", b)
	}
}
