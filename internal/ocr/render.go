package ocr

import (
	"image"
	"math"
	"slices"
)

// largeText is the block height from which a block is flattened again
// with flattenArea: its strokes are thick enough to hold flat runs of
// bgRun.
const largeText = 24

// largeBlocks joins two cuts of a page: small (the blocks of g, flattened
// with flatten) and the blocks of area (the same page flattened with
// flattenArea, whose large text is solid where flatten left it hollow and
// in pieces). A block of area at least largeText tall and no more than
// maxInk ink (a line of text, not a panel flatten could not part from its
// surroundings) replaces the small blocks it overlaps. It returns the
// blocks and which of them are large.
func largeBlocks(small []image.Rectangle, area gray) ([]image.Rectangle, []int) {
	var large, boxes []image.Rectangle
	for _, r := range segment(area) {
		if r.Dy() < largeText || r.Dy() > 400 {
			continue
		}
		ink := 0
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for _, v := range area.pix[y*area.w+r.Min.X : y*area.w+r.Max.X] {
				if v < inkLevel {
					ink++
				}
			}
		}
		if float64(ink) > maxInk*float64(r.Dx()*r.Dy()) {
			boxes = append(boxes, r)
			continue
		}
		// flatten's cut must see text of that size there too (the
		// outline of a hollow glyph is as tall as the glyph): a block
		// far taller than any of flatten's is a panel of small lines
		// flattenArea could not part from a busy background.
		tallest := 0
		for _, sm := range small {
			if sm.Overlaps(r) {
				tallest = max(tallest, sm.Dy())
			}
		}
		if tallest*2 >= r.Dy() {
			large = append(large, r)
		}
	}
	var out []image.Rectangle
	var big []int
	for _, r := range small {
		covered := false
		for _, l := range large {
			if r.Overlaps(l) {
				covered = true
				break
			}
		}
		if covered {
			continue
		}
		// Large text in a box of changing colour (a gradient) that
		// flattenArea took for ink: flatten's block, redrawn as large
		// text against the box on each row.
		kind := renderNone
		for _, b := range boxes {
			if r.Dy() < largeText || !r.In(b) || r.Dy()*10 < b.Dy()*9 || b.Dx() < r.Dx()+16 {
				continue
			}
			alone := true
			for _, o := range small {
				if o != r && o.Overlaps(b) {
					alone = false
					break
				}
			}
			if alone {
				// flatten blanked the long strokes at the text's ends
				// ("installed" lost the stem of its d): the box's
				// width, less its edges.
				kind, r = renderShaded, image.Rect(b.Min.X+4, r.Min.Y, b.Max.X-4, r.Max.Y)
				break
			}
		}
		out = append(out, r)
		big = append(big, kind)
	}
	for _, l := range large {
		out = append(out, l)
		big = append(big, renderLarge)
	}
	return out, big
}

// maxInk is the share of ink above which a block of flattenArea's cut is
// not taken as a line of text.
const maxInk = 0.55

// How render redraws a block.
const (
	renderNone  = iota
	renderLarge // large text: against the page just outside the block
	renderPanel // a coloured box or button holding text (edgesDiffer): against the box just inside its edges
	renderBand  // the rows of text inside such a box (inBox): against the box just inside the block's ends
	// renderShaded: large text alone in a box of changing colour (a
	// gradient) flattenArea took for ink: the box's width, against the
	// box at its ends (the median of 8 pixels) on each row.
	renderShaded
)

// edgesDiffer reports whether block r of orig (the page before flatten)
// is a box of its own colour rather than a line of text: along nearly all
// of its edges the pixel just inside differs from the one just outside.
// A line of text differs there only where a glyph touches its edge.
func edgesDiffer(orig gray, r image.Rectangle) bool {
	if r.Dx() < 16 || r.Dy() < 8 || r.Min.X < 1 || r.Min.Y < 1 || r.Max.X >= orig.w || r.Max.Y >= orig.h {
		return false
	}
	diff, n := 0, 0
	pair := func(x, y, ox, oy int) {
		n++
		if absDiff(orig.pix[y*orig.w+x], orig.pix[oy*orig.w+ox]) > 2*bgTol {
			diff++
		}
	}
	for x := r.Min.X + 2; x < r.Max.X-2; x++ { // the corners may be rounded
		pair(x, r.Min.Y, x, r.Min.Y-1)
		pair(x, r.Max.Y-1, x, r.Max.Y)
	}
	for y := r.Min.Y + 2; y < r.Max.Y-2; y++ {
		pair(r.Min.X, y, r.Min.X-1, y)
		pair(r.Max.X-1, y, r.Max.X, y)
	}
	return diff*10 >= n*9
}

// inBox reports whether block r of orig is the rows of text inside a box
// as wide as the block (the cut trimmed the box to its text): just above
// and below the block, nearly every column differs from the page just
// left and right of it (the same page on both sides).
func inBox(orig gray, r image.Rectangle) bool {
	if r.Dx() < 16 || r.Dy() < 8 || r.Min.X < 2 || r.Min.Y < 2 || r.Max.X+1 >= orig.w || r.Max.Y+1 >= orig.h {
		return false
	}
	var hist [256]int
	for y := r.Min.Y; y < r.Max.Y; y++ {
		hist[orig.pix[y*orig.w+r.Min.X-2]]++
	}
	page := 0
	for v, c := range hist {
		if c > hist[page] {
			page = v
		}
	}
	// The page on the right is the same (not the edge of the window).
	same := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		if absDiff(orig.pix[y*orig.w+r.Max.X+1], uint8(page)) <= 2*bgTol {
			same++
		}
	}
	if same*10 < r.Dy()*9 {
		return false
	}
	diff, n := 0, 0
	for x := r.Min.X + 2; x < r.Max.X-2; x++ {
		n++
		if absDiff(orig.pix[(r.Min.Y-2)*orig.w+x], uint8(page)) > 2*bgTol && absDiff(orig.pix[(r.Max.Y+1)*orig.w+x], uint8(page)) > 2*bgTol {
			diff++
		}
	}
	return diff*10 >= n*9
}

// render redraws blocks of g from orig (the page before flatten) as
// their contrast with their own background: on each row, the background
// runs from one end of the block to the other (so a gradient behind text
// is taken away), and a block mostly of ink (light text on a dark button)
// is turned over. A large block (kinds[i] renderLarge) takes its ends
// from the pixels just outside it; a panel (renderPanel, renderBand: a
// button or a coloured box) from the pixels just inside its edge, the
// box's own colour. Strokes come out whole whatever their
// width, and each block gets its own polarity.
func render(g, orig gray, rects []image.Rectangle, kinds []int) {
	for i, r := range rects {
		var m image.Rectangle
		switch kinds[i] {
		case renderLarge:
			m = r.Inset(-2).Intersect(image.Rect(0, 0, g.w, g.h))
		case renderShaded:
			if m = r; m.Dx() < 32 {
				continue
			}
		case renderPanel, renderBand:
			if m = r.Inset(2); m.Dx() < 8 || m.Dy() < 4 {
				continue
			}
		default:
			continue
		}
		dark := 0
		for y := r.Min.Y; y < r.Max.Y; y++ {
			row := orig.pix[y*orig.w : (y+1)*orig.w]
			l, rt := float64(row[m.Min.X]), float64(row[m.Max.X-1])
			if kinds[i] == renderShaded {
				// The median of the 8 pixels at each end: the box,
				// whatever a glyph touches.
				l, rt = medianRun(row, r.Min.X, r.Min.X+8), medianRun(row, r.Max.X-8, r.Max.X)
			}
			out := g.pix[y*g.w : (y+1)*g.w]
			for x := r.Min.X; x < r.Max.X; x++ {
				t := float64(x-m.Min.X) / float64(max(1, m.Dx()-1))
				bg := l + (rt-l)*t
				d := int(math.Abs(float64(row[x]) - bg))
				if kinds[i] == renderPanel {
					// Also against the box's top and bottom in this
					// column (a gradient of any shape across it): ink
					// differs from both.
					top, bot := float64(orig.pix[m.Min.Y*orig.w+x]), float64(orig.pix[(m.Max.Y-1)*orig.w+x])
					u := float64(y-m.Min.Y) / float64(max(1, m.Dy()-1))
					d = min(d, int(math.Abs(float64(row[x])-(top+(bot-top)*u))))
				}
				v := uint8(max(0, 255-max(0, d-bgTol)*3))
				out[x] = v
				if v < inkLevel {
					dark++
				}
			}
		}
		if dark*2 > r.Dx()*r.Dy() {
			for y := r.Min.Y; y < r.Max.Y; y++ {
				out := g.pix[y*g.w+r.Min.X : y*g.w+r.Max.X]
				for i, v := range out {
					out[i] = 255 - v
				}
			}
		}
	}
}

// medianRun is the median of row[a:b], or of row[a] when b <= a.
func medianRun(row []uint8, a, b int) float64 {
	if b <= a {
		return float64(row[min(a, len(row)-1)])
	}
	v := slices.Clone(row[a:b])
	slices.Sort(v)
	return float64(v[len(v)/2])
}
