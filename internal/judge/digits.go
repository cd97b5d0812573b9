package judge

import (
	"context"
	"image"
	"unicode"

	"github.com/acu-dev/acu/internal/ocr"
)

// digitsDiffer reads the lines of the near match m of phrase again, each
// on its own as a single line (ocr.Engine.ReadLine), and reports whether
// the reading shows with confidence a digit other than the phrase's: in
// its near match of the phrase, a digit where the phrase has another, the
// first reading having the same digit there, and neither the phrase's digit
// nor a character OCR confuses with it among the characters the recognizer
// weighed for that place ("api-02" read "api-62" with a 0 weighed for the
// 6 is not "api-01", "api-62" with only an 8 weighed is). The phrase found
// in the reading, or no such digit, leaves the phrase possibly on screen.
func (j *OCRJudge) digitsDiffer(ctx context.Context, q Question, res ocr.Result, read []textWord, m match, phrase string) bool {
	if q.Frame == nil || len(m.words) == 0 {
		return false
	}
	var region image.Rectangle
	for _, wi := range m.words {
		w := read[wi]
		if w.line >= 0 && w.line < len(res.Lines) {
			region = region.Union(res.Lines[w.line].Box)
		}
		region = region.Union(w.box)
	}
	rr, err := j.o.Engine.ReadLine(ctx, q.Frame, region)
	if err != nil {
		j.o.Logger.Debug("ocr judge read line", "run_id", q.RunID, "err", err)
		return false
	}
	var again []textWord
	lineWords := make([]ocr.Word, len(rr.Words))
	for i, w := range rr.Words {
		w, _ = w.Undoubled() // a glyph read twice is one character
		lineWords[i] = w
		again = append(again, textWord{text: w.Text, box: w.Box, line: w.Line, conf: w.Conf})
	}
	x := indexWords(again)
	if _, ok := x.find(phrase, 1); ok {
		return false
	}
	m2, ok := x.findLoose(phrase, 1, true)
	if !ok {
		return false
	}
	want := rawTokens(phrase, nil)
	var first, second []rawToken
	for _, wi := range m.words {
		first = append(first, rawTokens(read[wi].text, nil)...)
	}
	for _, wi := range m2.words {
		second = append(second, rawTokens(lineWords[wi].Text, lineWords[wi].Glyphs)...)
	}
	if len(first) != len(want) || len(second) != len(want) {
		return false
	}
	for k, pw := range want {
		a, b := first[k], second[k]
		if len(a.runes) != len(pw.runes) || len(b.runes) != len(pw.runes) {
			continue
		}
		for i, p := range pw.runes {
			c := b.runes[i]
			if !unicode.IsDigit(p) || !unicode.IsDigit(c) || fold(c) == fold(p) || fold(a.runes[i]) != fold(c) || b.alts[i] == nil {
				continue
			}
			weighed := false
			for _, r := range b.alts[i] {
				if fold(foldRead(r)) == fold(p) {
					weighed = true
					break
				}
			}
			if !weighed {
				return true
			}
		}
	}
	return false
}

// confusedDigits reports whether the near match m of phrase is small text
// (words under smallText pixels tall) that differs from the phrase only in
// digits, each a pair OCR confuses by shape: 0, 6, 8 and 9 (a closed loop
// with or without a stroke or a dot inside: DejaVu Sans Mono's dotted zero
// at 10 pt is read as a 6 at confidence 95-97) or 1 and 7. Such a match
// read with confidence is not enough to confirm the phrase gone: the
// reading of its line on its own must show the other digit with the
// phrase's not weighed (digitsDiffer).
func confusedDigits(read []textWord, m match, phrase string) bool {
	want := rawTokens(phrase, nil)
	var got []rawToken
	for _, wi := range m.words {
		if read[wi].box.Dy() >= smallText {
			return false
		}
		got = append(got, rawTokens(read[wi].text, nil)...)
	}
	if len(got) != len(want) {
		return false
	}
	n := 0
	for k, pw := range want {
		if len(got[k].runes) != len(pw.runes) {
			return false
		}
		for i, p := range pw.runes {
			c := got[k].runes[i]
			if c == p {
				continue
			}
			if !unicode.IsDigit(p) || !unicode.IsDigit(c) || shapeGroup(p) == 0 || shapeGroup(p) != shapeGroup(c) {
				return false
			}
			n++
		}
	}
	return n > 0
}

// smallText is the word height, in frame pixels, under which text is
// small: the 8-10 pt of terminals and editors at 1x.
const smallText = 16

// shapeGroup is the group of digits r shares its shape with (0 for none).
func shapeGroup(r rune) int {
	switch r {
	case '0', '6', '8', '9':
		return 1
	case '1', '7':
		return 2
	}
	return 0
}

// rawToken is a word of letters and digits as read, lower-case, each
// character with the others the recognizer weighed in its place (nil
// when not known).
type rawToken struct {
	runes []rune
	alts  [][]rune
}

// rawTokens splits s into words as wordsPunct does but without folding
// two letters into one (rn, vv), so each character keeps its place and
// its glyph (glyphs, when they spell s).
func rawTokens(s string, glyphs []ocr.Glyph) []rawToken {
	rs := []rune(s)
	if len(glyphs) != len(rs) {
		glyphs = nil
	}
	var out []rawToken
	var cur rawToken
	flush := func() {
		if len(cur.runes) > 0 {
			out = append(out, cur)
		}
		cur = rawToken{}
	}
	for i, r := range rs {
		var c rune
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '@':
			c = foldRead(r)
		case (r == '|' || r == '!') && len(cur.runes) > 0:
			c = 'l'
		default:
			flush()
			continue
		}
		cur.runes = append(cur.runes, c)
		var alts []rune
		if glyphs != nil {
			alts = append([]rune{}, glyphs[i].Alts...)
			if alts == nil {
				alts = []rune{}
			}
		}
		cur.alts = append(cur.alts, alts)
	}
	flush()
	return out
}

// foldRead is a character as words reads it: lower-case, '@' for an o.
func foldRead(r rune) rune {
	if r == '@' {
		return 'o'
	}
	return unicode.ToLower(r)
}
