package ocr

import (
	"context"
	"hash/fnv"
	"hash/maphash"
	"image"

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
	var parts []Word
	for _, w := range prev.res.Words {
		if !inRuns(w.Box) {
			parts = append(parts, w)
		}
	}
	var unread []image.Rectangle
	for _, u := range prev.res.Unread {
		if !inRuns(u) {
			unread = append(unread, u)
		}
	}
	for _, r := range runs {
		rect := image.Rect(0, max(r[0]-stripMargin, 0), f.W, min(r[1]+stripMargin, f.H))
		sr, err := e.recognizeStrip(ctx, f, rect)
		if err != nil {
			return Result{}, nil, st, err
		}
		for _, w := range sr.Words {
			w.Box = w.Box.Add(rect.Min)
			if inRuns(w.Box) {
				parts = append(parts, w)
			}
		}
		for _, u := range sr.Unread {
			if u = u.Add(rect.Min); inRuns(u) {
				unread = append(unread, u)
			}
		}
	}
	// Lines are rebuilt from the words' places, as a whole read builds
	// them: a line read in part from the last page and in part from a
	// strip stays in reading order.
	snap.res = relines(parts)
	snap.res.Unread = unread
	return snap.res, snap, st, nil
}

// recognizeStrip reads the rows of rect (the page's full width) of f as a
// page of their own (recognizePart).
func (e *Engine) recognizeStrip(ctx context.Context, f *frame.Frame, rect image.Rectangle) (Result, error) {
	return e.recognizePart(ctx, f, rect, sizing{fixed: e.o.Scale}, 0, image.Point{})
}

// rereadPSM is the segmentation mode of a second reading: a uniform block
// of text, where a first reading looks for sparse text (11), so the
// second opinion comes from other pixels and another segmentation.
const rereadPSM = 6

// Reread reads the part r of f a second time, resampled to other sizes
// than a first reading (lines of about secondLine pixels instead of
// targetLine, up to secondMaxScale), with some of the page around it for
// context: a second opinion on text the first reading may have got wrong.
// Boxes are in f's coordinates. Rereads are cached like pages.
func (e *Engine) Reread(ctx context.Context, f *frame.Frame, r image.Rectangle) (Result, error) {
	r = r.Inset(-max(16, r.Dy())).Intersect(f.Bounds())
	if r.Empty() {
		return Result{}, nil
	}
	sz := sizing{fixed: e.o.Scale, second: true, psm: rereadPSM}
	if sz.fixed > 0 {
		sz.fixed = sz.fixed%8 + 1
	}
	return e.recognizePart(ctx, f, r, sz, 0x5ec04d0f, r.Min)
}

// psmLine is Tesseract's segmentation mode for a single line of text.
const psmLine = 7

// ReadLine reads the line of text at r of f again on its own, as a single
// line (Tesseract's --psm 7; a uniform block, 6, when the part falls in
// several blocks), and gives each word the characters the recognizer
// weighed at each place (Word.Glyphs): a digit read where none other was
// weighed is read with confidence whatever the word's. Boxes are in f's
// coordinates. Reads are cached like pages.
func (e *Engine) ReadLine(ctx context.Context, f *frame.Frame, r image.Rectangle) (Result, error) {
	r = r.Inset(-4).Intersect(f.Bounds())
	if r.Empty() {
		return Result{}, nil
	}
	return e.recognizePart(ctx, f, r, sizing{fixed: e.o.Scale, psm: psmLine, glyphs: true}, 0x91f4b5, r.Min)
}

// recognizePart reads the part rect of f as a page of its own, except
// that the flat runs crossing its edges are measured in all of f: a cut
// must not turn the window border it shortened into ink joined to the
// text beside it ("Build DONE" read as "Buil" beside an xterm's border in
// a strip from the top row). Boxes are in the part's coordinates plus
// origin. Parts are cached by their pixels, those runs and salt.
func (e *Engine) recognizePart(ctx context.Context, f *frame.Frame, rect image.Rectangle, sz sizing, salt uint64, origin image.Point) (Result, error) {
	s := f.Sub(rect, f.Target+" part")
	lum := func(x, y int) uint8 {
		p := f.Pix[y*f.Stride+x*4:]
		return uint8((uint32(p[2])*299 + uint32(p[1])*587 + uint32(p[0])*114 + 500) / 1000)
	}
	// run counts the pixels from (x, y) on by (dx, dy) within f that stay
	// within bgTol of v, up to lineRun.
	run := func(x, y, dx, dy int, v uint8) uint16 {
		n := 0
		for x, y = x+dx, y+dy; x >= 0 && y >= 0 && x < f.W && y < f.H && n < lineRun && absDiff(lum(x, y), v) <= bgTol; x, y = x+dx, y+dy {
			n++
		}
		return uint16(n)
	}
	up, down := make([]uint16, s.W), make([]uint16, s.W)
	left, right := make([]uint16, s.H), make([]uint16, s.H)
	h := fnv.New64a()
	var b [8]byte
	put := func(v uint16) {
		b[0], b[1] = byte(v), byte(v>>8)
		h.Write(b[:2])
	}
	for i := range s.W {
		x := rect.Min.X + i
		up[i] = run(x, rect.Min.Y, 0, -1, lum(x, rect.Min.Y))
		down[i] = run(x, rect.Max.Y-1, 0, 1, lum(x, rect.Max.Y-1))
		put(up[i])
		put(down[i])
	}
	for i := range s.H {
		y := rect.Min.Y + i
		left[i] = run(rect.Min.X, y, -1, 0, lum(rect.Min.X, y))
		right[i] = run(rect.Max.X-1, y, 1, 0, lum(rect.Max.X-1, y))
		put(left[i])
		put(right[i])
	}
	return e.recognize(ctx, s.Hash^h.Sum64()^salt, f.Display+" "+s.Target, func(sc *scratch) gray {
		g := grayFromFrame(s, sc.gray)
		g.up, g.down, g.left, g.right = up, down, left, right
		return g
	}, origin, sz)
}
