package elements

import (
	"image"
	"sort"
	"strings"
	"unicode"

	"github.com/acu-dev/acu/internal/ocr"
)

// IoU returns the intersection over union of two boxes (0 for empty ones).
func IoU(a, b image.Rectangle) float64 {
	in := a.Intersect(b)
	if in.Empty() {
		return 0
	}
	ia := area(in)
	u := area(a) + area(b) - ia
	if u <= 0 {
		return 0
	}
	return float64(ia) / float64(u)
}

func area(r image.Rectangle) int64 { return int64(r.Dx()) * int64(r.Dy()) }

// OCRScale is the fixed upscale element maps read the screen at
// (ocr.Options.Scale). The OCR judge's per-block scale suits phrases of any
// size, but on maps it misread labels inside bordered buttons (xmessage's
// "(Jupiter)" as "@upiter)"), and 2x missed a menu item ("Rename..." in
// pcmanfm's context menu); controls' labels are small, and at 3x
// Tesseract reads both right.
const OCRScale = 3

// MergeIoU is the overlap above which a tree element and an OCR box are one
// element.
const MergeIoU = 0.5

// Merge adds the OCR lines of res to the tree elements: a line overlapping
// a tree element at IoU > MergeIoU, or lying inside one whose text contains
// the line's text (a button's label is much smaller than the button), is
// that element (its Source becomes FromBoth and an empty Text is filled
// from the line); any other line becomes a TypeText element. Lines under
// minConf or without a letter or digit are dropped as noise.
func Merge(tree []Element, res ocr.Result, minConf float64) []Element {
	out := tree
	nTree := len(tree)
	for _, seg := range segments(res) {
		l := &seg
		text := strings.TrimSpace(l.Text)
		if l.Box.Empty() || l.Conf < minConf || !hasAlnum(text) {
			continue
		}
		best, bestIoU := -1, 0.0
		for i := 0; i < nTree; i++ {
			e := &out[i]
			if e.Type == TypeWindow {
				continue
			}
			if v := IoU(e.Box, l.Box); v > bestIoU {
				best, bestIoU = i, v
			}
		}
		if best < 0 || bestIoU <= MergeIoU {
			best = -1
			c := image.Pt((l.Box.Min.X+l.Box.Max.X)/2, (l.Box.Min.Y+l.Box.Max.Y)/2)
			nt := norm(text)
			for i := 0; i < nTree; i++ {
				e := &out[i]
				if e.Type == TypeWindow || !c.In(e.Box) {
					continue
				}
				et := norm(e.Text + " " + e.Value)
				if nt != "" && strings.Contains(et, nt) {
					best = i
					break
				}
			}
		}
		if best >= 0 {
			e := &out[best]
			e.Source |= FromOCR
			e.Conf = l.Conf
			if e.Text == "" && !e.Editable {
				e.Text = text
			}
			continue
		}
		out = append(out, Element{
			Type:    TypeText,
			Text:    text,
			Box:     l.Box,
			Enabled: true,
			Showing: true,
			Source:  FromOCR,
			Conf:    l.Conf,
		})
	}
	return out
}

// wideGap is the gap between two words of an OCR line, in line heights,
// beyond which they are two elements: labels side by side (a file view's
// icons, a toolbar) that Tesseract reads as one line.
const wideGap = 1.5

// segments returns res's lines split at wide gaps between their words.
func segments(res ocr.Result) []ocr.Line {
	var out []ocr.Line
	for _, l := range res.Lines {
		if len(l.Words) < 2 {
			out = append(out, l)
			continue
		}
		gap := int(wideGap * float64(l.Box.Dy()))
		var cur ocr.Line
		var confSum float64
		flush := func() {
			if len(cur.Words) > 0 {
				cur.Conf = confSum / float64(len(cur.Words))
				out = append(out, cur)
			}
			cur, confSum = ocr.Line{}, 0
		}
		prev := -1
		for _, wi := range l.Words {
			if wi < 0 || wi >= len(res.Words) {
				continue
			}
			w := res.Words[wi]
			if prev >= 0 && w.Box.Min.X-res.Words[prev].Box.Max.X > gap {
				flush()
			}
			if cur.Text != "" {
				cur.Text += " "
			}
			cur.Text += w.Text
			cur.Box = cur.Box.Union(w.Box)
			cur.Words = append(cur.Words, wi)
			confSum += w.Conf
			prev = wi
		}
		flush()
	}
	return out
}

func hasAlnum(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// norm lower-cases s and keeps letters and digits only, so OCR's
// punctuation slips do not prevent a match.
func norm(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// rank orders elements showing and on-screen first, then the rest, each
// group in reading order (top to bottom, then left to right), keeps at most
// max and returns how many were dropped.
func rank(els []Element, screen image.Rectangle, max int) ([]Element, int) {
	group := func(e *Element) int {
		switch {
		case e.Showing && !e.Box.Empty() && e.Box.Overlaps(screen):
			return 0
		case e.Showing:
			return 1
		}
		return 2
	}
	sort.SliceStable(els, func(i, j int) bool {
		a, b := &els[i], &els[j]
		ga, gb := group(a), group(b)
		if ga != gb {
			return ga < gb
		}
		// Windows head their widgets; OCR text after the tree's elements.
		if (a.Source == FromOCR) != (b.Source == FromOCR) {
			return b.Source == FromOCR
		}
		if (a.Type == TypeWindow) != (b.Type == TypeWindow) {
			return a.Type == TypeWindow
		}
		if a.App != b.App {
			return a.App < b.App
		}
		if a.Window != b.Window {
			return a.Window < b.Window
		}
		if a.Box.Min.Y != b.Box.Min.Y {
			return a.Box.Min.Y < b.Box.Min.Y
		}
		return a.Box.Min.X < b.Box.Min.X
	})
	if max > 0 && len(els) > max {
		return els[:max], len(els) - max
	}
	return els, 0
}
