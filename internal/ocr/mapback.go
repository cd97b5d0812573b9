package ocr

import (
	"image"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
)

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
