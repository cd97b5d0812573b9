package frame

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestJPEGGolden checks the whole pipeline against the reference: screen.png
// resized with Exact and encoded with EncodeJPEG is byte-identical to
// Pillow's resize(BILINEAR) + save(JPEG, quality=72).
func TestJPEGGolden(t *testing.T) {
	if JPEGEncoder != "libjpeg-turbo" {
		t.Skipf("byte identity with Pillow needs libjpeg-turbo; this build uses %s", JPEGEncoder)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "screen_960x540_q72.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	pix, w, h, stride := loadBGRX(t, "screen.png")

	small := make([]byte, 960*540*4)
	Resize(small, 960, 540, pix, w, h, stride, Exact)
	got, err := EncodeJPEG(nil, small, 960, 540, 960*4, 72)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("EncodeJPEG(Resize(Exact)) = %d bytes, differs from Pillow's %d bytes", len(got), len(want))
	}

	f := New(pix, w, h, stride, ":1", "screen", timeZero)
	got2, err := f.JPEG(960, 72)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got2, want) {
		t.Errorf("Frame.JPEG(960, 72) = %d bytes, differs from Pillow's %d bytes", len(got2), len(want))
	}
}

func TestJPEGMemoized(t *testing.T) {
	f := testFrame(300, 200, 8, 11)
	var wg sync.WaitGroup
	results := make([][]byte, 16)
	for i := range results {
		wg.Go(func() {
			b, err := f.JPEG(150, 72)
			if err != nil {
				t.Error(err)
			}
			results[i] = b
		})
	}
	wg.Wait()
	for i, b := range results {
		if len(b) == 0 || &b[0] != &results[0][0] {
			t.Fatalf("caller %d got a different encoding: concurrent callers must share one", i)
		}
	}
	// maxDim >= the long side and maxDim 0 both mean full size: one encoding.
	a, _ := f.JPEG(0, 72)
	b, _ := f.JPEG(5000, 72)
	if &a[0] != &b[0] {
		t.Errorf("JPEG(0, 72) and JPEG(5000, 72) were encoded twice")
	}
	c, _ := f.JPEG(150, 90)
	if &c[0] == &results[0][0] {
		t.Errorf("JPEG(150, 90) returned the quality 72 encoding")
	}
	m, err := jpeg.Decode(bytes.NewReader(results[0]))
	if err != nil {
		t.Fatalf("decode JPEG: %v", err)
	}
	if got := m.Bounds().Size(); got != image.Pt(150, 100) {
		t.Errorf("JPEG(150, 72) is %v, want 150x100", got)
	}
	m, _ = jpeg.Decode(bytes.NewReader(a))
	if got := m.Bounds().Size(); got != image.Pt(300, 200) {
		t.Errorf("JPEG(0, 72) is %v, want 300x200", got)
	}
}

func TestJPEGErrors(t *testing.T) {
	f := testFrame(10, 10, 0, 1)
	for _, q := range []int{0, -1, 101} {
		if _, err := f.JPEG(960, q); err == nil {
			t.Errorf("JPEG(960, %d) = nil error, want one", q)
		}
	}
	empty := f.Sub(image.Rect(20, 20, 30, 30), "crop")
	if _, err := empty.JPEG(960, 72); err == nil {
		t.Errorf("JPEG of an empty frame = nil error, want one")
	}
	if _, err := empty.PNG(); err == nil {
		t.Errorf("PNG of an empty frame = nil error, want one")
	}
}

// TestEncodersAgree checks that EncodeJPEG and the image/jpeg fallback
// both give a JPEG close to the source, on a stride with padding.
func TestEncodersAgree(t *testing.T) {
	pix, w, h, stride := loadBGRX(t, "screen.png")
	f := New(pix, w, h, stride, ":1", "screen", timeZero).Sub(image.Rect(100, 50, 500, 350), "crop")
	for name, enc := range map[string]func([]byte, []byte, int, int, int, int) ([]byte, error){
		"EncodeJPEG": EncodeJPEG, "image/jpeg": encodeStdJPEG,
	} {
		t.Run(name, func(t *testing.T) {
			b, err := enc(make([]byte, 0, 10), f.Pix, f.W, f.H, f.Stride, 95)
			if err != nil {
				t.Fatal(err)
			}
			m, err := jpeg.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if m.Bounds().Dx() != f.W || m.Bounds().Dy() != f.H {
				t.Fatalf("decoded size %v, want %dx%d", m.Bounds(), f.W, f.H)
			}
			// Mean absolute error per channel, loose: catches swapped channels and strides.
			src := f.RGBA()
			var sum, n int
			for y := 0; y < f.H; y++ {
				for x := 0; x < f.W; x++ {
					r, g, bl, _ := m.At(x, y).RGBA()
					s := src.RGBAAt(x, y)
					sum += abs(int(r>>8)-int(s.R)) + abs(int(g>>8)-int(s.G)) + abs(int(bl>>8)-int(s.B))
					n += 3
				}
			}
			if mae := float64(sum) / float64(n); mae > 6 {
				t.Errorf("mean error %.2f levels, want <= 6", mae)
			}
		})
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func TestPNGRoundTrip(t *testing.T) {
	f := testFrame(61, 17, 12, 4)
	b, err := f.PNG()
	if err != nil {
		t.Fatal(err)
	}
	if b2, _ := f.PNG(); &b2[0] != &b[0] {
		t.Errorf("PNG was encoded twice")
	}
	m, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	want := f.RGBA()
	for y := 0; y < f.H; y++ {
		for x := 0; x < f.W; x++ {
			r, g, bl, a := m.At(x, y).RGBA()
			s := want.RGBAAt(x, y)
			if byte(r>>8) != s.R || byte(g>>8) != s.G || byte(bl>>8) != s.B || a != 0xffff {
				t.Fatalf("PNG pixel (%d,%d) = %d,%d,%d,%d, want %v", x, y, r>>8, g>>8, bl>>8, a>>8, s)
			}
		}
	}
}

func TestBlackOutDropsEncodings(t *testing.T) {
	f := testFrame(64, 32, 0, 8)
	before, _ := f.JPEG(0, 80)
	BlackOut(f, f.Bounds())
	after, _ := f.JPEG(0, 80)
	if bytes.Equal(before, after) {
		t.Errorf("JPEG after BlackOut is the memoized one from before")
	}
}

func TestJPEGBase64Memoized(t *testing.T) {
	f := testFrame(640, 360, 0, 1)
	jpg, b64, err := f.JPEGBase64(320, 72)
	if err != nil {
		t.Fatal(err)
	}
	again, b64Again, _ := f.JPEGBase64(320, 72)
	if &again[0] != &jpg[0] || &b64Again[0] != &b64[0] {
		t.Error("JPEGBase64 encoded again instead of returning the memo")
	}
	dec, err := base64.StdEncoding.DecodeString(string(b64))
	if err != nil || !bytes.Equal(dec, jpg) {
		t.Errorf("base64 does not decode to the JPEG: %v", err)
	}
}
