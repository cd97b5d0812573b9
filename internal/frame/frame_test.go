package frame

import (
	"image"
	"image/color"
	"math/rand/v2"
	"testing"
	"time"
)

// testFrame returns a w*h frame of random pixels with garbage pad bytes and
// row tails (stride w*4+pad).
func testFrame(w, h, pad int, seed uint64) *Frame {
	stride := w*4 + pad
	pix := make([]byte, h*stride)
	rng := rand.New(rand.NewPCG(seed, seed+1))
	for i := range pix {
		pix[i] = byte(rng.Uint32())
	}
	return New(pix, w, h, stride, ":99", "screen", timeZero)
}

func TestHashOnePixelChanges(t *testing.T) {
	for _, sz := range []struct{ w, h, pad int }{{1, 1, 0}, {7, 3, 4}, {8, 2, 0}, {33, 17, 12}, {64, 5, 0}} {
		f := testFrame(sz.w, sz.h, sz.pad, 9)
		base := Hash(f.Pix, f.W, f.H, f.Stride)
		if base != f.Hash {
			t.Fatalf("New set Hash %x, Hash() = %x", f.Hash, base)
		}
		// Every pixel, every visible channel, a one-bit and a full flip.
		for y := 0; y < f.H; y++ {
			for x := 0; x < f.W; x++ {
				for c := 0; c < 3; c++ {
					for _, flip := range []byte{0x01, 0x80, 0xff} {
						o := y*f.Stride + x*4 + c
						f.Pix[o] ^= flip
						if got := Hash(f.Pix, f.W, f.H, f.Stride); got == base {
							t.Errorf("%dx%d: Hash unchanged after flipping %#x in channel %d of pixel (%d,%d)", f.W, f.H, flip, c, x, y)
						}
						f.Pix[o] ^= flip
					}
				}
			}
		}
		if got := Hash(f.Pix, f.W, f.H, f.Stride); got != base {
			t.Fatalf("Hash not restored: %x, want %x", got, base)
		}
	}
}

func TestHashIgnoresPadAndRowTail(t *testing.T) {
	f := testFrame(37, 11, 20, 5)
	g := testFrame(37, 11, 20, 6) // different garbage everywhere...
	for y := 0; y < f.H; y++ {    // ...but the same visible pixels
		for x := 0; x < f.W; x++ {
			o := y*f.Stride + x*4
			copy(g.Pix[o:o+3], f.Pix[o:o+3])
		}
	}
	if hf, hg := Hash(f.Pix, f.W, f.H, f.Stride), Hash(g.Pix, g.W, g.H, g.Stride); hf != hg {
		t.Errorf("Hash differs only by pad bytes and row tails: %x vs %x", hf, hg)
	}
	// Same pixels packed at another stride.
	packed := make([]byte, f.W*f.H*4)
	for y := 0; y < f.H; y++ {
		copy(packed[y*f.W*4:], f.Pix[y*f.Stride:y*f.Stride+f.W*4])
	}
	if hp := Hash(packed, f.W, f.H, f.W*4); hp != f.Hash {
		t.Errorf("Hash depends on stride: %x vs %x", hp, f.Hash)
	}
}

func TestHashIncludesSize(t *testing.T) {
	pix := make([]byte, 64*4)
	seen := map[uint64]string{}
	for _, s := range [][2]int{{64, 1}, {1, 64}, {32, 2}, {2, 32}, {16, 4}, {8, 8}, {0, 0}, {0, 5}} {
		h := Hash(pix, s[0], s[1], s[0]*4)
		if prev, ok := seen[h]; ok {
			t.Errorf("black %dx%d hashes like %s", s[0], s[1], prev)
		}
		seen[h] = image.Pt(s[0], s[1]).String()
	}
}

func TestSub(t *testing.T) {
	f := testFrame(40, 30, 8, 1)
	tests := []struct {
		name string
		r    image.Rectangle
		want image.Rectangle // in f's coordinates
	}{
		{"inside", image.Rect(5, 6, 17, 20), image.Rect(5, 6, 17, 20)},
		{"whole", image.Rect(0, 0, 40, 30), image.Rect(0, 0, 40, 30)},
		{"clipped", image.Rect(-5, 25, 10, 99), image.Rect(0, 25, 10, 30)},
		{"one_pixel", image.Rect(39, 29, 40, 30), image.Rect(39, 29, 40, 30)},
		{"outside", image.Rect(50, 50, 60, 60), image.Rectangle{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := f.Sub(tt.r, "crop:x")
			if s.W != tt.want.Dx() || s.H != tt.want.Dy() {
				t.Fatalf("Sub(%v) is %dx%d, want %dx%d", tt.r, s.W, s.H, tt.want.Dx(), tt.want.Dy())
			}
			if s.Target != "crop:x" || s.Display != f.Display || s.At != f.At {
				t.Errorf("Sub(%v) = target %q display %q at %v", tt.r, s.Target, s.Display, s.At)
			}
			if s.Hash != Hash(s.Pix, s.W, s.H, s.Stride) {
				t.Errorf("Sub(%v).Hash not the view's hash", tt.r)
			}
			for y := 0; y < s.H; y++ {
				for x := 0; x < s.W; x++ {
					got := s.Pix[y*s.Stride+x*4 : y*s.Stride+x*4+3]
					o := (tt.want.Min.Y+y)*f.Stride + (tt.want.Min.X+x)*4
					want := f.Pix[o : o+3]
					if string(got) != string(want) {
						t.Fatalf("Sub(%v) pixel (%d,%d) = %v, want %v", tt.r, x, y, got, want)
					}
				}
			}
			if s.W > 0 {
				// A view shares pixels: a write to f shows through.
				o := tt.want.Min.Y*f.Stride + tt.want.Min.X*4
				f.Pix[o] ^= 0xff
				if s.Pix[0] != f.Pix[o] {
					t.Errorf("Sub(%v) does not share f's pixels", tt.r)
				}
				f.Pix[o] ^= 0xff
			}
		})
	}
	// A Sub of a Sub.
	s := f.Sub(image.Rect(10, 10, 30, 30), "a").Sub(image.Rect(5, 5, 8, 9), "b")
	if want := f.Sub(image.Rect(15, 15, 18, 19), "b"); s.Hash != want.Hash || s.W != 3 || s.H != 4 {
		t.Errorf("Sub of Sub = %dx%d hash %x, want 3x4 hash %x", s.W, s.H, s.Hash, want.Hash)
	}
}

func TestRGBA(t *testing.T) {
	f := testFrame(9, 4, 4, 2)
	m := f.RGBA()
	for y := 0; y < f.H; y++ {
		for x := 0; x < f.W; x++ {
			o := y*f.Stride + x*4
			want := color.RGBA{f.Pix[o+2], f.Pix[o+1], f.Pix[o], 255}
			if got := m.RGBAAt(x, y); got != want {
				t.Fatalf("RGBA().At(%d,%d) = %v, want %v", x, y, got, want)
			}
		}
	}
}

func TestBlackOut(t *testing.T) {
	f := testFrame(20, 10, 4, 3)
	before := f.Hash
	orig := append([]byte(nil), f.Pix...)
	BlackOut(f, image.Rect(2, 3, 5, 6), image.Rect(18, 8, 30, 30), image.Rect(-1, -1, 0, 0))
	if f.Hash == before || f.Hash != Hash(f.Pix, f.W, f.H, f.Stride) {
		t.Errorf("BlackOut did not recompute Hash")
	}
	inside := func(x, y int) bool {
		return image.Pt(x, y).In(image.Rect(2, 3, 5, 6)) || image.Pt(x, y).In(image.Rect(18, 8, 20, 10))
	}
	for y := 0; y < f.H; y++ {
		for x := 0; x < f.W; x++ {
			o := y*f.Stride + x*4
			got := f.Pix[o : o+4]
			if inside(x, y) {
				if string(got) != "\x00\x00\x00\x00" {
					t.Errorf("pixel (%d,%d) = %v, want black", x, y, got)
				}
			} else if string(got) != string(orig[o:o+4]) {
				t.Errorf("pixel (%d,%d) changed outside the rectangles", x, y)
			}
		}
	}
	h := f.Hash
	BlackOut(f, image.Rect(100, 100, 200, 200))
	if f.Hash != h {
		t.Errorf("BlackOut outside the frame changed Hash")
	}
}

var timeZero = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
