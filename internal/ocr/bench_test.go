package ocr

import (
	"context"
	"image/png"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/frame"
)

// benchFrame loads a 1024x600 screenshot of the judge benchmark set.
func benchFrame(b *testing.B) *frame.Frame {
	b.Helper()
	fh, err := os.Open("../judge/testdata/bench/page-loaded.png")
	if err != nil {
		b.Fatal(err)
	}
	defer fh.Close()
	img, err := png.Decode(fh)
	if err != nil {
		b.Fatal(err)
	}
	g := grayFromImage(img)
	w, h := g.w, g.h
	pix := make([]byte, w*h*4)
	for i, v := range g.pix {
		pix[i*4], pix[i*4+1], pix[i*4+2] = v, v, v
	}
	return frame.New(pix, w, h, w*4, ":0", "screen", time.Time{})
}

// BenchmarkPreprocess is the Go side of one recognition of a 1024x600
// frame with the default settings: grayscale, background flattening, text
// blocks cut, large text redrawn, each block scaled and stacked into a PGM.
func BenchmarkPreprocess(b *testing.B) {
	f := benchFrame(b)
	sc := new(scratch)
	b.ReportAllocs()
	b.SetBytes(int64(f.W * f.H * 4))
	for b.Loop() {
		g := grayFromFrame(f, sc.gray)
		sc.gray = g.pix
		st, _ := prepare(g, sizing{}, sc)
		sc.pgm = pgm(st, 1, ThresholdNone, sc.pgm)
	}
}

// BenchmarkRecognizeFrame runs Tesseract on a 1024x600 frame, uncached, at
// each upscale factor.
func BenchmarkRecognizeFrame(b *testing.B) {
	f := benchFrame(b)
	for _, scale := range []int{2, 3} {
		b.Run("scale="+strconv.Itoa(scale), func(b *testing.B) {
			e, err := New(Options{Scale: scale, CacheSize: -1})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.RecognizeFrame(context.Background(), f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRecognizeFrameCached is the cost of asking again about a frame
// already read.
func BenchmarkRecognizeFrameCached(b *testing.B) {
	f := benchFrame(b)
	e, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.RecognizeFrame(context.Background(), f); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.RecognizeFrame(context.Background(), f); err != nil {
			b.Fatal(err)
		}
	}
}
