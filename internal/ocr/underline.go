package ocr

import "image"

// Mnemonic underlines.
//
// Menus and dialogs underline one letter of a label, the key that
// chooses it (GTK's "_Rename..."). GTK draws the line faint (a line
// under a pixel thick, at a fraction of a pixel: two rows at about 40%
// and 20% of the text's contrast) right under the letter's foot, which
// it touches. flatten gives every pixel three times its contrast, so the
// line comes out as black as a stroke and closes the letter at the
// bottom: pcmanfm's context menu read "Bename..." for "Rename...",
// "Jrash" for "Trash", its menu bar "Yiew" for "View". The line is no
// part of the text, so it is taken off the page before the blocks are
// stacked. Qt draws its mnemonic lines at full contrast a row or two
// below the letter, apart from it; they are left alone (Tesseract reads
// those labels).

// eraseUnderlines whitens, in each block of g, the mnemonic underlines
// (see underlines); orig is the page before flatten.
func eraseUnderlines(g, orig gray, rects []image.Rectangle) {
	for _, r := range rects {
		for _, u := range underlines(g, orig, r) {
			for y := u.Min.Y; y < u.Max.Y; y++ {
				row := g.pix[y*g.w : (y+1)*g.w]
				for x := u.Min.X; x < u.Max.X; x++ {
					row[x] = 255
				}
			}
		}
	}
}

// underlines finds the mnemonic underlines of block r of the flattened
// page g (orig before flatten). One is a bar of ink 3 pixels long or
// more and 2 rows thick or less (an eighth of the block's height for
// large text):
//   - the lowest ink of its columns, its ends touching nothing (the
//     bottom of an "o" is narrower than the row above it);
//   - under a glyph: ink above at least half of its columns (not an
//     underscore);
//   - faint: in orig, at most half the contrast with the block's
//     background of the glyph above it (a stroke's foot, a bitmap
//     font's serif, an "L" or a "2" is as dark as the rest of its glyph);
//   - below the baseline, with nothing but white between them. The
//     baseline is the lowest row holding, outside the faint bars, a
//     quarter of the ink of the inkiest row (descenders are thin), so a
//     menu bar's row of underlines does not make one.
func underlines(g, orig gray, r image.Rectangle) []image.Rectangle {
	h := r.Dy()
	if h < 8 || r.Dx() < 8 {
		return nil
	}
	const minLen = 3
	maxThick := max(2, h/8)
	ink := func(x, y int) bool { return isInk(g.pix[y*g.w+x]) }
	anyInk := func(a, b, y0, y1 int) bool { // ink in columns [a,b) of rows [y0,y1)
		for y := y0; y < y1; y++ {
			for x := a; x < b; x++ {
				if ink(x, y) {
					return true
				}
			}
		}
		return false
	}
	fullRow := func(a, b, y int) bool {
		for x := a; x < b; x++ {
			if !ink(x, y) {
				return false
			}
		}
		return true
	}
	bg := background(g, orig, r)
	contrast := func(a, b, y0, y1 int) int { // strongest, in orig
		c := 0
		for y := y0; y < y1; y++ {
			for _, v := range orig.pix[y*orig.w+a : y*orig.w+b] {
				c = max(c, absDiff(v, bg))
			}
		}
		return c
	}
	var bars []image.Rectangle
	for y := r.Max.Y - 1; y >= r.Min.Y+h/2; y-- {
		for x := r.Min.X; x < r.Max.X; {
			if !ink(x, y) {
				x++
				continue
			}
			a := x
			for x < r.Max.X && ink(x, y) {
				x++
			}
			b := x
			if b-a < minLen || anyInk(a, b, y+1, r.Max.Y) {
				continue
			}
			top := y
			for top > r.Min.Y && y-top+1 <= maxThick && fullRow(a, b, top-1) {
				top--
			}
			if y-top+1 > maxThick || top == r.Min.Y {
				continue // a stroke, not a line
			}
			// Its ends touch nothing beside them, and the row above does
			// not run on past them (a diagonal neighbour, the foot of the
			// next letter, is not joined to it).
			if (a > r.Min.X && (anyInk(a-1, a, top, y+1) || (ink(a-1, top-1) && ink(a, top-1)))) ||
				(b < r.Max.X && (anyInk(b, b+1, top, y+1) || (ink(b, top-1) && ink(b-1, top-1)))) {
				continue
			}
			above := 0
			for c := a; c < b; c++ {
				if anyInk(c, c+1, r.Min.Y, top) {
					above++
				}
			}
			if above*2 < b-a || contrast(a, b, top, y+1)*2 > contrast(a, b, r.Min.Y, top) {
				continue
			}
			bars = append(bars, image.Rect(a, top, b, y+1))
		}
	}
	if len(bars) == 0 {
		return nil
	}
	base := baseline(g, r, bars)
	out := bars[:0]
	for _, u := range bars {
		if u.Min.Y > base && u.Min.Y-base-1 <= maxThick && !anyInk(u.Min.X, u.Max.X, base+1, u.Min.Y) {
			out = append(out, u)
		}
	}
	return out
}

// baseline is the lowest row of block r whose ink outside bars is at
// least a quarter of the inkiest row's.
func baseline(g gray, r image.Rectangle, bars []image.Rectangle) int {
	counts := make([]int, r.Dy())
	peak := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := g.pix[y*g.w : (y+1)*g.w]
		n := 0
	px:
		for x := r.Min.X; x < r.Max.X; x++ {
			if !isInk(row[x]) {
				continue
			}
			for _, u := range bars {
				if image.Pt(x, y).In(u) {
					continue px
				}
			}
			n++
		}
		counts[y-r.Min.Y] = n
		peak = max(peak, n)
	}
	for i := len(counts) - 1; i >= 0; i-- {
		if counts[i]*4 >= peak && counts[i] > 0 {
			return r.Min.Y + i
		}
	}
	return r.Min.Y
}

// background is the commonest value in orig of the pixels of r that
// are not ink in g (a narrow glyph's block may hold more ink than
// background).
func background(g, orig gray, r image.Rectangle) uint8 {
	var hist [256]int
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if !isInk(g.pix[y*g.w+x]) {
				hist[orig.pix[y*orig.w+x]]++
			}
		}
	}
	m := 0
	for v, c := range hist {
		if c > hist[m] {
			m = v
		}
	}
	return uint8(m)
}
