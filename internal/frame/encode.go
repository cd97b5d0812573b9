package frame

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/jpeg"
	"sync"
)

// encodings memoizes encoded forms of a frame.
type encodings struct {
	mu    sync.Mutex
	jpegs []*encoded
	png   *encoded
}

// encoded is one memoized encoding; once makes concurrent callers encode once.
type encoded struct {
	w, h, quality int
	once          sync.Once
	b             []byte
	err           error

	b64Once sync.Once
	b64     []byte // standard base64 of b, for model requests
}

func (e *encodings) reset() {
	e.mu.Lock()
	e.jpegs, e.png = nil, nil
	e.mu.Unlock()
}

// entry returns the memo for a JPEG of w*h at quality, or for the PNG when
// quality is 0.
func (e *encodings) entry(w, h, quality int) *encoded {
	e.mu.Lock()
	defer e.mu.Unlock()
	if quality == 0 {
		if e.png == nil {
			e.png = &encoded{w: w, h: h}
		}
		return e.png
	}
	for _, j := range e.jpegs {
		if j.w == w && j.h == h && j.quality == quality {
			return j
		}
	}
	j := &encoded{w: w, h: h, quality: quality}
	e.jpegs = append(e.jpegs, j)
	return j
}

// JPEG returns the frame downsized so its long side is at most maxDim
// (TargetSize; maxDim < 1 means full size, never upscaled) with f.Resample
// and encoded as JPEG at quality (EncodeJPEG). The result is memoized per
// output size and quality: a frame shared by many consumers is encoded
// once, concurrent callers wait for that one encoding. Callers must not
// modify the returned slice.
func (f *Frame) JPEG(maxDim, quality int) ([]byte, error) {
	if quality < 1 || quality > 100 {
		return nil, fmt.Errorf("encode frame %s on %s as JPEG at quality %d: use 1..100", f.Target, f.Display, quality)
	}
	tw, th := f.W, f.H
	if maxDim > 0 {
		tw, th = TargetSize(f.W, f.H, maxDim)
	}
	e := f.enc.entry(tw, th, quality)
	e.once.Do(func() {
		e.b, e.err = f.encodeJPEG(tw, th, quality)
		if e.err != nil {
			e.err = fmt.Errorf("encode frame %s on %s at %dx%d as JPEG: %w", f.Target, f.Display, tw, th, e.err)
		}
	})
	return e.b, e.err
}

// JPEGBase64 returns JPEG(maxDim, quality) and its standard base64, both
// memoized: the many model requests that send one frame (one per waiting
// condition) share one base64 copy instead of encoding their own. Callers
// must not modify the returned slices.
func (f *Frame) JPEGBase64(maxDim, quality int) (jpg, b64 []byte, err error) {
	jpg, err = f.JPEG(maxDim, quality)
	if err != nil {
		return nil, nil, err
	}
	tw, th := f.W, f.H
	if maxDim > 0 {
		tw, th = TargetSize(f.W, f.H, maxDim)
	}
	e := f.enc.entry(tw, th, quality)
	e.b64Once.Do(func() { e.b64 = base64.StdEncoding.AppendEncode(nil, jpg) })
	return jpg, e.b64, nil
}

// resizeBufs keeps a few resized-frame buffers of JPEG for reuse. Unlike a
// sync.Pool it is not emptied by garbage collections, which run every few
// frames while frames are captured: a new 2 MB buffer costs hundreds of page
// faults each time (milliseconds on a busy VM), a kept one none.
var resizeBufs = make(chan []byte, maxBands)

func getResizeBuf(n int) []byte {
	select {
	case b := <-resizeBufs:
		if cap(b) >= n {
			return b[:n]
		}
	default:
	}
	return make([]byte, n)
}

func putResizeBuf(b []byte) {
	select {
	case resizeBufs <- b:
	default:
	}
}

func (f *Frame) encodeJPEG(tw, th, quality int) ([]byte, error) {
	if tw == f.W && th == f.H {
		return EncodeJPEG(nil, f.Pix, f.W, f.H, f.Stride, quality)
	}
	buf := getResizeBuf(tw * th * 4)
	Resize(buf, tw, th, f.Pix, f.W, f.H, f.Stride, f.Resample)
	b, err := EncodeJPEG(nil, buf, tw, th, tw*4, quality)
	putResizeBuf(buf)
	return b, err
}

// PNG returns the full-resolution frame as PNG (for saved screenshots),
// memoized like JPEG. Callers must not modify the returned slice.
func (f *Frame) PNG() ([]byte, error) {
	e := f.enc.entry(f.W, f.H, 0)
	e.once.Do(func() {
		e.b, e.err = EncodePNG(f.Pix, f.W, f.H, f.Stride)
		if e.err != nil {
			e.err = fmt.Errorf("encode frame %s on %s as PNG: %w", f.Target, f.Display, e.err)
		}
	})
	return e.b, e.err
}

// EncodePNG encodes w*h BGRX pixels (stride bytes per row) as an opaque RGB
// PNG, compressing row strips in parallel (see PNGEncoder).
func EncodePNG(pix []byte, w, h, stride int) ([]byte, error) {
	if w <= 0 || h <= 0 {
		return nil, fmt.Errorf("encode %dx%d PNG: empty image", w, h)
	}
	checkBuf("frame.EncodePNG", pix, w, h, stride)
	e, _ := pngEncoders.Get().(*PNGEncoder)
	if e == nil {
		e = new(PNGEncoder)
	}
	b := e.Encode(pix, w, h, stride)
	pngEncoders.Put(e)
	return b, nil
}

// pngEncoders keeps PNG encoders (their strip buffers and compressors) for
// EncodePNG's callers.
var pngEncoders sync.Pool

func checkEncode(pix []byte, w, h, stride, quality int) error {
	if w <= 0 || h <= 0 {
		return fmt.Errorf("encode %dx%d JPEG: empty image", w, h)
	}
	if quality < 1 || quality > 100 {
		return fmt.Errorf("encode JPEG at quality %d: use 1..100", quality)
	}
	checkBuf("frame.EncodeJPEG", pix, w, h, stride)
	return nil
}

// rgbaBufs recycles encodeStdJPEG's conversion buffers.
var rgbaBufs sync.Pool // *[]byte

// encodeStdJPEG is EncodeJPEG with image/jpeg (4:2:0): the build without
// cgo uses it; the cgo build keeps it for benchmarks and tests.
func encodeStdJPEG(dst []byte, pix []byte, w, h, stride, quality int) ([]byte, error) {
	if err := checkEncode(pix, w, h, stride, quality); err != nil {
		return nil, err
	}
	bp, _ := rgbaBufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	*bp = grow(*bp, w*h*4)
	m := &image.RGBA{Pix: *bp, Stride: w * 4, Rect: image.Rect(0, 0, w, h)}
	bgrxToRGBA(m.Pix, m.Stride, pix, w, h, stride)
	out := bytes.NewBuffer(dst[:0])
	err := jpeg.Encode(out, m, &jpeg.Options{Quality: quality})
	rgbaBufs.Put(bp)
	if err != nil {
		return nil, fmt.Errorf("encode %dx%d JPEG with image/jpeg: %w", w, h, err)
	}
	return out.Bytes(), nil
}
