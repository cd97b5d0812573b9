package judge

import (
	"image"
	"slices"

	"github.com/acu-dev/acu/internal/ocr"
)

// sureConf is the word confidence under which a near match of a phrase
// that must be gone may be the phrase misread ("api-681" for "api-01").
const sureConf = 90

func minConf(ws []textWord, idx []int) float64 {
	c := 100.0
	for _, i := range idx {
		c = min(c, ws[i].conf)
	}
	return c
}

// unreadFor returns a region of res that looks like text but where
// nothing was read with confidence, in which phrase may be, unread. When
// the phrase was read before at seen, that is a region over half that
// place or more: where the text was is not read (a text cursor there is
// not). Otherwise (never read here) a region
// wide enough to hold the phrase at the smallest screen size (8 pixels a
// line, a character at least 0.4 of that) and twice as tall as the lines
// read with confidence (a heading too large or too faint to read; a row
// of toolbar icons, as tall as the text, does not count), or any such
// region when no line was read. A region of several lines is judged by its
// width alone, unless it is taller than wide (an icon) and too narrow for
// the phrase in lines of half its height.
func unreadFor(res ocr.Result, phrase string, seen image.Rectangle) (image.Rectangle, bool) {
	if !seen.Empty() {
		for _, r := range res.Unread {
			if 2*r.Intersect(seen).Dx() >= seen.Dx() {
				return r, true
			}
		}
		return image.Rectangle{}, false
	}
	n := 0
	for _, w := range words(phrase) {
		n += len(w)
	}
	var hs []int
	for _, l := range res.Lines {
		if l.Conf >= minConfLine {
			hs = append(hs, l.Box.Dy())
		}
	}
	slices.Sort(hs)
	line := 0
	if len(hs) > 0 {
		line = hs[len(hs)/2]
	}
	for _, r := range res.Unread {
		if r.Dy() < 8 || float64(r.Dx()) < 0.4*8*float64(n) || r.Dy() < 2*line {
			continue
		}
		// A region taller than wide (an icon beside a label) holds the
		// phrase only in lines of at most half its height.
		if 2*r.Dx() >= 3*r.Dy() || float64(r.Dx()) >= 0.4*float64(r.Dy())/2*float64(n) {
			return r, true
		}
	}
	return image.Rectangle{}, false
}

// minConfLine is the mean word confidence from which a line counts as
// read with confidence when unreadFor measures the screen's text height.
const minConfLine = 80
