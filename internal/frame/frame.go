package frame

import (
	"fmt"
	"image"
	"time"
)

// Frame is one capture of a target. Pix holds BGRX pixels, Stride bytes per
// row. A Frame is immutable once published: consumers share it and must not
// write to Pix.
type Frame struct {
	Pix     []byte
	Stride  int
	W, H    int
	Display string    // X display name, ":99"
	Target  string    // "screen", "window:0x1a00003", "crop:100,100,900,900"
	At      time.Time // capture time
	Hash    uint64    // content hash of the W*H visible pixels (pad bytes excluded)

	// Resample is the resize mode JPEG uses when it downsizes: Exact (the
	// zero value) or Fast. Sub views inherit it.
	Resample Mode

	enc  encodings // memoized encodings, at most one per (size, quality)
	life *lifetime // the holds on an owned buffer, nil if none (lifetime.go)
}

// New returns a frame of w*h BGRX pixels in pix (stride bytes per row) with
// its Hash computed. It panics if pix is too short, like an index out of
// range would.
func New(pix []byte, w, h, stride int, display, target string, at time.Time) *Frame {
	checkBuf("frame.New", pix, w, h, stride)
	return &Frame{Pix: pix, Stride: stride, W: w, H: h, Display: display, Target: target, At: at,
		Hash: Hash(pix, w, h, stride)}
}

// Bounds returns the frame's rectangle, origin at (0,0).
func (f *Frame) Bounds() image.Rectangle { return image.Rect(0, 0, f.W, f.H) }

// Sub returns a view of r within f (intersected with its bounds) sharing the
// same pixels, with Hash recomputed for the view and Target set to target.
// An empty intersection gives a 0x0 frame. The view is a holder of its own
// of an owned buffer (Retain): release it, and f, independently.
func (f *Frame) Sub(r image.Rectangle, target string) *Frame {
	r = r.Intersect(f.Bounds())
	s := &Frame{Stride: f.Stride, W: r.Dx(), H: r.Dy(), Display: f.Display, Target: target, At: f.At,
		Resample: f.Resample, life: f.life}
	s.Retain()
	if r.Empty() {
		s.W, s.H = 0, 0
		s.Hash = Hash(nil, 0, 0, 0)
		return s
	}
	start := r.Min.Y*f.Stride + r.Min.X*4
	end := (r.Max.Y-1)*f.Stride + r.Max.X*4
	s.Pix = f.Pix[start:end:end]
	s.Hash = Hash(s.Pix, s.W, s.H, s.Stride)
	return s
}

// RGBA converts the frame into a new image.RGBA (a copy; for OCR, annotation
// and tests, never on the judge's JPEG path). Alpha is 255.
func (f *Frame) RGBA() *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, f.W, f.H))
	bgrxToRGBA(m.Pix, m.Stride, f.Pix, f.W, f.H, f.Stride)
	return m
}

// BlackOut fills the rectangles (clipped to the frame) with black, pad bytes
// included, in f's own buffer, and recomputes f.Hash when any pixel was
// covered. It is for privacy masks applied by the capture package before the
// frame is published: it writes to Pix (so to every Sub view sharing it) and
// drops encodings memoized so far.
func BlackOut(f *Frame, rects ...image.Rectangle) {
	changed := false
	for _, r := range rects {
		r = r.Intersect(f.Bounds())
		if r.Empty() {
			continue
		}
		for y := r.Min.Y; y < r.Max.Y; y++ {
			clear(f.Pix[y*f.Stride+r.Min.X*4 : y*f.Stride+r.Max.X*4])
		}
		changed = true
	}
	if changed {
		f.Hash = Hash(f.Pix, f.W, f.H, f.Stride)
		f.enc.reset()
	}
}

// bgrxToRGBA writes w*h BGRX pixels from src as RGBA (alpha 255) into dst.
func bgrxToRGBA(dst []byte, dstStride int, src []byte, w, h, srcStride int) {
	for y := 0; y < h; y++ {
		s := src[y*srcStride : y*srcStride+w*4]
		d := dst[y*dstStride : y*dstStride+w*4]
		for i := 0; i+3 < len(s) && i+3 < len(d); i += 4 {
			d[i+0] = s[i+2]
			d[i+1] = s[i+1]
			d[i+2] = s[i+0]
			d[i+3] = 0xff
		}
	}
}

// checkBuf panics with a clear message if buf cannot hold w*h pixels at stride.
func checkBuf(op string, buf []byte, w, h, stride int) {
	if w < 0 || h < 0 {
		panic(fmt.Sprintf("%s: negative size %dx%d", op, w, h))
	}
	if w == 0 || h == 0 {
		return
	}
	if stride < w*4 {
		panic(fmt.Sprintf("%s: stride %d is less than 4*width %d", op, stride, w*4))
	}
	if need := (h-1)*stride + w*4; len(buf) < need {
		panic(fmt.Sprintf("%s: buffer of %d bytes is too short for %dx%d at stride %d (need %d)", op, len(buf), w, h, stride, need))
	}
}
