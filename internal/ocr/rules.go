package ocr

import "image"

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
