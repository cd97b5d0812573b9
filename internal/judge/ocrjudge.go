package judge

import (
	"context"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"regexp"
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
	return &OCRJudge{o: o, snaps: map[string]*ocr.Snapshot{}}, nil
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
	var words []textWord
	var boxes []image.Rectangle
	switch {
	case q.Text != "":
		for i, line := range strings.Split(q.Text, "\n") {
			for _, f := range strings.Fields(line) {
				words = append(words, textWord{text: f, line: i})
			}
		}
	case q.Frame != nil:
		res, err := j.recognize(ctx, q)
		if err != nil {
			return Verdict{}, fmt.Errorf("ocr judge: %w", err)
		}
		for _, w := range res.Words {
			if w.Conf < j.o.MinConfidence {
				continue
			}
			words = append(words, textWord{text: w.Text, box: w.Box, line: w.Line})
		}
	default:
		return Verdict{}, errors.New("judge question has neither a frame nor text")
	}
	idx := indexWords(words)
	vd := Verdict{Model: "tesseract"}
	var found, missing []string
	for _, p := range tc.Phrases {
		// Looking for text that must be gone, be generous in what counts as
		// still there: a false YES wakes the agent too early.
		budget := editBudget(p)
		if tc.Gone {
			budget++
		}
		m, ok := idx.find(p, budget)
		if !ok {
			missing = append(missing, strconv.Quote(p))
			continue
		}
		found = append(found, fmt.Sprintf("%q as %q", p, m.text))
		for _, wi := range m.words {
			if !words[wi].box.Empty() {
				boxes = append(boxes, words[wi].box)
			}
		}
	}
	src := "on screen"
	if q.Text != "" {
		src = "in the text"
	}
	if tc.Gone && q.Text == "" && len(words) == 0 {
		// Nothing read at all: a blank or blacked-out frame proves nothing,
		// and a false YES wakes the agent early.
		vd.Evidence = fmt.Sprintf("no text read on screen, so %s cannot be confirmed gone", strings.Join(missing, ", "))
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
}

// editBudget is how many edits a match of phrase may need: about one per
// five letters, none for short words.
func editBudget(phrase string) int {
	n := 0
	for _, t := range tokens(phrase) {
		n += len(t)
	}
	return n / 5
}

// tokens splits s into normalized tokens: lower case, letters and digits
// only, with OCR's common confusions folded (0/o, 1/l/i/|, rn/m, vv/w, 5/s).
func tokens(s string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			t := b.String()
			t = strings.ReplaceAll(t, "rn", "m")
			t = strings.ReplaceAll(t, "vv", "w")
			out = append(out, t)
			b.Reset()
		}
	}
	for _, r := range s {
		switch r {
		case '0':
			r = 'o'
		case '1', 'l', 'I', '|', '!':
			r = 'i'
		case '5':
			r = 's'
		}
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		case r == '|':
			b.WriteRune('i')
		default:
			flush()
		}
	}
	flush()
	return out
}

// wordIndex is the OCR text as a sequence of normalized tokens, each
// remembering the word it came from.
type wordIndex struct {
	toks  []string
	word  []int // token -> word index
	words []textWord
}

func indexWords(words []textWord) wordIndex {
	idx := wordIndex{words: words}
	for i, w := range words {
		for _, t := range tokens(w.text) {
			idx.toks = append(idx.toks, t)
			idx.word = append(idx.word, i)
		}
	}
	return idx
}

type match struct {
	text  string // the words matched, as read
	words []int
	dist  int
}

// find looks for phrase as a run of tokens (one or two more or fewer than
// the phrase has, since OCR splits and joins words), compared without
// spaces, within budget edits. The closest match wins.
func (x wordIndex) find(phrase string, budget int) (match, bool) {
	pt := tokens(phrase)
	want := strings.Join(pt, "")
	best := match{dist: budget + 1}
	var joined []byte
	for i := range x.toks {
		joined = joined[:0]
		for n := 1; n <= len(pt)+2 && i+n <= len(x.toks); n++ {
			joined = append(joined, x.toks[i+n-1]...)
			if n+2 < len(pt) {
				continue
			}
			got := joined
			if len(got) > len(want)+budget {
				break
			}
			if len(got) < len(want)-budget {
				continue
			}
			d := levenshtein(got, want, best.dist)
			if d < best.dist {
				best = match{dist: d, words: x.wordsOf(i, i+n)}
			}
		}
	}
	if best.dist > budget {
		return match{}, false
	}
	parts := make([]string, len(best.words))
	for k, wi := range best.words {
		parts[k] = x.words[wi].text
	}
	best.text = strings.Join(parts, " ")
	return best, true
}

func (x wordIndex) wordsOf(from, to int) []int {
	var ws []int
	for t := from; t < to; t++ {
		if len(ws) == 0 || ws[len(ws)-1] != x.word[t] {
			ws = append(ws, x.word[t])
		}
	}
	return ws
}

// levenshtein returns the edit distance of a and b (bytes: tokens are
// lower-cased letters and digits, compared as UTF-8), or limit when it is at
// least limit.
func levenshtein(a []byte, b string, limit int) int {
	var buf [2 * 65]int
	var prev, cur []int
	if len(b) < 65 {
		prev, cur = buf[:len(b)+1], buf[65:65+len(b)+1]
	} else {
		prev, cur = make([]int, len(b)+1), make([]int, len(b)+1)
	}
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			c = min(c, prev[j]+1, cur[j-1]+1)
			cur[j] = c
			rowMin = min(rowMin, c)
		}
		if rowMin >= limit {
			return limit
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}

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
