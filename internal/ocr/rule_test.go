package ocr

import "testing"

// TestFlattenLooksPastARule: a strip of a light window, narrower than a
// background run and broken up and down by its widgets, between the
// screen's edge and the 1-pixel black border of a window over it, is
// judged against the background beyond the border, not against the
// border: it is not ink. A dark glyph in the strip still is.
func TestFlattenLooksPastARule(t *testing.T) {
	g := gray{pix: make([]uint8, 100*100), w: 100, h: 100}
	for y := range g.h {
		for x := range g.w {
			v := uint8(255) // the window over it
			switch {
			case x < 20:
				v = 245 // the strip of the window below
				if y%20 == 10 {
					v = 185 // its widgets' edges, which break the runs down
				}
			case x == 20:
				v = 0 // the border
			}
			g.pix[y*g.w+x] = v
		}
	}
	g.pix[15*g.w+10] = 40 // a glyph's pixel in the strip
	flatten(g, new(scratch))
	if v := g.pix[5*g.w+10]; isInk(v) {
		t.Errorf("flatten: the strip beside a rule = %d, want no ink (>= %d)", v, inkLevel)
	}
	if v := g.pix[15*g.w+10]; !isInk(v) {
		t.Errorf("flatten: a glyph in the strip = %d, want ink (< %d)", v, inkLevel)
	}
}
