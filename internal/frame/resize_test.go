package frame

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// loadBGRX reads a PNG from testdata as BGRX with garbage pad bytes and
// extra bytes at the end of every row (stride > 4*width).
func loadBGRX(t testing.TB, name string) (pix []byte, w, h, stride int) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
	b := m.Bounds()
	w, h = b.Dx(), b.Dy()
	stride = w*4 + 12
	pix = make([]byte, h*stride)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range pix {
		pix[i] = byte(rng.Uint32()) // pad bytes and row tails stay garbage
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			r, g, bl, _ := m.At(b.Min.X+x, b.Min.Y+y).RGBA()
			o := y*stride + x*4
			pix[o], pix[o+1], pix[o+2] = byte(bl>>8), byte(g>>8), byte(r>>8)
		}
	}
	return pix, w, h, stride
}

// rgbBytes returns w*h BGRX pixels (stride w*4) as packed RGB, like Pillow's tobytes().
func rgbBytes(pix []byte, w, h int) []byte {
	out := make([]byte, 0, w*h*3)
	for i := 0; i < w*h; i++ {
		out = append(out, pix[i*4+2], pix[i*4+1], pix[i*4])
	}
	return out
}

func TestTargetSize(t *testing.T) {
	tests := []struct {
		w, h, max    int
		wantW, wantH int
	}{
		{1280, 720, 960, 960, 540},
		{1920, 1080, 960, 960, 540},
		{720, 1280, 960, 540, 960},
		{960, 540, 960, 960, 540}, // already small enough
		{800, 600, 960, 800, 600}, // never upscales
		{3840, 2160, 960, 960, 540},
		{1000, 1, 10, 10, 1}, // clamps to 1
		{1, 1000, 10, 1, 10},
		{1366, 768, 960, 960, 540},     // 539.75 -> 540
		{1025, 1023, 1024, 1024, 1022}, // 1022.002 -> 1022
		{5, 3, 2, 2, 1},                // 1.2 -> 1
		{5, 3, 4, 4, 2},                // 2.4 -> 2
		{10, 5, 3, 3, 2},               // 1.5 -> 2 (half to even)
		{10, 25, 6, 2, 6},              // 2.4 -> 2
		{14, 5, 4, 4, 1},               // 1.4286 -> 1
		{6, 5, 2, 2, 2},                // 1.6667 -> 2
		{4, 10, 5, 2, 5},               // 2.0
		{6, 10, 5, 3, 5},               // 3.0
		{10, 3, 5, 5, 2},               // 1.5 -> 2 (half to even)
		{10, 5, 5, 5, 2},               // 2.5 -> 2 (half to even, not half up)
		{10, 5, 1, 1, 1},               // 0.5 -> 0 -> clamped to 1
		{100, 50, 0, 1, 1},             // like the reference: max_dim 0 gives 1x1
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%dx%d_max%d", tt.w, tt.h, tt.max), func(t *testing.T) {
			w, h := TargetSize(tt.w, tt.h, tt.max)
			if w != tt.wantW || h != tt.wantH {
				t.Errorf("TargetSize(%d, %d, %d) = %d, %d, want %d, %d", tt.w, tt.h, tt.max, w, h, tt.wantW, tt.wantH)
			}
		})
	}
}

// TestResizeExactGolden checks Exact against Pillow's BILINEAR on real screen
// content: 960x540 as a PNG, and many crops and sizes (down, up, odd, 1 px)
// by SHA-256 of Pillow's RGB bytes. Regenerate with testdata/golden.py.
func TestResizeExactGolden(t *testing.T) {
	pix, w, h, stride := loadBGRX(t, "screen.png")

	t.Run("960x540", func(t *testing.T) {
		want, ww, wh, _ := loadBGRX(t, "screen_960x540.png")
		if ww != 960 || wh != 540 {
			t.Fatalf("golden is %dx%d", ww, wh)
		}
		got := make([]byte, 960*540*4)
		Resize(got, 960, 540, pix, w, h, stride, Exact)
		diffs := 0
		for y := 0; y < 540; y++ {
			for x := 0; x < 960; x++ {
				g := got[(y*960+x)*4:]
				e := want[y*(960*4+12)+x*4:]
				if g[0] != e[0] || g[1] != e[1] || g[2] != e[2] {
					if diffs < 5 {
						t.Errorf("pixel (%d,%d) = BGR %v, want %v", x, y, g[:3], e[:3])
					}
					diffs++
				}
			}
		}
		if diffs > 0 {
			t.Fatalf("%d pixels differ from Pillow", diffs)
		}
	})

	data, err := os.ReadFile(filepath.Join("testdata", "resize_golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Crop   [4]int
		Size   [2]int
		SHA256 string
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	f := &Frame{Pix: pix, W: w, H: h, Stride: stride}
	for _, c := range cases {
		t.Run(fmt.Sprintf("crop%v_to_%dx%d", c.Crop, c.Size[0], c.Size[1]), func(t *testing.T) {
			sub := f.Sub(image.Rect(c.Crop[0], c.Crop[1], c.Crop[0]+c.Crop[2], c.Crop[1]+c.Crop[3]), "crop")
			dw, dh := c.Size[0], c.Size[1]
			got := make([]byte, dw*dh*4)
			Resize(got, dw, dh, sub.Pix, sub.W, sub.H, sub.Stride, Exact)
			sum := sha256.Sum256(rgbBytes(got, dw, dh))
			if hex.EncodeToString(sum[:]) != c.SHA256 {
				t.Errorf("Resize(Exact) of crop %v to %dx%d differs from Pillow's BILINEAR", c.Crop, dw, dh)
			}
		})
	}
}

// maxLevelDiff returns the largest per-channel difference of two BGRX images.
func maxLevelDiff(a, b []byte) int {
	m := 0
	for i := range a {
		if i%4 == 3 {
			continue
		}
		d := int(a[i]) - int(b[i])
		if d < 0 {
			d = -d
		}
		m = max(m, d)
	}
	return m
}

func TestResizeFastWithinTwoLevels(t *testing.T) {
	pix, w, h, stride := loadBGRX(t, "screen.png")
	f := &Frame{Pix: pix, W: w, H: h, Stride: stride}
	noise := make([]byte, 301*203*4)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	tests := []struct {
		name   string
		pix    []byte
		w, h   int
		stride int
		dw, dh int
	}{
		{"screen_960x540", pix, w, h, stride, 960, 540},
		{"screen_640x360", pix, w, h, stride, 640, 360},
		{"screen_333x187", pix, w, h, stride, 333, 187},
		{"screen_1920x1080_up", pix, w, h, stride, 1920, 1080},
		{"screen_1280x540", pix, w, h, stride, 1280, 540},
		{"screen_960x720", pix, w, h, stride, 960, 720},
		{"screen_321x180_exact_fallback", pix, w, h, stride, 250, 140},
		{"noise_150x101", noise, 301, 203, 301 * 4, 150, 101},
		{"noise_97x77", noise, 301, 203, 301 * 4, 97, 77},
		{"noise_777x500_up", noise, 301, 203, 301 * 4, 777, 500},
	}
	_ = f
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exact := make([]byte, tt.dw*tt.dh*4)
			fast := make([]byte, tt.dw*tt.dh*4)
			Resize(exact, tt.dw, tt.dh, tt.pix, tt.w, tt.h, tt.stride, Exact)
			Resize(fast, tt.dw, tt.dh, tt.pix, tt.w, tt.h, tt.stride, Fast)
			if d := maxLevelDiff(exact, fast); d > 2 {
				t.Errorf("Fast differs from Exact by %d levels, want <= 2", d)
			}
			if bytes.Equal(exact, fast) {
				t.Logf("Fast equals Exact")
			}
		})
	}
}

// TestResizeBands checks that splitting the output into parallel bands
// changes nothing and leaves no goroutine behind.
func TestResizeBands(t *testing.T) {
	pix, w, h, stride := loadBGRX(t, "screen.png")
	before := runtime.NumGoroutine()
	for _, m := range []Mode{Exact, Fast} {
		for _, sz := range [][2]int{{960, 540}, {641, 333}, {1280, 300}, {700, 720}} {
			dw, dh := sz[0], sz[1]
			prev := runtime.GOMAXPROCS(1)
			one := make([]byte, dw*dh*4)
			Resize(one, dw, dh, pix, w, h, stride, m)
			runtime.GOMAXPROCS(4)
			four := make([]byte, dw*dh*4)
			Resize(four, dw, dh, pix, w, h, stride, m)
			runtime.GOMAXPROCS(prev)
			if !bytes.Equal(one, four) {
				t.Errorf("%v %dx%d: Resize in bands differs from Resize in one piece", m, dw, dh)
			}
		}
	}
	// A helper that was not scheduled before the caller made every chunk
	// itself exits as soon as it runs: give it time to, then count.
	for i := 0; i < 500 && runtime.NumGoroutine() > before; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Errorf("Resize left %d goroutines running", after-before)
	}
}

// TestResizeExactAVX2 checks the AVX2 Exact kernels (cgo builds on amd64)
// byte for byte against the Go ones, and Fast's Go kernels (which Fast
// skips where the AVX2 ones run) against Exact, on random pixels, pad bytes and sizes
// (down and up, 1 to 4 horizontal taps, odd widths, right-edge windows).
func TestResizeExactAVX2(t *testing.T) {
	if !hasAVX2 {
		t.Log("no AVX2 kernels in this build or on this CPU: the Go kernels are the only path")
	}
	// The sizes that matter most first.
	fixed := [][4]int{{1280, 720, 960, 540}, {1920, 1080, 960, 540}, {1366, 768, 960, 540}, {1281, 721, 961, 541}}
	rng := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < 300; i++ {
		sw, sh := 1+rng.IntN(400), 1+rng.IntN(300)
		dw, dh := 1+rng.IntN(2*sw+1), 1+rng.IntN(2*sh+1)
		if i < len(fixed) {
			sw, sh, dw, dh = fixed[i][0], fixed[i][1], fixed[i][2], fixed[i][3]
		}
		stride := sw*4 + rng.IntN(3)*4
		src := make([]byte, (sh-1)*stride+sw*4) // no slack after the last pixel
		for j := range src {
			src[j] = byte(rng.Uint32())
		}
		got := make([]byte, dw*dh*4)
		want := make([]byte, dw*dh*4)
		Resize(got, dw, dh, src, sw, sh, stride, Exact)
		saved := hasAVX2
		hasAVX2 = false
		Resize(want, dw, dh, src, sw, sh, stride, Exact)
		fast := make([]byte, dw*dh*4)
		Resize(fast, dw, dh, src, sw, sh, stride, Fast) // Fast's Go kernels (with AVX2, Fast runs Exact)
		hasAVX2 = saved
		if !bytes.Equal(got, want) {
			t.Fatalf("%dx%d (stride %d) -> %dx%d: AVX2 Exact differs from the Go kernels", sw, sh, stride, dw, dh)
		}
		if d := maxLevelDiff(fast, want); d > 2 {
			t.Fatalf("%dx%d -> %dx%d: Fast's Go kernels differ from Exact by %d levels", sw, sh, dw, dh, d)
		}
	}
}
