package ocr

import (
	"image"
	"math"
)

// sizing is how blocks are resampled: to a fixed factor (1..8), or to
// lines of about targetLine pixels; second is the sizing of a second
// reading (Engine.Reread), lines of about secondLine pixels up to
// secondMaxScale, so Tesseract sees other pixels than the first time;
// psm, when set, is the segmentation mode Tesseract reads them with.
type sizing struct {
	fixed  int
	second bool
	psm    int  // Tesseract's page segmentation mode, 0 for the engine's
	glyphs bool // read as hOCR with the characters weighed at each place (Word.Glyphs)
}

const (
	secondLine     = 56
	secondMaxScale = 4
)

// blockScale is the resampling factor that brings a block's lines to
// about targetLine pixels: a whole factor when enlarging (sharp), any
// factor when shrinking.
func blockScale(h int, sz sizing) float64 {
	if sz.fixed > 0 {
		return float64(sz.fixed)
	}
	target, most := float64(targetLine), float64(maxScale)
	if sz.second {
		target, most = secondLine, secondMaxScale
	}
	s := target / float64(max(h, 1))
	if s >= 1 {
		return math.Min(math.Round(s), most)
	}
	return math.Max(s, 0.2)
}

// stack resamples each block by its scale and stacks them, left-aligned,
// on one white page; it returns the page and the blocks with dst set.
func stack(g gray, rects []image.Rectangle, sz sizing, buf []uint8) (gray, []block) {
	bs := make([]block, len(rects))
	w, h := 0, blockGap
	for i, r := range rects {
		s := blockScale(r.Dy(), sz)
		dw, dh := max(1, int(math.Round(float64(r.Dx())*s))), max(1, int(math.Round(float64(r.Dy())*s)))
		pad := max(8, int(float64(targetLine)/4))
		bs[i] = block{src: r, scale: s, dst: image.Rect(pad, h, pad+dw, h+dh)}
		w = max(w, dw+2*pad)
		h += dh + blockGap
	}
	out := gray{pix: grow(&buf, w*h), w: w, h: h}
	for i := range out.pix {
		out.pix[i] = 255
	}
	for _, b := range bs {
		resample(g, b.src, out, b.dst)
	}
	return out, bs
}

// resample draws src of g into dst of out: bilinear when enlarging, the
// mean of the covered pixels when shrinking.
func resample(g gray, src image.Rectangle, out gray, dst image.Rectangle) {
	sx := float64(src.Dx()) / float64(dst.Dx())
	sy := float64(src.Dy()) / float64(dst.Dy())
	for Y := dst.Min.Y; Y < dst.Max.Y; Y++ {
		o := out.pix[Y*out.w : (Y+1)*out.w]
		fy0 := float64(Y-dst.Min.Y) * sy
		for X := dst.Min.X; X < dst.Max.X; X++ {
			fx0 := float64(X-dst.Min.X) * sx
			if sx > 1 || sy > 1 {
				// Box filter over the source pixels this one covers.
				x0, y0 := src.Min.X+int(fx0), src.Min.Y+int(fy0)
				x1 := min(src.Max.X, src.Min.X+int(math.Ceil(fx0+sx)))
				y1 := min(src.Max.Y, src.Min.Y+int(math.Ceil(fy0+sy)))
				sum, n := 0, 0
				for y := y0; y < max(y1, y0+1); y++ {
					row := g.pix[y*g.w:]
					for x := x0; x < max(x1, x0+1); x++ {
						sum += int(row[x])
						n++
					}
				}
				o[X] = uint8(sum / n)
				continue
			}
			// Bilinear, sampling at pixel centres.
			fx := (float64(X-dst.Min.X)+0.5)*sx - 0.5
			fy := (float64(Y-dst.Min.Y)+0.5)*sy - 0.5
			fx, fy = math.Max(fx, 0), math.Max(fy, 0)
			ix, iy := int(fx), int(fy)
			ax, ay := fx-float64(ix), fy-float64(iy)
			x0, y0 := src.Min.X+ix, src.Min.Y+iy
			x1, y1 := min(x0+1, src.Max.X-1), min(y0+1, src.Max.Y-1)
			x0, y0 = min(x0, src.Max.X-1), min(y0, src.Max.Y-1)
			p := func(x, y int) float64 { return float64(g.pix[y*g.w+x]) }
			v := (p(x0, y0)*(1-ax)+p(x1, y0)*ax)*(1-ay) + (p(x0, y1)*(1-ax)+p(x1, y1)*ax)*ay
			o[X] = uint8(v + 0.5)
		}
	}
}
