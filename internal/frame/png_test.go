package frame

import (
	"bytes"
	"hash/adler32"
	"image/png"
	"math/rand/v2"
	"testing"
)

func TestPNGEncoderRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var e PNGEncoder
	for _, sz := range [][2]int{{1, 1}, {3, 2}, {640, 63}, {1280, 720}, {333, 517}} {
		w, h := sz[0], sz[1]
		stride := w*4 + 8
		pix := make([]byte, stride*h)
		for i := range pix {
			// Runs of equal bytes and noise, so deflate uses matches too.
			if i%97 < 50 {
				pix[i] = byte(i / 97)
			} else {
				pix[i] = byte(r.Uint32())
			}
		}
		b := e.Encode(pix, w, h, stride)
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%dx%d: decode: %v", w, h, err)
		}
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				R, G, B, A := img.At(x, y).RGBA()
				p := pix[y*stride+4*x:]
				if byte(R>>8) != p[2] || byte(G>>8) != p[1] || byte(B>>8) != p[0] || A != 0xffff {
					t.Fatalf("%dx%d: pixel %d,%d = %d,%d,%d, want %d,%d,%d", w, h, x, y, R>>8, G>>8, B>>8, p[2], p[1], p[0])
				}
			}
		}
	}
}

func TestAdler32Combine(t *testing.T) {
	a := bytes.Repeat([]byte("acu agent "), 10000)
	b := bytes.Repeat([]byte{0xff, 0x00, 0x7f}, 30001)
	got := adler32Combine(adler32.Checksum(a), adler32.Checksum(b), int64(len(b)))
	if want := adler32.Checksum(append(append([]byte{}, a...), b...)); got != want {
		t.Errorf("adler32Combine = %08x, want %08x", got, want)
	}
}
