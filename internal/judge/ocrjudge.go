package judge

import (
	"context"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

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
	read, res, err := j.readQuestion(ctx, q)
	if err != nil {
		return Verdict{}, err
	}
	t := phraseTally{read: read, idx: indexWords(read)}
	for _, p := range tc.Phrases {
		j.lookFor(ctx, q, res, tc.Gone, p, &t)
	}
	vd := t.verdict(tc.Gone, q.Text)
	vd.Latency = time.Since(start)
	j.o.Logger.Debug("ocr verdict", "run_id", q.RunID, "met", vd.Met, "evidence", vd.Evidence)
	return vd, nil
}

// readQuestion returns the words of the question's text (each at
// confidence 100), or those read on its frame at MinConfidence at least
// with the frame's reading.
func (j *OCRJudge) readQuestion(ctx context.Context, q Question) ([]textWord, ocr.Result, error) {
	var read []textWord
	switch {
	case q.Text != "":
		for i, line := range strings.Split(q.Text, "\n") {
			for _, f := range strings.Fields(line) {
				read = append(read, textWord{text: f, line: i, conf: 100})
			}
		}
		return read, ocr.Result{}, nil
	case q.Frame != nil:
		res, err := j.recognize(ctx, q)
		if err != nil {
			return nil, ocr.Result{}, fmt.Errorf("ocr judge: %w", err)
		}
		for _, w := range res.Words {
			if w.Conf < j.o.MinConfidence {
				continue
			}
			read = append(read, textWord{text: w.Text, box: w.Box, line: w.Line, conf: w.Conf})
		}
		return read, res, nil
	default:
		return nil, ocr.Result{}, errors.New("judge question has neither a frame nor text")
	}
}

// phraseTally is what the OCR judge made of a condition's phrases so far:
// the words read (spelled as drawn where undouble fixed them) and their
// index, the phrases found, missing and possibly there unread, and the
// boxes that show them.
type phraseTally struct {
	read                   []textWord
	idx                    phraseIndex
	found, missing, unread []string
	boxes                  []image.Rectangle
}

// lookFor looks for phrase p in what was read and records it in t.
func (j *OCRJudge) lookFor(ctx context.Context, q Question, res ocr.Result, gone bool, p string, t *phraseTally) {
	// Looking for text that must be gone, be generous in what counts as
	// still there: a false YES wakes the agent too early.
	extra := 0
	if gone {
		extra = 1
	}
	m, ok := t.idx.find(p, extra)
	if !ok && q.Frame != nil {
		// A glyph of a near match read twice ("7Q4Xx8", "4/7" for
		// "47"): read as it is drawn, the phrase may be there.
		if fixed, ok2 := j.undouble(ctx, q, res, t.read, t.idx, p); ok2 {
			t.read, t.idx = fixed, indexWords(fixed)
			m, ok = t.idx.find(p, extra)
		}
	}
	if ok && gone && q.Frame != nil {
		// A near match found only with the budget of "gone" (a word
		// or two letters off: "Thursday" for "Tuesday") is the phrase
		// misread unless a second reading reads the same.
		if _, strict := t.idx.find(p, 0); !strict && j.readTwice(ctx, q, res, t.read, m, p) {
			t.missing = append(t.missing, strconv.Quote(p))
			return
		}
	}
	if !ok {
		t.missing = append(t.missing, strconv.Quote(p))
		if gone {
			j.mayBeUnread(ctx, q, res, p, t)
		}
		return
	}
	t.found = append(t.found, fmt.Sprintf("%q as %q", p, m.text))
	j.foundAt(q, p, m, t)
}

// mayBeUnread records in t why phrase p, which must be gone and was not
// found, may still be on screen unread: in a region nothing was read in
// (where it was seen last, if it was), as a near match read with low
// confidence, as one with a digit of small text OCR confuses by shape,
// or as its first words cut short by what was read.
func (j *OCRJudge) mayBeUnread(ctx context.Context, q Question, res ocr.Result, p string, t *phraseTally) {
	read, idx := t.read, t.idx
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
		t.unread = append(t.unread, fmt.Sprintf("%q may be in the unreadable text at %v", p, r))
		t.boxes = append(t.boxes, r)
	} else if m, ok := idx.findLoose(p, 1, true); ok && minConf(read, m.words) < sureConf && !confirm(m) {
		t.unread = append(t.unread, fmt.Sprintf("%q may be %q, read with low confidence", p, m.text))
		for _, wi := range m.words {
			t.boxes = append(t.boxes, read[wi].box)
		}
	} else if m, ok := idx.findLoose(p, 1, true); ok && confusedDigits(read, m, p) && !j.digitsDiffer(ctx, q, res, read, m, p) {
		t.unread = append(t.unread, fmt.Sprintf("%q may be %q, a digit of small text read as one whose shape it shares", p, m.text))
		for _, wi := range m.words {
			t.boxes = append(t.boxes, read[wi].box)
		}
	} else if m, ok := idx.cutShort(p); ok && !(len(settled) > 0 && settled[0] == m.words[0]) && !(m.next >= 0 && (j.confirmed(ctx, q, res, read, match{words: append(slices.Clone(m.words), m.next)}, p) || j.anotherWord(ctx, q, res, read, m, p))) {
		var parts []string
		for _, wi := range m.words {
			parts = append(parts, read[wi].text)
			t.boxes = append(t.boxes, read[wi].box)
		}
		t.unread = append(t.unread, fmt.Sprintf("%q may be %q cut short by what was read", p, strings.Join(parts, " ")))
	}
}

// foundAt adds the boxes of m, where phrase p was found, to t and
// remembers where it was read on the frame's display and target.
func (j *OCRJudge) foundAt(q Question, p string, m match, t *phraseTally) {
	var at image.Rectangle
	for _, wi := range m.words {
		if !t.read[wi].box.Empty() {
			t.boxes = append(t.boxes, t.read[wi].box)
			at = at.Union(t.read[wi].box)
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

// verdict is the OCR judge's answer from t: whether the phrases are all
// visible (or, gone, none is), with the evidence and boxes; text is the
// question's text ("" for a frame).
func (t *phraseTally) verdict(gone bool, text string) Verdict {
	vd := Verdict{Model: "tesseract"}
	found, missing, unread, boxes := t.found, t.missing, t.unread, t.boxes
	words := t.read
	src := "on screen"
	if text != "" {
		src = "in the text"
	}
	if gone && text == "" && len(words) == 0 {
		// Nothing read at all: a blank or blacked-out frame proves nothing,
		// and a false YES wakes the agent early.
		vd.Evidence = fmt.Sprintf("no text read on screen, so %s cannot be confirmed gone", strings.Join(missing, ", "))
	} else if gone && len(found) == 0 && len(unread) > 0 {
		// Not read is not gone: text that could be the phrase was seen
		// but not read with confidence.
		vd.Evidence = fmt.Sprintf("cannot confirm gone: %s", strings.Join(unread, ", "))
		vd.Boxes = boxes
	} else if gone {
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
	return vd
}

type textWord struct {
	text string
	box  image.Rectangle
	line int
	conf float64 // Tesseract's confidence, 100 for text
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
