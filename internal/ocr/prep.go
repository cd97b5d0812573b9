package ocr

import (
	"image"
	"image/color"
	"strconv"
	"sync"

	"github.com/acu-dev/acu/internal/frame"
)

// scratch holds the buffers of one recognition, reused across frames.
type scratch struct {
	gray  []uint8
	bg    []bool
	hrun  []uint16
	pgm   []byte
	crop  []uint8
	orig  []uint8
	orig2 []uint8
	area  []uint8
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// grow returns (*buf)[:n], reallocating when too small.
func grow[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n)
	}
	*buf = (*buf)[:n]
	return *buf
}

// gray is an 8-bit grayscale image, one byte per pixel, no padding.
type gray struct {
	pix  []uint8
	w, h int
	// up and down, when set (a part cut from a larger page), are how far
	// each column's flat run through the first (last) row goes on above
	// (below) the part; left and right the same for each row's run
	// through the first (last) column: a window's border or a panel is
	// not taken for ink because the cut made it short.
	up, down, left, right []uint16
}

// grayFromFrame converts BGRX pixels to luminance (BT.601 integer weights).
func grayFromFrame(f *frame.Frame, dst []uint8) gray {
	n := f.W * f.H
	if cap(dst) < n {
		dst = make([]uint8, n)
	}
	dst = dst[:n]
	for y := 0; y < f.H; y++ {
		row := f.Pix[y*f.Stride : y*f.Stride+f.W*4]
		out := dst[y*f.W : (y+1)*f.W]
		for x := range out {
			p := row[x*4 : x*4+3 : x*4+3]
			// B, G, R
			out[x] = uint8((uint32(p[2])*299 + uint32(p[1])*587 + uint32(p[0])*114 + 500) / 1000)
		}
	}
	return gray{pix: dst, w: f.W, h: f.H}
}

// grayFromImage converts any image to luminance, with fast paths for the
// types acu produces.
func grayFromImage(img image.Image) gray {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	g := gray{pix: make([]uint8, w*h), w: w, h: h}
	switch m := img.(type) {
	case *image.Gray:
		for y := 0; y < h; y++ {
			copy(g.pix[y*w:(y+1)*w], m.Pix[(y)*m.Stride:])
		}
	case *image.RGBA:
		for y := 0; y < h; y++ {
			row := m.Pix[y*m.Stride : y*m.Stride+w*4]
			out := g.pix[y*w : (y+1)*w]
			for x := range out {
				p := row[x*4 : x*4+3 : x*4+3]
				out[x] = uint8((uint32(p[0])*299 + uint32(p[1])*587 + uint32(p[2])*114 + 500) / 1000)
			}
		}
	default:
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				g.pix[y*w+x] = color.GrayModel.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.Gray).Y
			}
		}
	}
	return g
}

// Invert modes: how dark themes are turned into dark text on a light ground,
// which is what Tesseract reads best.
const (
	InvertRegions = "regions" // distance from the local background: any theme, mixed themes on one screen
	InvertGlobal  = "global"  // the whole image, by its mean luminance
	InvertNone    = "none"
)

// Threshold modes applied after upscaling.
const (
	ThresholdNone = "none" // leave anti-aliased gray to Tesseract's own binarization
	ThresholdOtsu = "otsu" // global Otsu threshold computed in Go
)

const (
	// bgRun is the flat run length (pixels, across or down) that marks
	// background on a page: text strokes at screen sizes are shorter.
	bgRun = 28
	// areaRun: in regions of large text (flattenArea), a pixel is
	// background only on flat runs this long both across and down.
	areaRun = 48
	// lineRun is the flat run length that marks background in one
	// direction alone: window borders and separators, longer than any
	// stroke of text up to 96 pt at 2x (an "l" is about 195 pixels tall).
	lineRun = 256
	bgTol   = 6 // luminance distance still counted as the same flat colour
	// shortSegment is the longest stretch of non-background pixels on a row
	// judged against its neighbours; longer ones use their own mode.
	shortSegment = 32
	bandHalf     = 8 // rows above and below a long segment that vote for its background
)

// invert makes text dark-on-light in place.
func invert(g gray, mode string, sc *scratch) {
	switch mode {
	case InvertNone:
		return
	case InvertGlobal:
		var sum uint64
		for _, v := range g.pix {
			sum += uint64(v)
		}
		if len(g.pix) > 0 && sum/uint64(len(g.pix)) < 128 {
			for i, v := range g.pix {
				g.pix[i] = 255 - v
			}
		}
		return
	}
	flatten(g, sc)
}

// flatten replaces every pixel by its contrast with the local background,
// drawn dark on white, so text of any colour on any background (dark themes,
// light themes, both on one screen) comes out dark on light with its
// anti-aliasing kept as gray.
//
// Screens are mostly flat colours. A pixel is background when it lies on a
// flat run (within bgTol) at least bgRun long, across or down; text strokes
// are shorter than that at screen sizes (large text is flattened again by
// flattenArea, see largeBlocks in render.go). The other pixels form segments on
// each row. A short segment (a glyph between background pixels) is drawn by
// its distance from the background pixels on either side, taking the larger,
// so text touching the edge of a window of another colour still shows. A
// long one (text whose gaps are too short to be runs, as in a 20-pixel status
// bar, where the nearest runs are the window's border lines) is drawn by its
// distance from its own most common value.
func flatten(g gray, sc *scratch) { flattenRule(g, sc, false) }

// flattenArea is flatten for a region of large text: the inside of a
// stroke of 96 pt bold text at 2x is a flat run up to 38 pixels across
// and 195 down, so there a pixel is background only in a flat area (runs
// of areaRun both across and down) or on a line (a run of lineRun either
// way); glyphs stay solid instead of coming out hollow.
func flattenArea(g gray, sc *scratch) { flattenRule(g, sc, true) }

// flattenRule is flatten, or with area flattenArea: it marks the
// background by the runs through each pixel, then draws every row.
func flattenRule(g gray, sc *scratch, area bool) {
	n := g.w * g.h
	isBG := grow(&sc.bg, n)
	clear(isBG)
	hrun := grow(&sc.hrun, n)
	horizontalRuns(g, hrun)
	markBackground(g, hrun, isBG, area)
	lut := contrastLUT()
	orig := grow(&sc.orig, n)
	copy(orig, g.pix)
	for y := 0; y < g.h; y++ {
		flattenRow(g, orig, isBG, y, &lut)
	}
}

// horizontalRuns sets hrun to the length of the horizontal flat run
// through each pixel of g, capped.
func horizontalRuns(g gray, hrun []uint16) {
	for y := 0; y < g.h; y++ {
		row := g.pix[y*g.w : (y+1)*g.w]
		for x0 := 0; x0 < g.w; {
			x1 := x0 + 1
			for x1 < g.w && absDiff(row[x1], row[x0]) <= bgTol {
				x1++
			}
			n := x1 - x0
			if x0 == 0 && g.left != nil {
				n += int(g.left[y])
			}
			if x1 == g.w && g.right != nil {
				n += int(g.right[y])
			}
			l := uint16(min(n, 65535))
			for x := x0; x < x1; x++ {
				hrun[y*g.w+x] = l
			}
			x0 = x1
		}
	}
}

// markBackground measures the vertical runs and marks in isBG the pixels
// that are background by the rule (flatten's, or with area
// flattenArea's) given their horizontal runs hrun.
func markBackground(g gray, hrun []uint16, isBG []bool, area bool) {
	for x := 0; x < g.w; x++ {
		for y0 := 0; y0 < g.h; {
			v := g.pix[y0*g.w+x]
			y1 := y0 + 1
			for y1 < g.h && absDiff(g.pix[y1*g.w+x], v) <= bgTol {
				y1++
			}
			vl := y1 - y0
			if y0 == 0 && g.up != nil {
				vl += int(g.up[x])
			}
			if y1 == g.h && g.down != nil {
				vl += int(g.down[x])
			}
			for y := y0; y < y1; y++ {
				hl := int(hrun[y*g.w+x])
				bg := vl >= bgRun || hl >= bgRun
				if area {
					bg = (vl >= areaRun && hl >= areaRun) || vl >= lineRun || hl >= lineRun
				}
				if bg {
					isBG[y*g.w+x] = true
				}
			}
			y0 = y1
		}
	}
}

// contrastLUT maps a distance from the background to the pixel drawn.
func contrastLUT() [256]uint8 {
	var lut [256]uint8
	for d := range lut {
		if d <= bgTol {
			lut[d] = 255
		} else {
			lut[d] = uint8(max(0, 255-(d-bgTol)*3))
		}
	}
	return lut
}

// flattenRow draws row y of g: background white, and each segment of
// pixels off the background by its distance from its background (orig
// is g before).
func flattenRow(g gray, orig []uint8, isBG []bool, y int, lut *[256]uint8) {
	row := g.pix[y*g.w : (y+1)*g.w]
	mark := isBG[y*g.w : (y+1)*g.w]
	left := -1 // the background value left of the segment, -1 none
	for x := 0; x < g.w; {
		if mark[x] {
			left = int(row[x])
			row[x] = 255
			x++
			continue
		}
		// A segment of pixels off the background runs: [x, e).
		e := x + 1
		for e < g.w && !mark[e] {
			e++
		}
		right := -1
		if e < g.w {
			right = int(row[e])
		}
		seg := row[x:e]
		if len(seg) > shortSegment {
			mode := bandMode(g, orig, y, x, e)
			for i, v := range seg {
				seg[i] = lut[absDiff(v, uint8(mode))]
			}
		} else {
			drawShort(seg, left, right, lut)
		}
		x = e
	}
}

// bandMode is the background of a long segment [x0, x1) of row y: a
// stretch of text whose own gaps are too short to be runs (a status bar,
// a button). It is the most common value of the band of rows around it
// in orig, where text is a minority even when one row of it (through the
// bars of a run of e's) is mostly ink.
func bandMode(g gray, orig []uint8, y, x0, x1 int) int {
	var hist [256]uint32
	for yy := max(0, y-bandHalf); yy < min(g.h, y+bandHalf+1); yy++ {
		for _, v := range orig[yy*g.w+x0 : yy*g.w+x1] {
			hist[v]++
		}
	}
	mode := 0
	for i, c := range hist {
		if c > hist[mode] {
			mode = i
		}
	}
	return mode
}

// drawShort draws a short segment: a glyph between background pixels
// (left and right, -1 for none); compared with them, taking the larger
// difference so text touching the edge of a window of another colour
// still shows.
func drawShort(seg []uint8, left, right int, lut *[256]uint8) {
	for i, v := range seg {
		d := 0
		switch {
		case left < 0 && right < 0:
			d = 255 - int(v) // no background on this row: assume light
		default:
			if left >= 0 {
				d = absDiff(v, uint8(left))
			}
			if right >= 0 {
				d = max(d, absDiff(v, uint8(right)))
			}
		}
		seg[i] = lut[d]
	}
}

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

// otsu returns the threshold that best separates g's histogram in two.
func otsu(g gray) uint8 {
	var hist [256]int
	for _, v := range g.pix {
		hist[v]++
	}
	total := len(g.pix)
	var sum float64
	for i, c := range hist {
		sum += float64(i * c)
	}
	var sumB, best float64
	wB, t := 0, 127
	for i, c := range hist {
		wB += c
		if wB == 0 {
			continue
		}
		wF := total - wB
		if wF == 0 {
			break
		}
		sumB += float64(i * c)
		mB := sumB / float64(wB)
		mF := (sum - sumB) / float64(wF)
		between := float64(wB) * float64(wF) * (mB - mF) * (mB - mF)
		if between > best {
			best, t = between, i
		}
	}
	return uint8(t)
}

// pgm upscales g by an integer factor with bilinear interpolation, applies
// the threshold, and returns it as a binary PGM (P5) ready for Tesseract's
// standard input. buf is reused when large enough.
func pgm(g gray, scale int, threshold string, buf []byte) []byte {
	w, h := g.w*scale, g.h*scale
	header := "P5\n" + strconv.Itoa(w) + " " + strconv.Itoa(h) + "\n255\n"
	n := len(header) + w*h
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	copy(buf, header)
	out := buf[len(header):]

	var lut [256]uint8
	for i := range lut {
		lut[i] = uint8(i)
	}
	if threshold == ThresholdOtsu {
		t := otsu(g)
		for i := range lut {
			if i > int(t) {
				lut[i] = 255
			} else {
				lut[i] = 0
			}
		}
	}
	if scale == 1 {
		for i, v := range g.pix {
			out[i] = lut[v]
		}
		return buf
	}
	// Source coordinate of output pixel X is (X+0.5)/s-0.5, in 8.8 fixed point.
	x0 := make([]int32, w)
	fx := make([]int32, w)
	for X := 0; X < w; X++ {
		sx := ((2*X+1)*256)/(2*scale) - 128
		if sx < 0 {
			sx = 0
		}
		i := sx >> 8
		if i >= g.w-1 {
			i, sx = g.w-1, (g.w-1)<<8
		}
		x0[X], fx[X] = int32(i), int32(sx&255)
	}
	for Y := 0; Y < h; Y++ {
		sy := ((2*Y+1)*256)/(2*scale) - 128
		if sy < 0 {
			sy = 0
		}
		j := sy >> 8
		if j >= g.h-1 {
			j, sy = g.h-1, (g.h-1)<<8
		}
		wy := int32(sy & 255)
		r0 := g.pix[j*g.w : (j+1)*g.w]
		r1 := r0
		if j+1 < g.h {
			r1 = g.pix[(j+1)*g.w : (j+2)*g.w]
		}
		o := out[Y*w : (Y+1)*w]
		for X := range o {
			i := x0[X]
			a := int32(r0[i])
			c := int32(r1[i])
			b, d := a, c
			if int(i)+1 < g.w {
				b, d = int32(r0[i+1]), int32(r1[i+1])
			}
			wx := fx[X]
			top := a*(256-wx) + b*wx
			bot := c*(256-wx) + d*wx
			o[X] = lut[(top*(256-wy)+bot*wy+32768)>>16]
		}
	}
	return buf
}
