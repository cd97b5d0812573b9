package judge

import (
	"context"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/acu-dev/acu/internal/ocr"
)

// OCROptions configures the OCR judge.
type OCROptions struct {
	Engine *ocr.Engine
	// MinConfidence drops words Tesseract is less sure of (0..100); 0 keeps
	// every word.
	MinConfidence float64
	Logger        *slog.Logger
}

// OCRJudge decides conditions about quoted visible text with Tesseract:
// offline, free, deterministic.
type OCRJudge struct {
	o OCROptions

	mu    sync.Mutex
	snaps map[string]*ocr.Snapshot // the last page read per display and target
	// seen is where each phrase was last read, per display and target
	// (seenKey): a "gone" is confirmed only when that place is read.
	seen map[string]image.Rectangle
}

// maxSeen bounds the places remembered (one per watched phrase and
// target); past it they are forgotten all at once.
const maxSeen = 1024

func seenKey(q Question, phrase string) string {
	return q.Frame.Display + " " + q.Frame.Target + "\x00" + strings.Join(words(phrase), " ")
}

// maxSnapshots bounds the pages the judge remembers (one per watched
// display and target).
const maxSnapshots = 64

// NewOCR returns the OCR judge.
func NewOCR(o OCROptions) (*OCRJudge, error) {
	if o.Engine == nil {
		return nil, errors.New("ocr judge: no ocr engine")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &OCRJudge{o: o, snaps: map[string]*ocr.Snapshot{}, seen: map[string]image.Rectangle{}}, nil
}

// Name implements Backend.
func (j *OCRJudge) Name() string { return OCR }

// TextCondition is a condition the OCR judge can decide: every phrase is
// visible, or (Gone) none is.
type TextCondition struct {
	Phrases []string
	Gone    bool
}

// Compiled on first use, not at every acu start-up.
var (
	quoteRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`"([^"]+)"|“([^”]+)”|‘([^’]+)’|` + "`([^`]+)`" + `|(?:^|[\s(])'([^']+)'`)
	})
	goneRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(gone|disappears?|disappeared|vanish(es|ed)?|no longer|not (be )?(visible|shown|displayed|present|there|on (the )?screen)|isn't|is not|aren't|are not|hidden|absent|goes away|went away|(is|are) closed)\b`)
	})
)

// ParseTextCondition extracts the quoted phrases of a condition and whether
// it asks for them to be gone. It fails when there is no quoted phrase with a
// letter or digit in it.
func ParseTextCondition(condition string) (TextCondition, error) {
	var tc TextCondition
	rest := condition
	for _, m := range quoteRE().FindAllStringSubmatchIndex(condition, -1) {
		for g := 1; g < len(m)/2; g++ {
			if m[2*g] >= 0 {
				p := strings.TrimSpace(condition[m[2*g]:m[2*g+1]])
				if len(tokens(p)) > 0 {
					tc.Phrases = append(tc.Phrases, p)
				}
				break
			}
		}
		rest = strings.Replace(rest, condition[m[0]:m[1]], " ", 1)
	}
	if len(tc.Phrases) == 0 {
		return tc, fmt.Errorf("condition %q has no quoted text: the ocr judge decides only conditions about quoted visible text, such as `\"Build succeeded\" is visible` or `\"Loading...\" is gone`; quote the text to look for, or use a vision backend (%s) for other conditions",
			condition, strings.Join(VisionBackends, ", "))
	}
	tc.Gone = goneRE().MatchString(rest)
	return tc, nil
}

// Check implements Backend.
func (j *OCRJudge) Check(condition string) error {
	_, err := ParseTextCondition(condition)
	return err
}

// Judge implements Backend.
func (j *OCRJudge) Judge(ctx context.Context, q Question) (Verdict, error) {
	tc, err := ParseTextCondition(q.Condition)
	if err != nil {
		return Verdict{}, err
	}
	start := time.Now()
	var read []textWord
	var boxes []image.Rectangle
	var res ocr.Result
	switch {
	case q.Text != "":
		for i, line := range strings.Split(q.Text, "\n") {
			for _, f := range strings.Fields(line) {
				read = append(read, textWord{text: f, line: i, conf: 100})
			}
		}
	case q.Frame != nil:
		res, err = j.recognize(ctx, q)
		if err != nil {
			return Verdict{}, fmt.Errorf("ocr judge: %w", err)
		}
		for _, w := range res.Words {
			if w.Conf < j.o.MinConfidence {
				continue
			}
			read = append(read, textWord{text: w.Text, box: w.Box, line: w.Line, conf: w.Conf})
		}
	default:
		return Verdict{}, errors.New("judge question has neither a frame nor text")
	}
	idx := indexWords(read)
	vd := Verdict{Model: "tesseract"}
	var found, missing, unread []string
	for _, p := range tc.Phrases {
		// Looking for text that must be gone, be generous in what counts as
		// still there: a false YES wakes the agent too early.
		extra := 0
		if tc.Gone {
			extra = 1
		}
		m, ok := idx.find(p, extra)
		if !ok && q.Frame != nil {
			// A glyph of a near match read twice ("7Q4Xx8", "4/7" for
			// "47"): read as it is drawn, the phrase may be there.
			if fixed, ok2 := j.undouble(ctx, q, res, read, idx, p); ok2 {
				read, idx = fixed, indexWords(fixed)
				m, ok = idx.find(p, extra)
			}
		}
		if ok && tc.Gone && q.Frame != nil {
			// A near match found only with the budget of "gone" (a word
			// or two letters off: "Thursday" for "Tuesday") is the phrase
			// misread unless a second reading reads the same.
			if _, strict := idx.find(p, 0); !strict && j.readTwice(ctx, q, res, read, m, p) {
				ok = false
				missing = append(missing, strconv.Quote(p))
				continue
			}
		}
		if !ok {
			missing = append(missing, strconv.Quote(p))
			if !tc.Gone {
				continue
			}
			var seen image.Rectangle
			if q.Frame != nil {
				j.mu.Lock()
				seen = j.seen[seenKey(q, p)]
				j.mu.Unlock()
			}
			// settled is the whole near match of the phrase when a
			// second reading confirmed it another text: the words after
			// its first ones were read, so the phrase is not cut short
			// there.
			var settled []int
			confirm := func(m match) bool {
				if j.confirmed(ctx, q, res, read, m, p) {
					settled = m.words
					return true
				}
				return false
			}
			if r, ok := unreadFor(res, p, seen); ok {
				unread = append(unread, fmt.Sprintf("%q may be in the unreadable text at %v", p, r))
				boxes = append(boxes, r)
			} else if m, ok := idx.findLoose(p, 1, true); ok && minConf(read, m.words) < sureConf && !confirm(m) {
				unread = append(unread, fmt.Sprintf("%q may be %q, read with low confidence", p, m.text))
				for _, wi := range m.words {
					boxes = append(boxes, read[wi].box)
				}
			} else if m, ok := idx.findLoose(p, 1, true); ok && confusedDigits(read, m, p) && !j.digitsDiffer(ctx, q, res, read, m, p) {
				unread = append(unread, fmt.Sprintf("%q may be %q, a digit of small text read as one whose shape it shares", p, m.text))
				for _, wi := range m.words {
					boxes = append(boxes, read[wi].box)
				}
			} else if m, ok := idx.cutShort(p); ok && !(len(settled) > 0 && settled[0] == m.words[0]) && !(m.next >= 0 && (j.confirmed(ctx, q, res, read, match{words: append(slices.Clone(m.words), m.next)}, p) || j.anotherWord(ctx, q, res, read, m, p))) {
				var parts []string
				for _, wi := range m.words {
					parts = append(parts, read[wi].text)
					boxes = append(boxes, read[wi].box)
				}
				unread = append(unread, fmt.Sprintf("%q may be %q cut short by what was read", p, strings.Join(parts, " ")))
			}
			continue
		}
		found = append(found, fmt.Sprintf("%q as %q", p, m.text))
		var at image.Rectangle
		for _, wi := range m.words {
			if !read[wi].box.Empty() {
				boxes = append(boxes, read[wi].box)
				at = at.Union(read[wi].box)
			}
		}
		if q.Frame != nil && !at.Empty() {
			j.mu.Lock()
			if len(j.seen) >= maxSeen {
				clear(j.seen)
			}
			j.seen[seenKey(q, p)] = at
			j.mu.Unlock()
		}
	}
	words := read
	src := "on screen"
	if q.Text != "" {
		src = "in the text"
	}
	if tc.Gone && q.Text == "" && len(words) == 0 {
		// Nothing read at all: a blank or blacked-out frame proves nothing,
		// and a false YES wakes the agent early.
		vd.Evidence = fmt.Sprintf("no text read on screen, so %s cannot be confirmed gone", strings.Join(missing, ", "))
	} else if tc.Gone && len(found) == 0 && len(unread) > 0 {
		// Not read is not gone: text that could be the phrase was seen
		// but not read with confidence.
		vd.Evidence = fmt.Sprintf("cannot confirm gone: %s", strings.Join(unread, ", "))
		vd.Boxes = boxes
	} else if tc.Gone {
		vd.Met = len(found) == 0
		if vd.Met {
			vd.Evidence = fmt.Sprintf("%s no longer %s (%d words read)", strings.Join(missing, ", "), src, len(words))
		} else {
			vd.Evidence = fmt.Sprintf("still %s: %s", src, strings.Join(found, ", "))
			vd.Boxes = boxes
		}
	} else {
		vd.Met = len(missing) == 0
		if vd.Met {
			vd.Evidence = fmt.Sprintf("visible %s: %s", src, strings.Join(found, ", "))
			vd.Boxes = boxes
		} else {
			vd.Evidence = fmt.Sprintf("not %s yet: %s (%d words read)", src, strings.Join(missing, ", "), len(words))
		}
	}
	vd.Latency = time.Since(start)
	j.o.Logger.Debug("ocr verdict", "run_id", q.RunID, "met", vd.Met, "evidence", vd.Evidence)
	return vd, nil
}

type textWord struct {
	text string
	box  image.Rectangle
	line int
	conf float64 // Tesseract's confidence, 100 for text
}

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

// recognize reads the question's frame, only the rows that changed since
// the last page of the same display and target (ocr.RecognizeChanged).
func (j *OCRJudge) recognize(ctx context.Context, q Question) (ocr.Result, error) {
	key := q.Frame.Display + " " + q.Frame.Target
	j.mu.Lock()
	prev := j.snaps[key]
	j.mu.Unlock()
	res, snap, st, err := j.o.Engine.RecognizeChanged(ctx, q.Frame, prev)
	if err != nil {
		return ocr.Result{}, err
	}
	j.mu.Lock()
	if _, ok := j.snaps[key]; !ok && len(j.snaps) >= maxSnapshots {
		for k := range j.snaps { // forget one: a target no longer watched, most likely
			delete(j.snaps, k)
			break
		}
	}
	j.snaps[key] = snap
	j.mu.Unlock()
	j.o.Logger.Debug("ocr judge read", "target", key, "full", st.Full, "strips", st.Strips, "rows", st.RowsRead)
	return res, nil
}

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
	rr, err := j.o.Engine.Reread(ctx, q.Frame, region)
	if err != nil {
		j.o.Logger.Debug("ocr judge reread", "run_id", q.RunID, "err", err)
		return false
	}
	var again []textWord
	for _, w := range rr.Words {
		again = append(again, textWord{text: w.Text, box: w.Box, line: w.Line, conf: w.Conf})
	}
	x := indexWords(again)
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
			sameFolded(x.toks[start+k].runes, []rune(first[k])) && sure(k, again[x.toks[start+k].word].conf) {
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
	rr, err := j.o.Engine.Reread(ctx, q.Frame, region)
	if err != nil {
		j.o.Logger.Debug("ocr judge reread", "run_id", q.RunID, "err", err)
		return false
	}
	var again []textWord
	for _, w := range rr.Words {
		again = append(again, textWord{text: w.Text, box: w.Box, line: w.Line, conf: w.Conf})
	}
	x := indexWords(again)
	if _, ok := x.find(phrase, 1); ok {
		return false
	}
	nFirst := len(first) - len(next)
	for start := range x.toks {
		k := 0
		for k < len(first) && start+k < len(x.toks) && x.toks[start+k].line == x.toks[start].line &&
			sameFolded(x.toks[start+k].runes, []rune(first[k])) && (k < nFirst || again[x.toks[start+k].word].conf >= minConfRead) {
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
