package ocr

import (
	"context"
	"hash/maphash"
	"image"
	"sort"
	"strings"

	"github.com/acu-dev/acu/internal/frame"
)

// Snapshot is what RecognizeChanged keeps of the last page it read: a hash
// of each pixel row and the words found.
type Snapshot struct {
	w, h int
	rows []uint64
	res  Result
}

// ChangeStats says how much of a page RecognizeChanged read.
type ChangeStats struct {
	Full     bool // the whole page was read (first page, size changed, or most of it changed)
	Strips   int  // strips read around the changed rows
	RowsRead int  // rows of the page given to Tesseract
}

// stripMargin is the rows of context read above and below changed rows, so
// that a strip never starts or ends inside the text line that changed (a
// text line is at most this high at the sizes screens use).
const stripMargin = 32

// fullAbove is the share of changed rows (margins included) above which
// the whole page is read in one run instead of strips.
const fullAbove = 0.5

var rowSeed = maphash.MakeSeed()

// RecognizeChanged reads the text of f when prev (the Snapshot of the last
// page of the same target, nil for none) tells which rows are unchanged:
// only strips around the changed rows are read by Tesseract, and the words
// of the unchanged rows are kept from prev. A word belongs to the strip's
// read when its middle lies in the changed rows, widened to cover every
// word of prev they touch, so a line that changed in part is read whole.
// The first page, a page of another size, and a page of which most changed
// are read whole. Strips are cached by their pixels like pages.
func (e *Engine) RecognizeChanged(ctx context.Context, f *frame.Frame, prev *Snapshot) (Result, *Snapshot, ChangeStats, error) {
	snap := &Snapshot{w: f.W, h: f.H, rows: make([]uint64, f.H)}
	for y := range f.H {
		snap.rows[y] = maphash.Bytes(rowSeed, f.Pix[y*f.Stride:y*f.Stride+f.W*4])
	}
	full := func() (Result, *Snapshot, ChangeStats, error) {
		r, err := e.RecognizeFrame(ctx, f)
		if err != nil {
			return Result{}, nil, ChangeStats{}, err
		}
		snap.res = r
		return r, snap, ChangeStats{Full: true, RowsRead: f.H}, nil
	}
	if prev == nil || prev.w != f.W || prev.h != f.H {
		return full()
	}
	// Runs of changed rows, widened to the prev words they touch, merged
	// when their strips would overlap.
	var runs [][2]int
	for y := 0; y < f.H; y++ {
		if snap.rows[y] == prev.rows[y] {
			continue
		}
		if n := len(runs); n > 0 && y-runs[n-1][1] <= 2*stripMargin {
			runs[n-1][1] = y + 1
		} else {
			runs = append(runs, [2]int{y, y + 1})
		}
	}
	if len(runs) == 0 {
		snap.res = prev.res
		return prev.res, snap, ChangeStats{}, nil
	}
	for i := range runs {
		for _, w := range prev.res.Words {
			if w.Box.Min.Y < runs[i][1] && w.Box.Max.Y > runs[i][0] {
				runs[i][0], runs[i][1] = min(runs[i][0], w.Box.Min.Y), max(runs[i][1], w.Box.Max.Y)
			}
		}
	}
	st := ChangeStats{Strips: len(runs)}
	for _, r := range runs {
		st.RowsRead += min(r[1]+stripMargin, f.H) - max(r[0]-stripMargin, 0)
	}
	if float64(st.RowsRead) > fullAbove*float64(f.H) {
		return full()
	}
	inRuns := func(b image.Rectangle) bool {
		c := (b.Min.Y + b.Max.Y) / 2
		for _, r := range runs {
			if c >= r[0] && c < r[1] {
				return true
			}
		}
		return false
	}
	var parts []pieceWord
	for li, l := range prev.res.Lines {
		for _, wi := range l.Words {
			if w := prev.res.Words[wi]; !inRuns(w.Box) {
				parts = append(parts, pieceWord{Word: w, line: li})
			}
		}
	}
	for si, r := range runs {
		rect := image.Rect(0, max(r[0]-stripMargin, 0), f.W, min(r[1]+stripMargin, f.H))
		sr, err := e.RecognizeFrame(ctx, f.Sub(rect, f.Target+" strip"))
		if err != nil {
			return Result{}, nil, st, err
		}
		for li, l := range sr.Lines {
			for _, wi := range l.Words {
				w := sr.Words[wi]
				w.Box = w.Box.Add(rect.Min)
				if inRuns(w.Box) {
					parts = append(parts, pieceWord{Word: w, line: li, strip: si + 1})
				}
			}
		}
	}
	snap.res = assemble(parts)
	return snap.res, snap, st, nil
}

// pieceWord is a word of a page being assembled and the line it was read
// in: line of strip (0: the previous page).
type pieceWord struct {
	Word
	line, strip int
}

// assemble builds a Result from words read in several pieces: the words of
// one source line stay one line, lines are ordered top to bottom, words in
// a line left to right.
func assemble(parts []pieceWord) Result {
	type key struct{ strip, line int }
	groups := map[key][]Word{}
	var order []key
	for _, p := range parts {
		k := key{p.strip, p.line}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], p.Word)
	}
	top := func(ws []Word) int {
		t := ws[0].Box.Min.Y
		for _, w := range ws {
			t = min(t, w.Box.Min.Y)
		}
		return t
	}
	sort.SliceStable(order, func(i, j int) bool { return top(groups[order[i]]) < top(groups[order[j]]) })
	var out Result
	for _, k := range order {
		ws := groups[k]
		sort.SliceStable(ws, func(i, j int) bool { return ws[i].Box.Min.X < ws[j].Box.Min.X })
		l := Line{Box: ws[0].Box}
		texts := make([]string, len(ws))
		for i, w := range ws {
			w.Line = len(out.Lines)
			l.Words = append(l.Words, len(out.Words))
			l.Box = l.Box.Union(w.Box)
			l.Conf += w.Conf / float64(len(ws))
			texts[i] = w.Text
			out.Words = append(out.Words, w)
		}
		l.Text = strings.Join(texts, " ")
		out.Lines = append(out.Lines, l)
	}
	return out
}
