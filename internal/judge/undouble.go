package judge

import (
	"context"
	"image"
	"slices"
	"unicode"

	"github.com/acu-dev/acu/internal/ocr"
)

// undouble reads again the words of the near match of phrase that were
// read with low confidence and hold one letter twice in a row (in either
// case: "7Q4Xx8") or a mark between letters or digits ("4/7"), their lines
// on their own with every character's box (ocr.Engine.ReadLine), and
// returns the reading with each such word spelled as drawn when the line
// reading reads it the same, letter for letter, and its boxes show a glyph
// read twice: the same letter twice, or a mark and a letter or digit each
// weighed for the other, over the same columns (ocr.Word.Undoubled).
// Letters side by side ("ll" in "cancelled") are two; digits are never
// dropped.
func (j *OCRJudge) undouble(ctx context.Context, q Question, res ocr.Result, read []textWord, idx phraseIndex, phrase string) ([]textWord, bool) {
	if !slices.ContainsFunc(read, maybeDoubled) {
		return nil, false // the common case, without matching again
	}
	m, ok := idx.findLoose(phrase, 1, true)
	if !ok {
		return nil, false
	}
	var cand []int
	var region image.Rectangle
	for _, wi := range m.words {
		w := read[wi]
		if !maybeDoubled(w) {
			continue
		}
		cand = append(cand, wi)
		if w.line >= 0 && w.line < len(res.Lines) {
			region = region.Union(res.Lines[w.line].Box)
		}
		region = region.Union(w.box)
	}
	if len(cand) == 0 {
		return nil, false
	}
	rr, err := j.o.Engine.ReadLine(ctx, q.Frame, region)
	if err != nil {
		j.o.Logger.Debug("ocr judge read line", "run_id", q.RunID, "err", err)
		return nil, false
	}
	var fixed []textWord
	for _, wi := range cand {
		for _, w := range rr.Words {
			if w.Text != read[wi].text || !w.Box.Overlaps(read[wi].box) {
				continue
			}
			if u, ok := w.Undoubled(); ok {
				if fixed == nil {
					fixed = slices.Clone(read)
				}
				fixed[wi].text = u.Text
			}
			break
		}
	}
	return fixed, fixed != nil
}

// maybeDoubled reports whether w, read with low confidence, may hold a
// glyph read twice: a letter twice in a row or a mark inside it.
func maybeDoubled(w textWord) bool {
	return w.conf < sureConf && (doubledLetter(w.text) || innerMark(w.text))
}

// doubledLetter reports whether s holds the same letter twice in a row,
// in either case.
func doubledLetter(s string) bool {
	rs := []rune(s)
	for i := 1; i < len(rs); i++ {
		if unicode.IsLetter(rs[i]) && unicode.ToLower(rs[i]) == unicode.ToLower(rs[i-1]) {
			return true
		}
	}
	return false
}

// innerMark reports whether s holds a character other than a letter or
// digit between two that are ("4/7"): perhaps a mark read off a stroke.
func innerMark(s string) bool {
	rs := []rune(s)
	for i := 1; i+1 < len(rs); i++ {
		isAlnum := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
		if !isAlnum(rs[i]) && isAlnum(rs[i-1]) && isAlnum(rs[i+1]) {
			return true
		}
	}
	return false
}
