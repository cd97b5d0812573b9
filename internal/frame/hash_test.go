package frame

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// refHash is Hash written plainly: the hash of each band of HashBand rows
// (refBandHash), then the bands' hashes folded with the frame's size. Hash,
// HashCopyBands and HashBands must give its values for ever, since hashes
// outlive a process (judged frames are stored by hash).
func refHash(pix []byte, w, h, stride int) uint64 {
	x := uint64(prime5)
	for y := 0; y < h; y += HashBand {
		rows := min(HashBand, h-y)
		x = hashRound(x, refBandHash(pix[y*stride:], w, rows, stride))
	}
	return refEnd(x, w, h)
}

// refEnd merges a hash's last lane with the size of what it hashed and
// applies xxHash64's avalanche, as Hash as first written did.
func refEnd(x uint64, w, h int) uint64 {
	x = hashRound(x, uint64(uint32(w))<<32|uint64(uint32(h)))
	x ^= x >> 33
	x *= prime2
	x ^= x >> 29
	x *= prime3
	x ^= x >> 32
	return x
}

// refBandHash is the hash of one band: Hash as first written (commit
// 13b4279), when a frame was a single band, applied to the band's rows.
func refBandHash(pix []byte, w, h, stride int) uint64 {
	p1, p2 := uint64(prime1), uint64(prime2)
	v1 := p1 + p2
	v2 := p2
	v3 := uint64(0)
	v4 := -p1
	rowBytes := w * 4
	for y := 0; y < h; y++ {
		b := pix[y*stride : y*stride+rowBytes]
		for len(b) >= 32 {
			v1 = hashRound(v1, binary.LittleEndian.Uint64(b[0:8])&padMask)
			v2 = hashRound(v2, binary.LittleEndian.Uint64(b[8:16])&padMask)
			v3 = hashRound(v3, binary.LittleEndian.Uint64(b[16:24])&padMask)
			v4 = hashRound(v4, binary.LittleEndian.Uint64(b[24:32])&padMask)
			b = b[32:]
		}
		for len(b) >= 8 {
			v1 = hashRound(v1, binary.LittleEndian.Uint64(b[0:8])&padMask)
			b = b[8:]
		}
		if len(b) >= 4 {
			v1 = hashRound(v1, uint64(binary.LittleEndian.Uint32(b[0:4])&0x00FFFFFF))
		}
	}
	x := bits.RotateLeft64(v1, 1) + bits.RotateLeft64(v2, 7) + bits.RotateLeft64(v3, 12) + bits.RotateLeft64(v4, 18)
	return refEnd(x, w, h)
}

// hashCopy hashes and copies all of src's bands into dst, returning the
// frame's hash (what a capture of a whole screen does).
func hashCopy(dst, src []byte, w, h, stride int) uint64 {
	sums := make([]uint64, Bands(h))
	HashCopyBands(dst, src, w, h, stride, sums, 0, len(sums))
	return FoldBands(sums, w, h)
}

// checkHashCopy compares Hash and HashCopyBands with refHash on w*h pixels of
// random bytes at stride, and its copy with the source rows.
func checkHashCopy(t *testing.T, w, h, stride int, seed uint64) {
	t.Helper()
	src := make([]byte, h*stride)
	rng := rand.New(rand.NewPCG(seed, 2))
	for i := range src {
		src[i] = byte(rng.Uint32())
	}
	want := refHash(src, w, h, stride)
	if got := Hash(src, w, h, stride); got != want {
		t.Fatalf("%dx%d stride %d: Hash = %016x, want %016x", w, h, stride, got, want)
	}
	dst := make([]byte, w*h*4+1)
	dst[len(dst)-1] = 0xAB // past the end: untouched
	if got := hashCopy(dst[:w*h*4], src, w, h, stride); got != want {
		t.Fatalf("%dx%d stride %d: HashCopyBands = %016x, want %016x", w, h, stride, got, want)
	}
	for y := 0; y < h; y++ {
		if !bytes.Equal(dst[y*w*4:(y+1)*w*4], src[y*stride:y*stride+w*4]) {
			t.Fatalf("%dx%d stride %d: HashCopyBands row %d differs from the source", w, h, stride, y)
		}
	}
	if dst[len(dst)-1] != 0xAB {
		t.Fatalf("%dx%d stride %d: HashCopyBands wrote past w*h*4", w, h, stride)
	}
	sums := make([]uint64, Bands(h))
	HashCopyBands(dst[:w*h*4], src, w, h, stride, sums, 0, len(sums))
	if got := FoldBands(sums, w, h); got != want {
		t.Fatalf("%dx%d stride %d: FoldBands of HashCopyBands' sums = %016x, want %016x", w, h, stride, got, want)
	}
	if h == 0 {
		return
	}
	// Change a few rows; rehashing only their bands gives the whole hash,
	// and hashing and copying only their bands into the earlier copy also
	// brings the copy up to date.
	old := slices.Clone(sums)
	y0 := rng.IntN(h)
	y1 := min(h, y0+1+rng.IntN(HashBand*2))
	for y := y0; y < y1; y++ {
		for x := 0; x < w*4; x++ {
			src[y*stride+x] ^= byte(rng.Uint32() | 1)
		}
	}
	want = refHash(src, w, h, stride)
	HashBands(sums, src, w, h, stride, y0/HashBand, Bands(y1))
	if got := FoldBands(sums, w, h); got != want {
		t.Fatalf("%dx%d stride %d: rows %d-%d changed: HashBands+FoldBands = %016x, want %016x", w, h, stride, y0, y1, got, want)
	}
	HashCopyBands(dst[:w*h*4], src, w, h, stride, old, y0/HashBand, Bands(y1))
	if got := FoldBands(old, w, h); got != want {
		t.Fatalf("%dx%d stride %d: rows %d-%d changed: HashCopyBands of their bands = %016x, want %016x", w, h, stride, y0, y1, got, want)
	}
	for y := 0; y < h; y++ {
		if !bytes.Equal(dst[y*w*4:(y+1)*w*4], src[y*stride:y*stride+w*4]) {
			t.Fatalf("%dx%d stride %d: after HashCopyBands of rows %d-%d, row %d differs from the source", w, h, stride, y0, y1, y)
		}
	}
	if dst[len(dst)-1] != 0xAB {
		t.Fatalf("%dx%d stride %d: HashCopyBands wrote past w*h*4", w, h, stride)
	}
}

// TestHashOnePixel: frames that differ in one pixel, wherever it is, hash
// differently (the steps are bijections; this checks the banding kept it).
func TestHashOnePixel(t *testing.T) {
	const w, h = 37, 50
	pix := make([]byte, w*h*4)
	base := Hash(pix, w, h, w*4)
	seen := map[uint64]bool{base: true}
	for i := 0; i < w*h; i++ {
		for c := 0; c < 3; c++ {
			pix[i*4+c] = 1
			got := Hash(pix, w, h, w*4)
			if seen[got] {
				t.Fatalf("pixel %d channel %d: hash %016x seen before", i, c, got)
			}
			seen[got] = true
			pix[i*4+c] = 0
		}
		pix[i*4+3] = 0xFF // the pad byte is not part of the content
		if got := Hash(pix, w, h, w*4); got != base {
			t.Fatalf("pixel %d: a pad byte changed the hash", i)
		}
		pix[i*4+3] = 0
	}
}

func TestHashCopy(t *testing.T) {
	for _, s := range [][3]int{{1280, 720, 5120}, {1920, 1080, 7680}, {1, 1, 4}, {2, 3, 8}, {7, 5, 40}, {8, 2, 32},
		{9, 4, 36}, {13, 3, 64}, {33, 2, 132}, {1023, 3, 4100}, {0, 5, 0}, {5, 0, 20}} {
		checkHashCopy(t, s[0], s[1], s[2], uint64(s[0]*s[1]))
	}
	// A short destination panics, like an index out of range.
	defer func() {
		if recover() == nil {
			t.Errorf("HashCopyBands into a short buffer did not panic")
		}
	}()
	hashCopy(make([]byte, 10), make([]byte, 16), 2, 2, 8)
}

func FuzzHashCopy(f *testing.F) {
	f.Add(uint16(1280), uint16(4), uint16(0), uint64(1))
	f.Add(uint16(7), uint16(3), uint16(5), uint64(2))
	f.Add(uint16(1), uint16(9), uint16(0), uint64(3))
	f.Fuzz(func(t *testing.T, w, h, pad uint16, seed uint64) {
		w, h = w%2000, h%40
		checkHashCopy(t, int(w), int(h), int(w)*4+int(pad%64), seed)
	})
}

// TestHashAVX512MatchesGo: the C path (several bands at once, AVX-512)
// gives the Go code's band hashes, and Hash's one C call the Go code's
// hash, in every case the C code tells apart: every width from 1 to 70
// pixels (row tails of every length), with every number of full bands in
// a group (1 to 4, and a group after a full one), a short last band of 1
// and of 15 rows or none, padded strides, and every range of bands; it
// also copies the rows it hashes. It skips on CPUs without AVX-512.
func TestHashAVX512MatchesGo(t *testing.T) {
	if !hasHashAVX512 {
		t.Skip("this CPU has no AVX-512 (F, VL, DQ): the Go code is the only path")
	}
	rng := rand.New(rand.NewPCG(7, 9))
	var shapes [][2]int
	for w := 1; w <= 70; w++ {
		for full := range 6 {
			for _, short := range []int{0, 1, HashBand - 1} {
				if h := full*HashBand + short; h > 0 {
					shapes = append(shapes, [2]int{w, h})
				}
			}
		}
	}
	shapes = append(shapes, [2]int{1280, 720}, [2]int{1366, 768}, [2]int{1920, 1080}, [2]int{333, 17}, [2]int{64, 16})
	for _, s := range shapes {
		w, h := s[0], s[1]
		for _, extra := range []int{0, 12} {
			stride := w*4 + extra
			src := make([]byte, (h-1)*stride+w*4)
			for i := range src {
				src[i] = byte(rng.Uint32())
			}
			nb := Bands(h)
			ranges := [][2]int{{0, nb}}
			if nb <= 7 {
				for b0 := range nb {
					for b1 := b0 + 1; b1 <= nb; b1++ {
						ranges = append(ranges, [2]int{b0, b1})
					}
				}
			} else {
				b0 := rng.IntN(nb)
				ranges = append(ranges, [2]int{b0, b0 + 1 + rng.IntN(nb-b0)})
			}
			for _, r := range ranges {
				want := make([]uint64, nb)
				for b := r[0]; b < r[1]; b++ {
					y := b * HashBand
					want[b] = bandHash(src[y*stride:], w, min(HashBand, h-y), stride)
				}
				got := make([]uint64, nb)
				if !hashBandsFast(got, src, nil, w, h, stride, r[0], r[1]) {
					t.Fatal("hashBandsFast refused to run")
				}
				dst := make([]byte, w*h*4)
				copied := make([]uint64, nb)
				hashBandsFast(copied, src, dst, w, h, stride, r[0], r[1])
				if !slices.Equal(got, want) || !slices.Equal(copied, want) {
					t.Fatalf("%dx%d stride %d bands %d-%d: C %x, copying %x, Go %x", w, h, stride, r[0], r[1], got, copied, want)
				}
				for y := r[0] * HashBand; y < min(r[1]*HashBand, h); y++ {
					if !bytes.Equal(dst[y*w*4:(y+1)*w*4], src[y*stride:y*stride+w*4]) {
						t.Fatalf("%dx%d stride %d: row %d not copied", w, h, stride, y)
					}
				}
				for y := 0; y < h; y++ {
					if (y < r[0]*HashBand || y >= r[1]*HashBand) && slices.ContainsFunc(dst[y*w*4:(y+1)*w*4], func(b byte) bool { return b != 0 }) {
						t.Fatalf("%dx%d: row %d outside bands %d-%d written", w, h, y, r[0], r[1])
					}
				}
			}
			fast, ok := hashFast(src, w, h, stride)
			if !ok {
				t.Fatal("hashFast refused to run")
			}
			UseFastHash(false)
			slow := Hash(src, w, h, stride)
			UseFastHash(true)
			if want := refHash(src, w, h, stride); fast != slow || slow != want {
				t.Fatalf("%dx%d stride %d: Hash in C %x, in Go %x, reference %x", w, h, stride, fast, slow, want)
			}
		}
	}
}
