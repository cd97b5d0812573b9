package annotate

import (
	"math"
	"runtime"
	"sync"
)

// Format is a pixel layout of 4 bytes a pixel.
type Format uint8

const (
	BGRX Format = iota // acu's frames (X11 ZPixmap, little-endian): B, G, R, pad
	RGBA               // image.RGBA: R, G, B, A (A is left as it is)
)

// Image is a picture to draw on, in place.
type Image struct {
	Pix    []byte
	W, H   int
	Stride int
	Format Format

	// y0, y1 clip drawing to rows [y0, y1) (a band drawn by one goroutine);
	// y1 == 0 means all rows.
	y0, y1 int
}

// rows returns the rows drawing may touch, [lo, hi).
func (img Image) rows() (lo, hi int) {
	if img.y1 == 0 {
		return 0, img.H
	}
	return img.y0, img.y1
}

// Box is a model-provided region of interest, normalized 0..1000.
type Box struct{ X1, Y1, X2, Y2 int }

// Mark is one executed action, normalized 0..1000 within the picture.
type Mark struct {
	// Pos says whether X, Y is a place (false for type and key).
	Pos    bool
	X, Y   int
	Drag   bool // X2, Y2 is the drag's end
	X2, Y2 int
	// Label is drawn next to the mark on the current turn ("1 click
	// 500,500"); empty draws none.
	Label string
}

// Annotator burns UI_CONFIG's overlays into pictures. It keeps lookup tables
// between calls and is not safe for concurrent use; one per loop.
type Annotator struct {
	cfg   Config
	heat  map[int]*lut // by fade level
	bbox  *lut
	trail [][]Mark
}

// New returns an Annotator for cfg (validate it first with ParseConfig or
// Validate).
func New(cfg Config) *Annotator {
	a := &Annotator{cfg: cfg, heat: map[int]*lut{}}
	a.bbox = newLUT(cfg.BBoxHeat.FillStops, 1)
	return a
}

// Config returns the annotator's configuration.
func (a *Annotator) Config() Config { return a.cfg }

// Push records one turn's marks as the newest of the trail and returns the
// trail to draw, newest first, at most TrailTurns long. The returned slice is
// reused by the next Push.
func (a *Annotator) Push(marks []Mark) [][]Mark {
	n := max(a.cfg.ExecutedHeat.TrailTurns, 1)
	cp := append([]Mark(nil), marks...)
	a.trail = append([][]Mark{cp}, a.trail...)
	if len(a.trail) > n {
		a.trail = a.trail[:n]
	}
	return a.trail
}

// Trail returns the current trail, newest first.
func (a *Annotator) Trail() [][]Mark { return a.trail }

// Reset forgets the trail (a new session).
func (a *Annotator) Reset() { a.trail = nil }

// Draw burns the overlays into img in the seed panel's order: blue bbox heat
// with borders, orange action heat (oldest turn first; trail[0] is the
// current turn, trail[i] is i turns old), then the current turn's labels.
// Coordinates are normalized 0..1000 over the picture; 1000 is the last
// pixel, as internal/input maps them.
//
// Large pictures are drawn in horizontal bands in parallel; each pixel still
// gets its overlays in the same order, so the result does not depend on the
// number of bands.
func (a *Annotator) Draw(img Image, boxes []Box, trail [][]Mark) {
	if img.W <= 0 || img.H <= 0 {
		return
	}
	h := a.cfg.ExecutedHeat
	for age := range min(len(trail), max(h.TrailTurns, 1)) {
		fade := a.fade(age)
		if a.heat[fade] == nil {
			a.heat[fade] = newLUT(h.Stops, float64(fade)/256)
		}
	}
	n := 1
	if img.W*img.H >= 1<<18 {
		n = min(runtime.GOMAXPROCS(0), 4, img.H)
	}
	if n <= 1 {
		a.draw(img, boxes, trail)
		return
	}
	var wg sync.WaitGroup
	for i := range n {
		band := img
		band.y0, band.y1 = img.H*i/n, img.H*(i+1)/n
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.draw(band, boxes, trail)
		}()
	}
	wg.Wait()
}

// fade is the alpha scale (0..256) of a trail turn age turns old: the
// newest at full strength, each older one a TrailTurns-th weaker, as the
// seed panel fades them.
func (a *Annotator) fade(age int) int {
	t := max(a.cfg.ExecutedHeat.TrailTurns, 1)
	return (t - age) * 256 / t
}

func (a *Annotator) draw(img Image, boxes []Box, trail [][]Mark) {
	if a.cfg.BBoxHeat.Enabled {
		for _, b := range boxes {
			a.drawBox(img, b)
		}
	}
	h := a.cfg.ExecutedHeat
	turns := min(len(trail), max(h.TrailTurns, 1))
	if h.Enabled && h.RadiusScale > 0 {
		base := h.RadiusScale * float64(max(img.W, img.H))
		for age := turns - 1; age >= 0; age-- {
			fade := a.fade(age)
			l := a.heat[fade]
			shrink := math.Pow(h.TrailShrink, float64(age))
			r := base * shrink
			for _, m := range trail[age] {
				if !m.Pos {
					continue
				}
				x1, y1 := px(m.X, img.W), px(m.Y, img.H)
				if !m.Drag {
					blob(img, x1, y1, r, l)
					continue
				}
				x2, y2 := px(m.X2, img.W), px(m.Y2, img.H)
				if shrink < 1 {
					mx, my := float64(x1+x2)/2, float64(y1+y2)/2
					x1, y1 = int(math.Round(mx+(float64(x1)-mx)*shrink)), int(math.Round(my+(float64(y1)-my)*shrink))
					x2, y2 = int(math.Round(mx+(float64(x2)-mx)*shrink)), int(math.Round(my+(float64(y2)-my)*shrink))
				}
				blob(img, x1, y1, r, l)
				blob(img, x2, y2, r, l)
				if len(h.Stops) > 0 {
					c := h.Stops[0].Color
					line(img, x1, y1, x2, y2, c, uint8(uint32(c.A)*uint32(fade)/256))
				}
			}
		}
	}
	if a.cfg.Labels.Enabled && len(trail) > 0 {
		a.drawLabels(img, trail[0])
	}
}

// px maps a normalized coordinate to a pixel on an n-pixel axis.
func px(v, n int) int {
	v = min(max(v, 0), 1000)
	return (v*(n-1) + 500) / 1000
}

// lut is a radial gradient sampled over the squared distance: entry i is
// the colour at d = sqrt(i/(lutN-1)) of the radius, premultiplied by its
// alpha in 0..256.
type lut struct {
	c [lutN][4]uint32 // r*a, g*a, b*a, 256-a
}

const lutN = 4096

func newLUT(stops []Stop, fade float64) *lut {
	l := &lut{}
	for i := range lutN {
		d := math.Sqrt(float64(i) / (lutN - 1))
		r, g, b, al := sample(stops, d)
		a := uint32(math.Round(al * fade * 256))
		l.c[i] = [4]uint32{uint32(math.Round(r)) * a, uint32(math.Round(g)) * a, uint32(math.Round(b)) * a, 256 - a}
	}
	return l
}

// sample interpolates the stops at d (canvas semantics: before the first
// stop its colour, after the last stop its colour).
func sample(stops []Stop, d float64) (r, g, b, a float64) {
	if len(stops) == 0 {
		return 0, 0, 0, 0
	}
	c := func(s Stop) (float64, float64, float64, float64) {
		return float64(s.Color.R), float64(s.Color.G), float64(s.Color.B), float64(s.Color.A) / 255
	}
	if d <= stops[0].Pos {
		return c(stops[0])
	}
	for i := 1; i < len(stops); i++ {
		if d <= stops[i].Pos {
			p, q := stops[i-1], stops[i]
			t := 0.0
			if q.Pos > p.Pos {
				t = (d - p.Pos) / (q.Pos - p.Pos)
			}
			r0, g0, b0, a0 := c(p)
			r1, g1, b1, a1 := c(q)
			return r0 + (r1-r0)*t, g0 + (g1-g0)*t, b0 + (b1-b0)*t, a0 + (a1-a0)*t
		}
	}
	return c(stops[len(stops)-1])
}

func offsets(f Format) (ri, bi int) {
	if f == RGBA {
		return 0, 2
	}
	return 2, 0
}

// blend composites the premultiplied colour e over the pixel at p.
func blend(p []byte, ri, bi int, e *[4]uint32) {
	inv := e[3]
	p[ri] = uint8((uint32(p[ri])*inv + e[0]) >> 8)
	p[1] = uint8((uint32(p[1])*inv + e[1]) >> 8)
	p[bi] = uint8((uint32(p[bi])*inv + e[2]) >> 8)
}

// blob draws a radial gradient disc of radius r at (cx, cy).
func blob(img Image, cx, cy int, r float64, l *lut) {
	if r < 0.5 {
		return
	}
	ri, bi := offsets(img.Format)
	ir := int(math.Ceil(r))
	r2 := r * r
	scale := uint64((lutN - 1) / r2 * (1 << 16))
	lim := int64(r2)
	lo, hi := img.rows()
	y0, y1 := max(cy-ir, lo), min(cy+ir, hi-1)
	x0, x1 := max(cx-ir, 0), min(cx+ir, img.W-1)
	for y := y0; y <= y1; y++ {
		dy := int64(y - cy)
		dy2 := dy * dy
		if dy2 > lim {
			continue
		}
		row := img.Pix[y*img.Stride:]
		for x := x0; x <= x1; x++ {
			dx := int64(x - cx)
			dd := dx*dx + dy2
			if dd >= lim {
				continue
			}
			idx := (uint64(dd) * scale) >> 16
			if idx >= lutN {
				continue
			}
			e := &l.c[idx]
			if e[3] == 256 {
				continue
			}
			blend(row[x*4:x*4+4], ri, bi, e)
		}
	}
}

func (a *Annotator) drawBox(img Image, b Box) {
	x1, y1, x2, y2 := px(b.X1, img.W), px(b.Y1, img.H), px(b.X2, img.W), px(b.Y2, img.H)
	if x2 < x1 {
		x1, x2 = x2, x1
	}
	if y2 < y1 {
		y1, y2 = y2, y1
	}
	ri, bi := offsets(img.Format)
	cx, cy := float64(x1+x2)/2, float64(y1+y2)/2
	r := max(float64(x2-x1), float64(y2-y1)) / 2
	if r < 1 {
		r = 1
	}
	scale := (lutN - 1) / (r * r)
	lo, hi := img.rows()
	for y := max(y1, lo); y <= min(y2, hi-1); y++ {
		dy := float64(y) - cy
		row := img.Pix[y*img.Stride:]
		for x := x1; x <= x2; x++ {
			dx := float64(x) - cx
			idx := int((dx*dx + dy*dy) * scale)
			if idx >= lutN {
				idx = lutN - 1
			}
			e := &a.bbox.c[idx]
			if e[3] != 256 {
				blend(row[x*4:x*4+4], ri, bi, e)
			}
		}
	}
	bw := int(math.Round(a.cfg.BBoxHeat.BorderWidth))
	if bw <= 0 {
		return
	}
	c := a.cfg.BBoxHeat.Border
	fill(img, x1, y1, x2, min(y1+bw-1, y2), c)          // top
	fill(img, x1, max(y2-bw+1, y1+bw), x2, y2, c)       // bottom
	fill(img, x1, y1+bw, min(x1+bw-1, x2), y2-bw, c)    // left
	fill(img, max(x2-bw+1, x1+bw), y1+bw, x2, y2-bw, c) // right
}

func premul(c Color, alpha uint8) [4]uint32 {
	a := uint32(alpha) + uint32(alpha>>7) // 0..256
	return [4]uint32{uint32(c.R) * a, uint32(c.G) * a, uint32(c.B) * a, 256 - a}
}

// fill blends c over the rectangle [x1,x2]x[y1,y2] (inclusive, clipped).
func fill(img Image, x1, y1, x2, y2 int, c Color) {
	lo, hi := img.rows()
	x1, y1 = max(x1, 0), max(y1, lo)
	x2, y2 = min(x2, img.W-1), min(y2, hi-1)
	if x1 > x2 || y1 > y2 || c.A == 0 {
		return
	}
	e := premul(c, c.A)
	ri, bi := offsets(img.Format)
	for y := y1; y <= y2; y++ {
		row := img.Pix[y*img.Stride:]
		for x := x1; x <= x2; x++ {
			blend(row[x*4:x*4+4], ri, bi, &e)
		}
	}
}

// line draws a 3-pixel-wide line, each pixel blended once.
func line(img Image, x1, y1, x2, y2 int, c Color, alpha uint8) {
	if alpha == 0 {
		return
	}
	e := premul(c, alpha)
	ri, bi := offsets(img.Format)
	dx, dy := x2-x1, y2-y1
	steps := max(abs(dx), abs(dy))
	if steps == 0 {
		return
	}
	horiz := abs(dx) >= abs(dy)
	lo, hi := img.rows()
	for i := 0; i <= steps; i++ {
		x := x1 + int(math.Round(float64(dx*i)/float64(steps)))
		y := y1 + int(math.Round(float64(dy*i)/float64(steps)))
		for o := -1; o <= 1; o++ {
			xx, yy := x, y
			if horiz {
				yy += o
			} else {
				xx += o
			}
			if xx < 0 || yy < lo || xx >= img.W || yy >= hi {
				continue
			}
			blend(img.Pix[yy*img.Stride+xx*4:yy*img.Stride+xx*4+4], ri, bi, &e)
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
