package judge

import (
	"strings"
	"unicode"
)

// Matching a quoted phrase against OCR words.
//
// The phrase and the OCR text are split into words (letters and digits;
// punctuation and spaces separate). The phrase's words must match a run of
// consecutive OCR words on one line, word for word, where OCR may have
// split one word in two or joined two into one. Each phrase word has its
// own edit budget (wordBudget): none for words of up to five letters, one
// up to eleven, two beyond, so noise inside a long word is forgiven but a
// different word is not. An edit may not add or drop letters at either end
// of a word ("complete" never matches "incomplete", "Connected" never matches
// "Disconnected", "successful" never matches "unsuccessful"), and no edit may touch a digit ("Step 3" never matches
// "Step 2", "api-01" never matches "api-02"): a digit matches only itself
// or the letter OCR confuses it with (0/O/Q, 1/l/I, 5/S, 8/B).

// fold maps a character to its OCR confusion class.
func fold(r rune) rune {
	switch r {
	case '0', 'o', 'q': // a Q's tail is a few pixels: read as an O or a 0
		return 'o'
	case '1', 'l', 'i', '|', '!':
		return 'i'
	case '5', 's':
		return 's'
	case '8', 'b':
		return 'b'
	}
	return r
}

// words splits s into lower-case words of letters and digits, with OCR's
// two-letter confusions (rn for m, vv for w) folded.
func words(s string) []string {
	w, _ := wordsPunct(s)
	return w
}

// wordsPunct is words, and for each word whether a colon, comma,
// semicolon or full stop follows it at once in s ("Frames:"): OCR may
// read that mark as one more letter of the word ("Framest").
func wordsPunct(s string) ([]string, []bool) {
	var out []string
	var punct []bool
	var b strings.Builder
	flush := func(next rune) {
		if b.Len() > 0 {
			t := b.String()
			t = strings.ReplaceAll(t, "rn", "m")
			t = strings.ReplaceAll(t, "vv", "w")
			out = append(out, t)
			punct = append(punct, strings.ContainsRune(":,;.", next))
			b.Reset()
		}
	}
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		case r == '@':
			b.WriteRune('o') // OCR's reading of a 0 or an o
		case r == '|' || r == '!':
			// Read for an l or I inside a word; punctuation at its ends.
			if b.Len() > 0 {
				b.WriteRune('l')
			}
		default:
			flush(r)
		}
	}
	flush(0)
	return out, punct
}

// markRead reports whether r is how OCR reads a colon, comma or full stop
// stuck to the word before it.
func markRead(r rune) bool { return strings.ContainsRune("tilj1", r) }

// tokens is words for callers that only need to know whether a phrase has
// any.
func tokens(s string) []string { return words(s) }

// wordBudget is the edits a phrase word of n letters may need.
func wordBudget(n int) int {
	switch {
	case n <= 5:
		return 0
	case n <= 11:
		return 1
	}
	return 2
}

const noMatch = 1 << 20

// wordDistDigits is the edit distance from want (a phrase word) to got (what OCR
// read), with no letters added or dropped at either end of want and no
// edit touching a digit; noMatch when over limit.
// With looseDigits, digits are edited like letters (for "gone": a misread
// number still on screen is not gone).
func wordDistDigits(got, want []rune, limit int, looseDigits bool) int {
	n, m := len(want), len(got)
	if m-n > limit || n-m > limit {
		return noMatch
	}
	prev := make([]int, m+1)
	cur := make([]int, m+1)
	// Row 0: got's letters before want's first: not allowed.
	prev[0] = 0
	for j := 1; j <= m; j++ {
		prev[j] = noMatch
	}
	for i := 1; i <= n; i++ {
		wc := want[i-1]
		del := 1 // want's letter missing from got
		if unicode.IsDigit(wc) && !looseDigits {
			del = noMatch
		}
		// Nothing of want dropped before got's first letter.
		cur[0] = noMatch
		rowMin := cur[0]
		for j := 1; j <= m; j++ {
			gc := got[j-1]
			sub := 0
			if wc != gc && fold(wc) != fold(gc) {
				sub = 1
				if (unicode.IsDigit(wc) || unicode.IsDigit(gc)) && !looseDigits {
					sub = noMatch
				}
			}
			ins := 1 // a letter of got not in want
			if (unicode.IsDigit(gc) && !looseDigits) || i == n {
				ins = noMatch // no digit added, nothing added after want's end
			}
			d := del
			if j == m {
				d = noMatch // nor after its last
			}
			c := min(prev[j-1]+sub, prev[j]+d, cur[j-1]+ins, noMatch)
			cur[j] = c
			rowMin = min(rowMin, c)
		}
		if rowMin > limit {
			return noMatch
		}
		prev, cur = cur, prev
	}
	if prev[m] > limit {
		return noMatch
	}
	return prev[m]
}

// textWord is one word of the text judged, with its line and box.
type wordRef struct {
	runes []rune
	word  int // index into the judged words
	line  int
}

// phraseIndex is the judged text as words.
type phraseIndex struct {
	toks  []wordRef
	words []textWord
}

func indexWords(ws []textWord) phraseIndex {
	x := phraseIndex{words: ws}
	for i, w := range ws {
		for _, t := range words(w.text) {
			x.toks = append(x.toks, wordRef{runes: []rune(t), word: i, line: w.line})
		}
	}
	return x
}

type match struct {
	text  string // the words matched, as read
	words []int
	dist  int
	// next, for cutShort, is the word read with low confidence after
	// the first words of the phrase, -1 for none.
	next int
}

// find looks for phrase in the text; extra is added to the budget of each
// word of five letters or more. The closest match wins.
func (x phraseIndex) find(phrase string, extra int) (match, bool) {
	return x.findLoose(phrase, extra, false)
}

// findLoose is find; with loose, digits are edited like letters and
// numbers get the extra budget too: a misread number.
func (x phraseIndex) findLoose(phrase string, extra int, loose bool) (match, bool) {
	pw, punct := wordsPunct(phrase)
	if len(pw) == 0 {
		return match{}, false
	}
	want := make([][]rune, len(pw))
	for i, w := range pw {
		want[i] = []rune(w)
	}
	best := match{dist: noMatch}
	for start := range x.toks {
		if d, end := x.alignAt(want, punct, start, extra, loose); d < best.dist {
			best = match{dist: d, words: x.wordsOf(start, end)}
		}
	}
	if best.dist >= noMatch {
		return match{}, false
	}
	parts := make([]string, len(best.words))
	for k, wi := range best.words {
		parts[k] = x.words[wi].text
	}
	best.text = strings.Join(parts, " ")
	return best, true
}

// alignAt matches want's words against the tokens from start on one line:
// one word to one token, one word to two tokens (OCR split it), two words
// to one token (OCR joined them). It returns the least total distance and
// the token after the match.
func (x phraseIndex) alignAt(want [][]rune, punct []bool, start, extra int, loose bool) (int, int) {
	line := x.toks[start].line
	type state struct{ i, j int }
	memo := map[state][2]int{}
	var rec func(i, j int) (int, int)
	rec = func(i, j int) (int, int) {
		if i == len(want) {
			return 0, j
		}
		if j >= len(x.toks) || x.toks[j].line != line {
			return noMatch, j
		}
		if v, ok := memo[state{i, j}]; ok {
			return v[0], v[1]
		}
		best, end := noMatch, j
		try := func(d int, ni, nj int) {
			if d >= noMatch {
				return
			}
			r, e := rec(ni, nj)
			if d+r < best {
				best, end = d+r, e
			}
		}
		budget := wordBudget(len(want[i]))
		switch {
		case loose && hasDigit(want[i]):
			budget += 2 * extra // a number misread: a digit wrong and one more
		case len(want[i]) >= 5:
			budget += extra
		}
		dist := func(got, w []rune, limit int) int { return wordDistDigits(got, w, limit, loose) }
		got := x.toks[j].runes
		d := dist(got, want[i], budget)
		if n := len(got); d >= noMatch && punct[i] && n == len(want[i])+1 && markRead(got[n-1]) {
			d = dist(got[:n-1], want[i], budget) // "Framest" for "Frames:"
		}
		try(d, i+1, j+1)
		if j+1 < len(x.toks) && x.toks[j+1].line == line {
			joined := append(append([]rune{}, x.toks[j].runes...), x.toks[j+1].runes...)
			try(dist(joined, want[i], budget), i+1, j+2)
		}
		if i+1 < len(want) {
			both := append(append([]rune{}, want[i]...), want[i+1]...)
			try(dist(x.toks[j].runes, both, budget+wordBudget(len(want[i+1]))), i+2, j+1)
		}
		memo[state{i, j}] = [2]int{best, end}
		return best, end
	}
	return rec(0, start)
}

func (x phraseIndex) wordsOf(from, to int) []int {
	var ws []int
	for t := from; t < to; t++ {
		if len(ws) == 0 || ws[len(ws)-1] != x.toks[t].word {
			ws = append(ws, x.toks[t].word)
		}
	}
	return ws
}

func hasDigit(w []rune) bool {
	for _, r := range w {
		if unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// cutShort looks for the phrase cut short by the end of what was read:
// its first words (at least half of them) ending a line or followed by a
// word read with low confidence, or its last words starting a line. Such a line may hold the whole phrase, partly unread (text
// on a button, past a clipped edge), so a "gone" cannot be confirmed.
func (x phraseIndex) cutShort(phrase string) (match, bool) {
	pw, punct := wordsPunct(phrase)
	if len(pw) < 2 {
		return match{}, false
	}
	want := make([][]rune, len(pw))
	for i, w := range pw {
		want[i] = []rune(w)
	}
	for k := len(want) - 1; k*2 >= len(want); k-- {
		for start := range x.toks {
			// The first k words, ending a line.
			if d, end := x.alignAt(want[:k], punct[:k], start, 0, false); d < noMatch && (end == len(x.toks) || x.toks[end].line != x.toks[start].line ||
				x.words[x.toks[end].word].conf < sureConf) {
				m := match{words: x.wordsOf(start, end), next: -1}
				if end < len(x.toks) && x.toks[end].line == x.toks[start].line {
					m.next = x.toks[end].word
				}
				return m, true
			}
			// The last k words, starting a line.
			if start == 0 || x.toks[start-1].line != x.toks[start].line {
				if d, end := x.alignAt(want[len(want)-k:], punct[len(want)-k:], start, 0, false); d < noMatch {
					return match{words: x.wordsOf(start, end), next: -1}, true
				}
			}
		}
	}
	return match{}, false
}
