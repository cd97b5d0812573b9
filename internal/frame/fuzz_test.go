package frame

import (
	"math/rand/v2"
	"testing"
)

// FuzzResize checks Resize on arbitrary sizes: no panic, every output pixel
// written, Fast within 2 levels of Exact, and a uniform image stays uniform.
func FuzzResize(f *testing.F) {
	f.Add(uint16(1280), uint16(720), uint16(960), uint16(540), uint16(0), uint64(1))
	f.Add(uint16(7), uint16(3), uint16(3), uint16(2), uint16(4), uint64(2))
	f.Add(uint16(1), uint16(1), uint16(50), uint16(9), uint16(0), uint64(3))
	f.Add(uint16(333), uint16(1), uint16(1), uint16(1), uint16(8), uint64(4))
	f.Add(uint16(40), uint16(600), uint16(3), uint16(7), uint16(1), uint64(5))
	f.Fuzz(func(t *testing.T, sw, sh, dw, dh, pad uint16, seed uint64) {
		sw, sh, dw, dh = sw%700+1, sh%700+1, dw%700+1, dh%700+1
		stride := int(sw)*4 + int(pad%64)
		src := make([]byte, int(sh)*stride)
		rng := rand.New(rand.NewPCG(seed, 1))
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		exact := make([]byte, int(dw)*int(dh)*4+1)
		fast := make([]byte, len(exact))
		exact[len(exact)-1], fast[len(fast)-1] = 0xAB, 0xAB // past the end: untouched
		Resize(exact, int(dw), int(dh), src, int(sw), int(sh), stride, Exact)
		Resize(fast, int(dw), int(dh), src, int(sw), int(sh), stride, Fast)
		if exact[len(exact)-1] != 0xAB || fast[len(fast)-1] != 0xAB {
			t.Fatalf("Resize wrote past dw*dh*4")
		}
		if d := maxLevelDiff(exact, fast); d > 2 {
			t.Fatalf("%dx%d -> %dx%d: Fast differs from Exact by %d levels", sw, sh, dw, dh, d)
		}
		// A uniform image resizes to the same colour in both modes.
		c := [3]byte{byte(seed), byte(seed >> 8), byte(seed >> 16)}
		for y := 0; y < int(sh); y++ {
			for x := 0; x < int(sw); x++ {
				copy(src[y*stride+x*4:], c[:])
			}
		}
		for _, m := range []Mode{Exact, Fast} {
			Resize(exact, int(dw), int(dh), src, int(sw), int(sh), stride, m)
			for i := 0; i < int(dw)*int(dh); i++ {
				if p := exact[i*4 : i*4+4]; p[0] != c[0] || p[1] != c[1] || p[2] != c[2] || p[3] != 0 {
					t.Fatalf("%v %dx%d -> %dx%d of uniform %v: pixel %d = %v", m, sw, sh, dw, dh, c, i, p)
				}
			}
		}
	})
}
