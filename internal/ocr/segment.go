package ocr

import "image"

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
