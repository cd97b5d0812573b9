package judge

import (
	"context"
	"image"
	"slices"

	"github.com/acu-dev/acu/internal/ocr"
)

// readTwice reads the lines of the near match m of phrase again, at other
// sizes (ocr.Engine.Reread), and reports whether the second reading
// confirms the first: the same words again, and nowhere the phrase. Two
// readings of other pixels agreeing on a different word are not the
// phrase misread; anything else (the phrase found, another reading, an
// error) leaves the phrase possibly on screen.
func (j *OCRJudge) readTwice(ctx context.Context, q Question, res ocr.Result, read []textWord, m match, phrase string) bool {
	if q.Frame == nil || len(m.words) == 0 {
		return false
	}
	var region image.Rectangle
	var first []string
	var firstConf []float64
	for _, wi := range m.words {
		w := read[wi]
		if w.line >= 0 && w.line < len(res.Lines) {
			region = region.Union(res.Lines[w.line].Box)
		}
		region = region.Union(w.box)
		for _, t := range words(w.text) {
			first = append(first, t)
			firstConf = append(firstConf, w.conf)
		}
	}
	x, ok := j.reread(ctx, q, region)
	if !ok {
		return false
	}
	if _, ok := x.find(phrase, 0); ok {
		return false
	}
	if _, ok := x.findLoose(phrase, 0, true); ok {
		return false
	}
	// The first reading's words, in order on one line of the second,
	// each read with confidence: confirmConf in the second reading, or
	// confirmConf in the first and minConfRead in the second (a misread
	// digit read the same way twice is read with little in both).
	sure := func(k int, c float64) bool {
		return c >= confirmConf || (firstConf[k] >= confirmConf && c >= minConfRead)
	}
	for start := range x.toks {
		k := 0
		for k < len(first) && start+k < len(x.toks) && x.toks[start+k].line == x.toks[start].line &&
			sameFolded(x.toks[start+k].runes, []rune(first[k])) && sure(k, x.words[x.toks[start+k].word].conf) {
			k++
		}
		if k == len(first) {
			return true
		}
	}
	return false
}

// confirmConf is the confidence at least with which one of two readings
// must read each word the second confirms, the other reading it with
// minConfRead at least.
const (
	confirmConf = 80
	minConfRead = 50
)

// anotherWord reports whether the word read with low confidence after the
// first words of phrase (cutShort's m.next) is another word than the rest
// of the phrase, not the rest unread: a second reading (Reread) reads the
// same first words followed by the same word, letter for letter (at
// minConfRead at least), and each of its words has three letters or more
// and differs from every word of the phrase in more than half of them
// (mousepad's 10 pt "Payment declined", "declined" read at 40 and again at
// 77, is not "Payment accepted"). A misread of the phrase's own word is a
// letter or two off, not most of them, and two readings of other pixels
// do not misread it alike.
func (j *OCRJudge) anotherWord(ctx context.Context, q Question, res ocr.Result, read []textWord, m match, phrase string) bool {
	if q.Frame == nil || m.next < 0 {
		return false
	}
	var first []string
	var region image.Rectangle
	all := append(slices.Clone(m.words), m.next)
	for _, wi := range all {
		w := read[wi]
		if w.line >= 0 && w.line < len(res.Lines) {
			region = region.Union(res.Lines[w.line].Box)
		}
		region = region.Union(w.box)
		first = append(first, words(w.text)...)
	}
	next := words(read[m.next].text)
	if len(next) == 0 {
		return false
	}
	pw := words(phrase)
	for _, t := range next {
		if len([]rune(t)) < 3 {
			return false
		}
		for _, w := range pw {
			if 2*editDistance([]rune(t), []rune(w)) <= max(len([]rune(t)), len([]rune(w))) {
				return false
			}
		}
	}
	x, ok := j.reread(ctx, q, region)
	if !ok {
		return false
	}
	if _, ok := x.find(phrase, 1); ok {
		return false
	}
	nFirst := len(first) - len(next)
	for start := range x.toks {
		k := 0
		for k < len(first) && start+k < len(x.toks) && x.toks[start+k].line == x.toks[start].line &&
			sameFolded(x.toks[start+k].runes, []rune(first[k])) && (k < nFirst || x.words[x.toks[start+k].word].conf >= minConfRead) {
			k++
		}
		if k == len(first) {
			return true
		}
	}
	return false
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b []rune) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := 0
			if a[i-1] != b[j-1] {
				sub = 1
			}
			cur[j] = min(prev[j-1]+sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// sameFolded reports whether a and b are the same word up to OCR's
// confusions (fold).
func sameFolded(a, b []rune) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && fold(a[i]) != fold(b[i]) {
			return false
		}
	}
	return true
}

// confirmed reports whether the near match m of phrase is another text
// than the phrase: a second reading reads the same (readTwice), or a
// reading of its lines on their own shows another digit (digitsDiffer).
func (j *OCRJudge) confirmed(ctx context.Context, q Question, res ocr.Result, read []textWord, m match, phrase string) bool {
	return j.readTwice(ctx, q, res, read, m, phrase) || j.digitsDiffer(ctx, q, res, read, m, phrase)
}

// reread reads region of q's frame again on its own (ocr.Engine.Reread)
// and indexes its words; false when it could not be read (logged).
func (j *OCRJudge) reread(ctx context.Context, q Question, region image.Rectangle) (phraseIndex, bool) {
	rr, err := j.o.Engine.Reread(ctx, q.Frame, region)
	if err != nil {
		j.o.Logger.Debug("ocr judge reread", "run_id", q.RunID, "err", err)
		return phraseIndex{}, false
	}
	again := make([]textWord, 0, len(rr.Words))
	for _, w := range rr.Words {
		again = append(again, textWord{text: w.Text, box: w.Box, line: w.Line, conf: w.Conf})
	}
	return indexWords(again), true
}
