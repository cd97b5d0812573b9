package ocr_test

import (
	"image/png"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/acu-dev/acu/internal/ocr"
)

// TestReadMnemonicUnderlines reads pcmanfm's window with its context
// menu open on a file (a screenshot under Xvfb): GTK underlines one
// letter of each item faintly, touching its foot, and "Rename...",
// "Trash" and "View" must not come out "Bename...", "Jrash" and "Yiew",
// at the element maps' fixed scale nor at the judge's per-block one.
func TestReadMnemonicUnderlines(t *testing.T) {
	f, err := os.Open("testdata/pcmanfm-menu.png")
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, scale := range []int{3, 0} {
		res, err := newEngine(t, ocr.Options{Scale: scale}).Recognize(t.Context(), img)
		if err != nil {
			t.Fatal(err)
		}
		var words []string
		for _, w := range res.Words {
			words = append(words, w.Text)
		}
		for _, want := range []string{"Rename...", "Trash", "View"} {
			if !slices.Contains(words, want) {
				t.Errorf("scale %d: no word %q in %s", scale, want, strings.Join(words, " "))
			}
		}
	}
}
