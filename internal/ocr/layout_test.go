package ocr

import (
	"image"
	"testing"
)

// TestFlattenAreaKeepsStrokes: flatten blanks the inside of a stroke
// longer than bgRun (a hollow glyph); flattenArea keeps it solid.
func TestFlattenAreaKeepsStrokes(t *testing.T) {
	mk := func() gray {
		g := gray{pix: make([]uint8, 200*200), w: 200, h: 200}
		for i := range g.pix {
			g.pix[i] = 250
		}
		for y := 40; y < 160; y++ { // a stem 30 wide, 120 tall
			for x := 80; x < 110; x++ {
				g.pix[y*g.w+x] = 20
			}
		}
		return g
	}
	g := mk()
	flatten(g, new(scratch))
	if v := g.pix[100*g.w+95]; v != 255 {
		t.Fatalf("flatten: stem middle = %d, want 255 (the rule this test guards against changed)", v)
	}
	g = mk()
	flattenArea(g, new(scratch))
	if v := g.pix[100*g.w+95]; v >= inkLevel {
		t.Errorf("flattenArea: stem middle = %d, want ink (< %d)", v, inkLevel)
	}
	if v := g.pix[10*g.w+10]; v != 255 {
		t.Errorf("flattenArea: background = %d, want 255", v)
	}
}

// TestRelinesKeepsReadingOrder: words of one line read in pieces (a strip
// after a partial change, with other tops) come out left to right.
func TestRelinesKeepsReadingOrder(t *testing.T) {
	ws := []Word{
		{Text: "240", Box: image.Rect(120, 101, 150, 115)},
		{Text: "of", Box: image.Rect(158, 103, 172, 115)},
		{Text: "240", Box: image.Rect(180, 101, 210, 115)},
		{Text: "Frames:", Box: image.Rect(10, 100, 110, 116)},
		{Text: "far", Box: image.Rect(900, 100, 930, 115)}, // a column beside it
		{Text: "next", Box: image.Rect(10, 130, 60, 145)},
	}
	r := relines(ws)
	var got []string
	for _, l := range r.Lines {
		got = append(got, l.Text)
	}
	want := []string{"Frames: 240 of 240", "far", "next"}
	if len(got) != len(want) {
		t.Fatalf("relines lines = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("relines lines = %q, want %q", got, want)
			break
		}
	}
}

// TestSegmentScales: blocks are cut per line and each gets the scale that
// brings it to targetLine.
func TestSegmentScales(t *testing.T) {
	g := gray{pix: make([]uint8, 400*300), w: 400, h: 300}
	for i := range g.pix {
		g.pix[i] = 255
	}
	fill := func(r image.Rectangle) {
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				g.pix[y*g.w+x] = 0
			}
		}
	}
	fill(image.Rect(10, 10, 200, 23))  // a 13-pixel line
	fill(image.Rect(10, 60, 300, 180)) // a 120-pixel heading
	rects := segment(g)
	if len(rects) != 2 {
		t.Fatalf("segment = %v, want 2 blocks", rects)
	}
	if s := blockScale(rects[0].Dy(), sizing{}); s != 3 {
		t.Errorf("blockScale(13) = %v, want 3", s)
	}
	if s := blockScale(rects[1].Dy(), sizing{}); s >= 1 {
		t.Errorf("blockScale(120) = %v, want below 1", s)
	}
}

// TestSegmentIconBesideLines: an icon beside a label of three lines fills
// the rows between them; it is parted off and the label cut into lines
// (a zenity dialog was read as one shrunk block).
func TestSegmentIconBesideLines(t *testing.T) {
	g := gray{pix: make([]uint8, 500*120), w: 500, h: 120}
	for i := range g.pix {
		g.pix[i] = 255
	}
	fill := func(r image.Rectangle) {
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				g.pix[y*g.w+x] = 0
			}
		}
	}
	fill(image.Rect(10, 10, 70, 82)) // the icon, as tall as the label, 14 from it
	for i := 0; i < 3; i++ {
		fill(image.Rect(84, 10+i*26, 390, 30+i*26)) // lines of 20, 6 apart
	}
	rects := segment(g)
	if len(rects) != 4 {
		t.Fatalf("segment = %v, want the icon and 3 lines", rects)
	}
	for _, r := range rects[1:] {
		if r.Dy() != 20 {
			t.Errorf("segment = %v, want lines 20 pixels tall", rects)
			break
		}
	}
}

// TestBetweenRules: a row of buttons framed by 1-pixel edges (with their
// rounded corners) holding small labels is parted at the edges into the
// labels; a line whose tall glyph ("l") is not half as tall again as the
// letters beside it is kept whole.
func TestBetweenRules(t *testing.T) {
	page := func() gray {
		g := gray{pix: make([]uint8, 200*40), w: 200, h: 40}
		for i := range g.pix {
			g.pix[i] = 255
		}
		return g
	}
	fill := func(g gray, r image.Rectangle) {
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				g.pix[y*g.w+x] = 0
			}
		}
	}
	edge := func(g gray, x, dx int) { // a button's edge, its corners curving toward dx
		fill(g, image.Rect(x, 3, x+1, 37))
		fill(g, image.Rect(min(x, x+3*dx), 2, max(x, x+3*dx)+1, 3))
		fill(g, image.Rect(min(x, x+3*dx), 37, max(x, x+3*dx)+1, 38))
	}
	g := page()
	edge(g, 2, 1)
	edge(g, 92, -1)
	edge(g, 100, 1)
	edge(g, 190, -1)
	fill(g, image.Rect(40, 15, 48, 25))   // "C"
	fill(g, image.Rect(130, 15, 150, 25)) // "AC"
	r := trim(g, image.Rect(0, 0, 200, 40))
	parts, ok := betweenRules(g, r)
	want := []image.Rectangle{image.Rect(40, 15, 48, 25), image.Rect(130, 15, 150, 25)}
	if !ok || len(parts) != len(want) || parts[0] != want[0] || parts[1] != want[1] {
		t.Errorf("betweenRules(buttons) = %v, %v; want %v, true", parts, ok, want)
	}

	g = page()
	fill(g, image.Rect(20, 5, 40, 30)) // letters 25 tall
	fill(g, image.Rect(50, 2, 52, 36)) // an "l", 34 tall
	fill(g, image.Rect(60, 5, 90, 30))
	if parts, ok := betweenRules(g, trim(g, image.Rect(0, 0, 200, 40))); ok {
		t.Errorf("betweenRules(a line with an l) = %v, want it kept whole", parts)
	}
}
