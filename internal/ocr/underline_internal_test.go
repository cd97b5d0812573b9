package ocr

import (
	"image"
	"testing"
)

// TestUnderlines: a faint line under a letter's foot, below the other
// letters' baseline, is a mnemonic underline; the same line at the text's
// contrast (a serif, a bitmap font's foot, Qt's line) or under no letter
// (an underscore) is not.
func TestUnderlines(t *testing.T) {
	const bg = 218
	page := func(line uint8, lineX0 int) (g, orig gray) {
		orig = gray{pix: make([]uint8, 60*24), w: 60, h: 24}
		for i := range orig.pix {
			orig.pix[i] = bg
		}
		set := func(x0, y0, x1, y1 int, v uint8) {
			for y := y0; y < y1; y++ {
				for x := x0; x < x1; x++ {
					orig.pix[y*orig.w+x] = v
				}
			}
		}
		// An "L" and an "n" on a baseline at row 15 (the last row of ink).
		set(10, 6, 12, 16, 0)
		set(12, 14, 17, 16, 0)
		set(20, 9, 22, 16, 0)
		set(22, 9, 26, 11, 0)
		set(26, 9, 28, 16, 0)
		// The line: two rows under the baseline, 131 and 174 as GTK draws it.
		set(lineX0, 16, lineX0+8, 17, line)
		set(lineX0, 17, lineX0+8, 18, line+(bg-line)/2)
		g = gray{pix: append([]uint8(nil), orig.pix...), w: orig.w, h: orig.h}
		flatten(g, new(scratch))
		return g, orig
	}
	for _, tc := range []struct {
		name   string
		line   uint8
		lineX0 int
		want   []image.Rectangle
	}{
		{"faint under a letter", 131, 9, []image.Rectangle{image.Rect(9, 16, 17, 18)}},
		{"dark under a letter", 0, 9, nil},
		{"faint under nothing", 131, 34, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, orig := page(tc.line, tc.lineX0)
			r := trim(g, image.Rect(0, 0, g.w, g.h))
			got := underlines(g, orig, r)
			if len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
				t.Errorf("underlines(%v) = %v, want %v", r, got, tc.want)
			}
		})
	}
}
