package ocr

import (
	"image"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// Text regions and their scale.
//
// After flatten the page is dark ink on white. It is cut into blocks
// (recursive cuts along empty rows and wide empty columns, then along the
// faint rows between touching text lines), each block's text height is
// measured, and every block is resampled so its lines are about targetLine
// pixels tall: 8 pt terminal text is enlarged 3x, a 96 pt heading shrunk.
// The blocks are stacked on one page for a single Tesseract run (a process
// per block would cost its start-up each time), and the words read are
// mapped back to the frame through their block.

const (
	inkLevel   = 200 // flattened value below which a pixel is ink
	targetLine = 40  // block line height Tesseract reads best, in pixels
	maxScale   = 3
	blockGap   = 20 // white rows between stacked blocks: half a line (at 12 Tesseract read xterm's 16 px "CHARLIE" as "CHARLTE")
	// minConfRead is the word confidence above which a block counts as read.
	minConfRead = 50
)

// prepare turns the grayscale page g (overwritten) into the page given to
// Tesseract: flattened, cut into blocks, large text redrawn solid, GTK's
// mnemonic underlines taken off (underline.go), every block resampled to
// its scale (fixed when not 0) and stacked. It returns nil blocks when
// there is no ink at all.
func prepare(g gray, sz sizing, sc *scratch) (gray, []block) {
	orig := gray{pix: grow(&sc.orig2, len(g.pix)), w: g.w, h: g.h}
	copy(orig.pix, g.pix)
	flatten(g, sc)
	rects := segment(g)
	if len(rects) == 0 {
		return g, nil
	}
	// The same page flattened for large text, in the buffers flatten is
	// done with.
	area := gray{pix: grow(&sc.area, len(orig.pix)), w: orig.w, h: orig.h, up: g.up, down: g.down, left: g.left, right: g.right}
	copy(area.pix, orig.pix)
	flattenArea(area, sc)
	rects, large := largeBlocks(rects, area)
	kinds := make([]int, len(rects))
	for i, r := range rects {
		switch {
		case edgesDiffer(orig, r):
			kinds[i] = renderPanel
		case inBox(orig, r):
			kinds[i] = renderBand
		case large[i] != renderNone:
			kinds[i] = large[i]
		}
	}
	render(g, orig, rects, kinds)
	eraseUnderlines(g, orig, rects)
	st, blocks := stack(g, rects, sz, sc.crop)
	sc.crop = st.pix
	return st, blocks
}

// block is one text region: src in the page, dst in the stacked image.
type block struct {
	src   image.Rectangle
	dst   image.Rectangle
	scale float64
}

// segment cuts g's ink into blocks of text of one height.
func segment(g gray) []image.Rectangle { return segmentIn(g, image.Rect(0, 0, g.w, g.h)) }

// segmentIn cuts the ink of g within area into blocks.
func segmentIn(g gray, area image.Rectangle) []image.Rectangle {
	var out []image.Rectangle
	var cut func(r image.Rectangle, depth int)
	cut = func(r image.Rectangle, depth int) {
		r = trim(g, r)
		if r.Empty() {
			return
		}
		if depth > 8 {
			out = append(out, r)
			return
		}
		if parts := splitRows(g, r); len(parts) > 1 {
			for _, p := range parts {
				cut(p, depth+1)
			}
			return
		}
		if parts := splitCols(g, r); len(parts) > 1 {
			for _, p := range parts {
				cut(p, depth+1)
			}
			return
		}
		if parts := splitValleys(g, r); len(parts) > 1 {
			for _, p := range parts {
				cut(p, depth+1)
			}
			return
		}
		if rest, ok := withoutRules(g, r); ok {
			cut(rest, depth+1)
			return
		}
		if parts, ok := betweenRules(g, r); ok {
			for _, p := range parts {
				cut(p, depth+1)
			}
			return
		}
		out = append(out, r)
	}
	cut(area, 0)
	// Specks and rules: too small or too thin to hold text.
	kept := out[:0]
	for _, r := range out {
		if r.Dx() < 3 || r.Dy() < 5 || r.Dx()*r.Dy() < 30 {
			continue
		}
		kept = append(kept, r)
	}
	return kept
}

func isInk(v uint8) bool { return v < inkLevel }

// trim shrinks r to its ink.
func trim(g gray, r image.Rectangle) image.Rectangle {
	x0, y0, x1, y1 := r.Max.X, r.Max.Y, r.Min.X-1, r.Min.Y-1
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := g.pix[y*g.w : (y+1)*g.w]
		for x := r.Min.X; x < r.Max.X; x++ {
			if isInk(row[x]) {
				x0, x1 = min(x0, x), max(x1, x)
				y0, y1 = min(y0, y), max(y1, y)
			}
		}
	}
	if x1 < x0 {
		return image.Rectangle{}
	}
	return image.Rect(x0, y0, x1+1, y1+1)
}

// splitRows cuts r at rows without ink.
func splitRows(g gray, r image.Rectangle) []image.Rectangle {
	var parts []image.Rectangle
	start := -1
	for y := r.Min.Y; y <= r.Max.Y; y++ {
		ink := false
		if y < r.Max.Y {
			row := g.pix[y*g.w : (y+1)*g.w]
			for x := r.Min.X; x < r.Max.X; x++ {
				if isInk(row[x]) {
					ink = true
					break
				}
			}
		}
		switch {
		case ink && start < 0:
			start = y
		case !ink && start >= 0:
			parts = append(parts, image.Rect(r.Min.X, start, r.Max.X, y))
			start = -1
		}
	}
	return parts
}

// splitCols cuts r at runs of empty columns wider than the gap between
// words of its height (so a line is kept whole and side-by-side regions
// are parted).
func splitCols(g gray, r image.Rectangle) []image.Rectangle {
	minGap := max(12, r.Dy()*3/2)
	var parts []image.Rectangle
	start, gap := -1, 0
	for x := r.Min.X; x <= r.Max.X; x++ {
		ink := false
		if x < r.Max.X {
			for y := r.Min.Y; y < r.Max.Y; y++ {
				if isInk(g.pix[y*g.w+x]) {
					ink = true
					break
				}
			}
		}
		if ink {
			if start < 0 {
				start = x
			}
			gap = 0
			continue
		}
		gap++
		if start >= 0 && (gap >= minGap || x == r.Max.X) {
			parts = append(parts, image.Rect(start, r.Min.Y, x-gap+1, r.Max.Y))
			start = -1
		}
	}
	return parts
}

// splitValleys cuts a block of several lines at its faintest rows: lines
// of text whose descenders and ascenders touch leave no empty row, but the
// rows between them hold far less ink than the lines. A cut is a row of at
// most an eighth of the peak's ink that is the faintest within three rows;
// the cuts are taken only when they part the block into lines of like
// height (none under half the tallest), so one line of large text, whose
// ascenders or descenders alone make faint rows, stays whole.
func splitValleys(g gray, r image.Rectangle) []image.Rectangle {
	if parts := lineCuts(g, r); parts != nil {
		return parts
	}
	// An icon beside a label of several lines fills the rows between
	// them: part it off when the rest is lines.
	if icon, rest, ok := leadingIcon(g, r); ok {
		if parts := splitRows(g, trim(g, rest)); len(parts) > 1 && likeHeights(parts) {
			return append([]image.Rectangle{icon}, parts...)
		}
		if parts := lineCuts(g, rest); parts != nil {
			return append([]image.Rectangle{icon}, parts...)
		}
	}
	return nil
}

// withoutRules returns r without the thin vertical rules at its left and
// right ends (a tab's or a frame's border, 1-3 pixels wide, down at least
// 80% of r, 3 empty columns from the rest), when what is left is shorter
// than r or falls apart in rows: a border that held lines of small text
// in one tall block (FeatherPad's tab, 31 pixels high around its 10 pt
// label, was scaled as one 31-pixel line and not read). A line ending in
// a "|" or an "l" keeps it: without it the line is as tall as before.
func withoutRules(g gray, r image.Rectangle) (image.Rectangle, bool) {
	if r.Dy() < 12 || r.Dx() < 16 {
		return r, false
	}
	inkCol := func(x int) int {
		n := 0
		for y := r.Min.Y; y < r.Max.Y; y++ {
			if isInk(g.pix[y*g.w+x]) {
				n++
			}
		}
		return n
	}
	// rule reports how far from the edge at x (stepping by dx) a rule and
	// its gap reach, or 0 for no rule.
	rule := func(x, dx int) int {
		w := 0
		rows := make([]bool, r.Dy())
		for ; w < 4 && inkCol(x+w*dx) > 0; w++ {
			for y := r.Min.Y; y < r.Max.Y; y++ {
				if isInk(g.pix[y*g.w+x+w*dx]) {
					rows[y-r.Min.Y] = true
				}
			}
		}
		if w == 0 || w > 3 {
			return 0
		}
		covered := 0
		for _, c := range rows {
			if c {
				covered++
			}
		}
		if covered*5 < r.Dy()*4 {
			return 0
		}
		for k := range 3 {
			if xx := x + (w+k)*dx; xx < r.Min.X || xx >= r.Max.X || inkCol(xx) > 0 {
				return 0
			}
		}
		return w + 3
	}
	rest := r
	if n := rule(r.Min.X, 1); n > 0 {
		rest.Min.X += n
	}
	if n := rule(r.Max.X-1, -1); n > 0 {
		rest.Max.X -= n
	}
	if rest == r {
		return r, false
	}
	rest = trim(g, rest)
	if rest.Empty() || (rest.Dy()*4 > r.Dy()*3 && len(splitRows(g, rest)) < 2) {
		return r, false
	}
	return rest, true
}

// betweenRules parts r at thin vertical rules anywhere in it (a 1-pixel
// line with its rounded corners, at most 4 columns of ink in all, down 95%
// of r or more, 3 empty columns on either side or r's end) when what lies
// between them is lines of at most two thirds of the rules' height: a row
// of buttons, each framed by its edges, whose small labels the frames held
// in one block as tall as the buttons (galculator's "C", "AC" and "<-" at
// 1x: 9-pixel labels in a 34-pixel block, scaled as one 34-pixel line and
// left unread, which kept every "gone" on its screens from being
// confirmed). A glyph is not taken for a rule: an "l", a "1" or a "[" in a
// line either falls short of its descenders or is not half as tall again
// as the letters beside it.
func betweenRules(g gray, r image.Rectangle) ([]image.Rectangle, bool) {
	if r.Dy() < 16 || r.Dx() < 16 {
		return nil, false
	}
	cols := make([]bool, r.Dx()) // column holds ink
	for x := r.Min.X; x < r.Max.X; x++ {
		for y := r.Min.Y; y < r.Max.Y; y++ {
			if isInk(g.pix[y*g.w+x]) {
				cols[x-r.Min.X] = true
				break
			}
		}
	}
	covered := func(a, b int) bool { // columns [a,b) cover 95% of the rows
		n := 0
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := a; x < b; x++ {
				if isInk(g.pix[y*g.w+x]) {
					n++
					break
				}
			}
		}
		return n*20 >= r.Dy()*19
	}
	empty := func(a, b int) bool { // columns [a,b) clear, or beyond r
		for x := max(a, r.Min.X); x < min(b, r.Max.X); x++ {
			if cols[x-r.Min.X] {
				return false
			}
		}
		return true
	}
	var parts []image.Rectangle
	start, rules := r.Min.X, 0
	for x := r.Min.X; x < r.Max.X; {
		if !cols[x-r.Min.X] {
			x++
			continue
		}
		end := x
		for end < r.Max.X && cols[end-r.Min.X] {
			end++
		}
		if end-x <= 4 && covered(x, end) && empty(x-3, x) && empty(end, end+3) {
			if x > start {
				parts = append(parts, image.Rect(start, r.Min.Y, x, r.Max.Y))
			}
			start = end
			rules++
		}
		x = end
	}
	if rules == 0 {
		return nil, false
	}
	if start < r.Max.X {
		parts = append(parts, image.Rect(start, r.Min.Y, r.Max.X, r.Max.Y))
	}
	kept := parts[:0]
	for _, p := range parts {
		p = trim(g, p)
		if p.Empty() {
			continue
		}
		for _, l := range splitRows(g, p) {
			if 3*l.Dy() > 2*r.Dy() {
				return nil, false
			}
		}
		kept = append(kept, p)
	}
	return kept, true
}

// leadingIcon splits off r's first column of ink when it is narrow (at
// most 112 pixels, a 48-pixel icon at 2x with its glow, and r's height) and followed by 12 empty columns,
// the icon and the gap within its width and 12 more.
func leadingIcon(g gray, r image.Rectangle) (icon, rest image.Rectangle, ok bool) {
	limit := min(112, r.Dy())
	end, gap := -1, 0
	for x := r.Min.X; x < r.Max.X && x-r.Min.X <= limit+12; x++ {
		ink := false
		for y := r.Min.Y; y < r.Max.Y; y++ {
			if isInk(g.pix[y*g.w+x]) {
				ink = true
				break
			}
		}
		if ink {
			if gap >= 12 && end >= 0 {
				return image.Rect(r.Min.X, r.Min.Y, end, r.Max.Y), image.Rect(x, r.Min.Y, r.Max.X, r.Max.Y), true
			}
			end, gap = x+1, 0
			if end-r.Min.X > limit {
				return
			}
			continue
		}
		gap++
	}
	return
}

// likeHeights reports whether no part is under half the tallest's height
// (lines of one label, not a button's rounded corners above and below its
// text).
func likeHeights(parts []image.Rectangle) bool {
	lo, hi := parts[0].Dy(), 0
	for _, p := range parts {
		lo, hi = min(lo, p.Dy()), max(hi, p.Dy())
	}
	return lo*2 >= hi
}

// lineCuts parts r into lines of like height at its faintest rows, or
// returns nil.
func lineCuts(g gray, r image.Rectangle) []image.Rectangle {
	if r.Dy() < 20 {
		return nil
	}
	counts := make([]int, r.Dy())
	peak := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := g.pix[y*g.w : (y+1)*g.w]
		n := 0
		for x := r.Min.X; x < r.Max.X; x++ {
			if isInk(row[x]) {
				n++
			}
		}
		counts[y-r.Min.Y] = n
		peak = max(peak, n)
	}
	var cuts []int
	for i, n := range counts {
		if n > peak/8 || i < 8 || len(counts)-i < 8 {
			continue
		}
		low := true
		for k := max(0, i-3); k < min(len(counts), i+4); k++ {
			if counts[k] < n || (counts[k] == n && k < i) {
				low = false
				break
			}
		}
		if low && (len(cuts) == 0 || i-cuts[len(cuts)-1] >= 8) {
			cuts = append(cuts, i)
		}
	}
	if len(cuts) == 0 {
		return nil
	}
	edges := append(append([]int{0}, cuts...), len(counts))
	lo, hi := len(counts), 0
	for i := 1; i < len(edges); i++ {
		h := edges[i] - edges[i-1]
		lo, hi = min(lo, h), max(hi, h)
	}
	if lo*2 < hi {
		return nil
	}
	var parts []image.Rectangle
	start := r.Min.Y
	for _, c := range cuts {
		parts = append(parts, image.Rect(r.Min.X, start, r.Max.X, r.Min.Y+c))
		start = r.Min.Y + c + 1
	}
	return append(parts, image.Rect(r.Min.X, start, r.Max.X, r.Max.Y))
}

// sizing is how blocks are resampled: to a fixed factor (1..8), or to
// lines of about targetLine pixels; second is the sizing of a second
// reading (Engine.Reread), lines of about secondLine pixels up to
// secondMaxScale, so Tesseract sees other pixels than the first time;
// psm, when set, is the segmentation mode Tesseract reads them with.
type sizing struct {
	fixed  int
	second bool
	psm    int  // Tesseract's page segmentation mode, 0 for the engine's
	glyphs bool // read as hOCR with the characters weighed at each place (Word.Glyphs)
}

const (
	secondLine     = 56
	secondMaxScale = 4
)

// blockScale is the resampling factor that brings a block's lines to
// about targetLine pixels: a whole factor when enlarging (sharp), any
// factor when shrinking.
func blockScale(h int, sz sizing) float64 {
	if sz.fixed > 0 {
		return float64(sz.fixed)
	}
	target, most := float64(targetLine), float64(maxScale)
	if sz.second {
		target, most = secondLine, secondMaxScale
	}
	s := target / float64(max(h, 1))
	if s >= 1 {
		return math.Min(math.Round(s), most)
	}
	return math.Max(s, 0.2)
}

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

// stack resamples each block by its scale and stacks them, left-aligned,
// on one white page; it returns the page and the blocks with dst set.
func stack(g gray, rects []image.Rectangle, sz sizing, buf []uint8) (gray, []block) {
	bs := make([]block, len(rects))
	w, h := 0, blockGap
	for i, r := range rects {
		s := blockScale(r.Dy(), sz)
		dw, dh := max(1, int(math.Round(float64(r.Dx())*s))), max(1, int(math.Round(float64(r.Dy())*s)))
		pad := max(8, int(float64(targetLine)/4))
		bs[i] = block{src: r, scale: s, dst: image.Rect(pad, h, pad+dw, h+dh)}
		w = max(w, dw+2*pad)
		h += dh + blockGap
	}
	out := gray{pix: grow(&buf, w*h), w: w, h: h}
	for i := range out.pix {
		out.pix[i] = 255
	}
	for _, b := range bs {
		resample(g, b.src, out, b.dst)
	}
	return out, bs
}

// resample draws src of g into dst of out: bilinear when enlarging, the
// mean of the covered pixels when shrinking.
func resample(g gray, src image.Rectangle, out gray, dst image.Rectangle) {
	sx := float64(src.Dx()) / float64(dst.Dx())
	sy := float64(src.Dy()) / float64(dst.Dy())
	for Y := dst.Min.Y; Y < dst.Max.Y; Y++ {
		o := out.pix[Y*out.w : (Y+1)*out.w]
		fy0 := float64(Y-dst.Min.Y) * sy
		for X := dst.Min.X; X < dst.Max.X; X++ {
			fx0 := float64(X-dst.Min.X) * sx
			if sx > 1 || sy > 1 {
				// Box filter over the source pixels this one covers.
				x0, y0 := src.Min.X+int(fx0), src.Min.Y+int(fy0)
				x1 := min(src.Max.X, src.Min.X+int(math.Ceil(fx0+sx)))
				y1 := min(src.Max.Y, src.Min.Y+int(math.Ceil(fy0+sy)))
				sum, n := 0, 0
				for y := y0; y < max(y1, y0+1); y++ {
					row := g.pix[y*g.w:]
					for x := x0; x < max(x1, x0+1); x++ {
						sum += int(row[x])
						n++
					}
				}
				o[X] = uint8(sum / n)
				continue
			}
			// Bilinear, sampling at pixel centres.
			fx := (float64(X-dst.Min.X)+0.5)*sx - 0.5
			fy := (float64(Y-dst.Min.Y)+0.5)*sy - 0.5
			fx, fy = math.Max(fx, 0), math.Max(fy, 0)
			ix, iy := int(fx), int(fy)
			ax, ay := fx-float64(ix), fy-float64(iy)
			x0, y0 := src.Min.X+ix, src.Min.Y+iy
			x1, y1 := min(x0+1, src.Max.X-1), min(y0+1, src.Max.Y-1)
			x0, y0 = min(x0, src.Max.X-1), min(y0, src.Max.Y-1)
			p := func(x, y int) float64 { return float64(g.pix[y*g.w+x]) }
			v := (p(x0, y0)*(1-ax)+p(x1, y0)*ax)*(1-ay) + (p(x0, y1)*(1-ax)+p(x1, y1)*ax)*ay
			o[X] = uint8(v + 0.5)
		}
	}
}

// mapBack moves words read on the stacked page to the frame (through the
// block each lies in, offset by origin), rebuilds lines in reading order
// and lists the blocks of which less than a third was read with
// confidence (words of two letters or digits at least: a stray "=" read
// off an icon does not make its block read).
func mapBack(r Result, bs []block, origin image.Point) Result {
	var words []Word
	read := make([]int, len(bs)) // confidently read width per block, in src pixels
	for _, w := range r.Words {
		c := image.Pt((w.Box.Min.X+w.Box.Max.X)/2, (w.Box.Min.Y+w.Box.Max.Y)/2)
		bi := -1
		for i, b := range bs {
			if c.In(b.dst.Inset(-blockGap / 2)) {
				bi = i
				break
			}
		}
		if bi < 0 {
			continue
		}
		b := bs[bi]
		m := func(p image.Point) image.Point {
			return image.Pt(
				b.src.Min.X+int(math.Round(float64(p.X-b.dst.Min.X)/b.scale)),
				b.src.Min.Y+int(math.Round(float64(p.Y-b.dst.Min.Y)/b.scale)))
		}
		w.Box = image.Rectangle{Min: m(w.Box.Min), Max: m(w.Box.Max)}.Intersect(b.src.Inset(-2))
		if w.Conf >= minConfRead && alnum(w.Text) >= 2 {
			read[bi] += w.Box.Dx()
		}
		w.Box = w.Box.Add(origin)
		w.Glyphs = slices.Clone(w.Glyphs)
		for i, g := range w.Glyphs {
			if !g.Box.Empty() {
				w.Glyphs[i].Box = image.Rectangle{Min: m(g.Box.Min), Max: m(g.Box.Max)}.Add(origin)
			}
		}
		words = append(words, w)
	}
	out := relines(words)
	for i, b := range bs {
		if read[i]*3 < b.src.Dx() {
			out.Unread = append(out.Unread, b.src.Add(origin))
		}
	}
	return out
}

// relines groups words into lines: taken left to right, a word joins the
// line whose last word it overlaps vertically by half the smaller height
// and follows closely (within three line heights: not a column beside
// it); lines are ordered top to bottom, then left to right.
func relines(words []Word) Result {
	sort.SliceStable(words, func(i, j int) bool {
		if words[i].Box.Min.X != words[j].Box.Min.X {
			return words[i].Box.Min.X < words[j].Box.Min.X
		}
		return words[i].Box.Min.Y < words[j].Box.Min.Y
	})
	type line struct {
		box   image.Rectangle
		words []Word
	}
	var lines []*line
	for _, w := range words {
		var best *line
		bestGap := 0
		for _, l := range lines {
			last := l.words[len(l.words)-1].Box
			top, bot := max(last.Min.Y, w.Box.Min.Y), min(last.Max.Y, w.Box.Max.Y)
			h := min(last.Dy(), w.Box.Dy())
			if bot-top < (h+1)/2 {
				continue
			}
			gap := w.Box.Min.X - last.Max.X
			if gap >= 3*max(last.Dy(), w.Box.Dy()) {
				continue
			}
			if best == nil || gap < bestGap {
				best, bestGap = l, gap
			}
		}
		if best == nil {
			best = &line{box: w.Box}
			lines = append(lines, best)
		}
		best.words = append(best.words, w)
		best.box = best.box.Union(w.Box)
	}
	sort.SliceStable(lines, func(i, j int) bool {
		if lines[i].box.Min.Y != lines[j].box.Min.Y {
			return lines[i].box.Min.Y < lines[j].box.Min.Y
		}
		return lines[i].box.Min.X < lines[j].box.Min.X
	})
	var out Result
	for _, l := range lines {
		sort.SliceStable(l.words, func(i, j int) bool { return l.words[i].Box.Min.X < l.words[j].Box.Min.X })
		ol := Line{Box: l.box}
		texts := make([]string, len(l.words))
		for i, w := range l.words {
			w.Line = len(out.Lines)
			ol.Words = append(ol.Words, len(out.Words))
			ol.Conf += w.Conf / float64(len(l.words))
			texts[i] = w.Text
			out.Words = append(out.Words, w)
		}
		ol.Text = strings.Join(texts, " ")
		out.Lines = append(out.Lines, ol)
	}
	return out
}

// alnum counts the letters and digits of s.
func alnum(s string) int {
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			n++
		}
	}
	return n
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
