package frame

import (
	"encoding/binary"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Hash constants (the xxHash64 primes).
const (
	prime1 = 0x9E3779B185EBCA87
	prime2 = 0xC2B2AE3D27D4EB4F
	prime3 = 0x165667B19E3779F9
	prime4 = 0x85EBCA77C2B2AE63
	prime5 = 0x27D4EB2F165667C5

	padMask = 0x00FFFFFF00FFFFFF // two BGRX pixels without their pad bytes
)

// HashBand is the number of rows each band of a Hash covers: the hash of a
// frame is made of one hash per band of rows, so a frame that differs from
// an earlier one in a few rows is hashed anew by hashing only their bands
// (HashBands, FoldBands).
const HashBand = 16

// Hash returns the content hash of w*h BGRX pixels with the given stride,
// ignoring pad bytes. Equal hashes mean equal visible pixels (64-bit, not
// cryptographic). The size is part of the hash.
//
// The rows are cut into bands of HashBand rows (the last may be shorter).
// Each band is hashed on its own: its rows' visible bytes are read as
// little-endian words (two pixels each, pad bytes masked off) and fed to
// four xxHash64-style lanes, one word per lane in turn, a row's last words
// (fewer than four) going to the first lane; the lanes are merged with the
// band's size. The bands' hashes are then fed, in order, through one more
// lane and merged with the frame's size (FoldBands). Every step is a
// bijection of a lane's state for a fixed input word and of the input word
// for a fixed state, and every merge is a bijection of each lane, so frames
// that differ in exactly one pixel always hash differently.
//
// The value is stable across processes and versions of Go. It changed once,
// when bands came in (before, the whole frame was one band): a frame stored
// by an older acu keeps its older hash, and the same pixels seen again are
// stored once more under the new one.
//
// Large frames are hashed in parallel chunks of bands (up to GOMAXPROCS, at
// most 4 goroutines, as Resize), with the same value; on a CPU with the
// vectorised hash (FastHash), in one call on the caller's goroutine, with
// nothing allocated.
func Hash(pix []byte, w, h, stride int) uint64 {
	if hasHashAVX512 {
		// One call on this goroutine: chunks on others gain little
		// beside it (docs/perf/frame.md) and cost an array and goroutines.
		checkBuf("frame.Hash", pix, w, h, stride)
		if sum, ok := hashFast(pix, w, h, stride); ok {
			return sum
		}
	}
	n := Bands(h)
	if hashChunks(n, w) > 1 {
		sums := make([]uint64, n)
		HashBands(sums, pix, w, h, stride, 0, n)
		return FoldBands(sums, w, h)
	}
	x := foldStart()
	for y := 0; y < h; y += HashBand {
		x = foldRound(x, bandHash(pix[y*stride:], w, min(HashBand, h-y), stride))
	}
	return foldEnd(x, w, h)
}

// FastHash reports whether Hash and the band functions run the vectorised
// code (hash_avx512.go), about three times the Go code's speed: then
// hashing every band costs less than comparing it with another copy, and
// a copy riding along the hash (HashCopyBands) is no longer free.
func FastHash() bool { return hasHashAVX512 }

// UseFastHash turns the vectorised hash off (or back on, where the CPU
// has it) and returns whether it was on: for tests and benchmarks that
// compare the two paths. The values are the same either way. Not safe
// while other goroutines hash.
func UseFastHash(on bool) (was bool) {
	was = hasHashAVX512
	hasHashAVX512 = on && hashAVX512OK
	return was
}

// Bands returns the number of bands of a frame h rows high.
func Bands(h int) int { return (h + HashBand - 1) / HashBand }

// HashBands writes the hashes of bands b0 to b1-1 of the w*h pixels at
// stride into sums[b0:b1]; the other entries of sums are left as they are.
// FoldBands(sums, w, h) is then Hash(pix, w, h, stride) once every band's
// entry is the hash of its current rows.
func HashBands(sums []uint64, pix []byte, w, h, stride, b0, b1 int) {
	checkBuf("frame.HashBands", pix, w, h, stride)
	if b0 < 0 || b1 > Bands(h) || len(sums) < b1 {
		panic("frame.HashBands: bands out of range")
	}
	inParallel(b1-b0, w, func(c0, c1 int) {
		if hashBandsFast(sums, pix, nil, w, h, stride, b0+c0, b0+c1) {
			return
		}
		for b := b0 + c0; b < b0+c1; b++ {
			y := b * HashBand
			sums[b] = bandHash(pix[y*stride:], w, min(HashBand, h-y), stride)
		}
	})
}

// Parallel hashing: chunks of at least minHashChunk bytes of pixels, on
// the caller and up to min(GOMAXPROCS, maxBands)-1 helpers, about
// chunksPerWorker chunks per goroutine (Resize's rules).
const minHashChunk = 512 << 10

// hashChunks is how many chunks n bands of w pixels are hashed in.
func hashChunks(n, w int) int {
	workers := min(runtime.GOMAXPROCS(0), maxBands)
	if workers <= 1 {
		return 1
	}
	return max(1, min(n, n*HashBand*w*4/minHashChunk, workers*chunksPerWorker))
}

// inParallel calls fn on chunks [c0, c1) of n bands of w pixels, in
// parallel when they are many (hashChunks). As in Resize, the caller and
// the helpers claim chunks one at a time, so on a busy machine the caller
// does them itself rather than wait for a helper to be scheduled.
func inParallel(n, w int, fn func(c0, c1 int)) {
	chunks := hashChunks(n, w)
	if chunks <= 1 {
		fn(0, n)
		return
	}
	var next atomic.Int32
	var wg sync.WaitGroup
	wg.Add(chunks)
	run := func() {
		for {
			c := int(next.Add(1) - 1)
			if c >= chunks {
				return
			}
			fn(c*n/chunks, (c+1)*n/chunks)
			wg.Done()
		}
	}
	for range min(runtime.GOMAXPROCS(0), maxBands) - 1 {
		go run()
	}
	run()
	wg.Wait()
}

// FoldBands returns the frame hash made of its bands' hashes (len(sums)
// is Bands(h)).
func FoldBands(sums []uint64, w, h int) uint64 {
	x := foldStart()
	for _, s := range sums {
		x = foldRound(x, s)
	}
	return foldEnd(x, w, h)
}

// bandHash hashes the first rows rows of pix (w pixels each, stride
// apart).
func bandHash(pix []byte, w, rows, stride int) uint64 {
	v1, v2, v3, v4 := hashStart()
	rowBytes := w * 4
	for y := 0; y < rows; y++ {
		b := pix[y*stride : y*stride+rowBytes]
		n := len(b) &^ 31
		for i := 0; i < n; i += 32 {
			// One bounds check per 32 bytes: the array pointer proves
			// the four loads in range.
			c := (*[32]byte)(b[i : i+32])
			v1 = hashRound(v1, binary.LittleEndian.Uint64(c[0:8])&padMask)
			v2 = hashRound(v2, binary.LittleEndian.Uint64(c[8:16])&padMask)
			v3 = hashRound(v3, binary.LittleEndian.Uint64(c[16:24])&padMask)
			v4 = hashRound(v4, binary.LittleEndian.Uint64(c[24:32])&padMask)
		}
		v1 = hashTail(v1, b[n:])
	}
	return hashEnd(v1, v2, v3, v4, w, rows)
}

// HashCopyBands is HashBands that also copies the bands' rows into dst,
// packed, in the same pass: bands b0 to b1-1 of the w*h pixels of src
// (stride apart) are hashed into sums[b0:b1] and copied to the same rows
// of dst (w*4 bytes apart), pad bytes as they are. Other rows of dst and
// entries of sums are left as they are. The copy costs next to nothing
// beside the hash's multiplications (BenchmarkHashCopy). It panics if src
// or dst is too short, like an index out of range would.
func HashCopyBands(dst, src []byte, w, h, stride int, sums []uint64, b0, b1 int) {
	checkBuf("frame.HashCopyBands", src, w, h, stride)
	checkBuf("frame.HashCopyBands", dst, w, h, w*4)
	if b0 < 0 || b1 > Bands(h) || len(sums) < b1 {
		panic("frame.HashCopyBands: bands out of range")
	}
	rowBytes := w * 4
	inParallel(b1-b0, w, func(c0, c1 int) {
		if hashBandsFast(sums, src, dst, w, h, stride, b0+c0, b0+c1) {
			return
		}
		for b := b0 + c0; b < b0+c1; b++ {
			y0 := b * HashBand
			rows := min(HashBand, h-y0)
			if littleEndian {
				sums[b] = bandHashCopy(dst[y0*rowBytes:], src[y0*stride:], w, rows, stride)
				continue
			}
			for y := y0; y < y0+rows; y++ {
				copy(dst[y*rowBytes:y*rowBytes+rowBytes], src[y*stride:])
			}
			sums[b] = bandHash(src[y0*stride:], w, rows, stride)
		}
	})
}

// bandHashCopy is bandHash of src that copies the rows into dst, packed,
// on a little-endian machine. The caller has checked both lengths.
func bandHashCopy(dst, src []byte, w, rows, stride int) uint64 {
	rowBytes := w * 4
	v1, v2, v3, v4 := hashStart()
	for y := 0; y < rows; y++ {
		b := src[y*stride : y*stride+rowBytes]
		d := dst[y*rowBytes : y*rowBytes+rowBytes]
		n := len(b) &^ 31
		// Bounds checks on both slices would cost a third of the loop (Go
		// does not prove them away); i+32 <= n <= len(b) == len(d) keeps
		// every access in range. Words are loaded in the machine's byte
		// order, little-endian here.
		sp, dp := unsafe.Pointer(unsafe.SliceData(b)), unsafe.Pointer(unsafe.SliceData(d))
		for i := 0; i < n; i += 32 {
			a0 := *(*uint64)(unsafe.Add(sp, i))
			a1 := *(*uint64)(unsafe.Add(sp, i+8))
			a2 := *(*uint64)(unsafe.Add(sp, i+16))
			a3 := *(*uint64)(unsafe.Add(sp, i+24))
			*(*uint64)(unsafe.Add(dp, i)) = a0
			*(*uint64)(unsafe.Add(dp, i+8)) = a1
			*(*uint64)(unsafe.Add(dp, i+16)) = a2
			*(*uint64)(unsafe.Add(dp, i+24)) = a3
			v1 = hashRound(v1, a0&padMask)
			v2 = hashRound(v2, a1&padMask)
			v3 = hashRound(v3, a2&padMask)
			v4 = hashRound(v4, a3&padMask)
		}
		copy(d[n:], b[n:])
		v1 = hashTail(v1, b[n:])
	}
	return hashEnd(v1, v2, v3, v4, w, rows)
}

// foldStart, foldRound and foldEnd chain the bands' hashes: one lane,
// a round per band, the frame's size, the avalanche.
func foldStart() uint64 { return prime5 }

func foldRound(x, band uint64) uint64 { return hashRound(x, band) }

func foldEnd(x uint64, w, h int) uint64 {
	x = hashRound(x, uint64(uint32(w))<<32|uint64(uint32(h)))
	return avalanche(x)
}

// littleEndian reports the machine's byte order, which HashCopyBands' word
// loads use.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// hashStart is the four lanes' initial state.
func hashStart() (v1, v2, v3, v4 uint64) {
	p1, p2 := uint64(prime1), uint64(prime2)
	return p1 + p2, p2, 0, -p1
}

// hashTail feeds a row's last bytes (fewer than 32) to the first lane:
// whole words, then a last pixel.
func hashTail(v1 uint64, b []byte) uint64 {
	for len(b) >= 8 {
		v1 = hashRound(v1, binary.LittleEndian.Uint64(b[0:8])&padMask)
		b = b[8:]
	}
	if len(b) >= 4 {
		v1 = hashRound(v1, uint64(binary.LittleEndian.Uint32(b[0:4])&0x00FFFFFF))
	}
	return v1
}

// hashEnd merges the lanes with the size of what they hashed.
func hashEnd(v1, v2, v3, v4 uint64, w, h int) uint64 {
	x := bits.RotateLeft64(v1, 1) + bits.RotateLeft64(v2, 7) + bits.RotateLeft64(v3, 12) + bits.RotateLeft64(v4, 18)
	x = hashRound(x, uint64(uint32(w))<<32|uint64(uint32(h)))
	return avalanche(x)
}

// avalanche is xxHash64's final mix: a bijection.
func avalanche(x uint64) uint64 {
	x ^= x >> 33
	x *= prime2
	x ^= x >> 29
	x *= prime3
	x ^= x >> 32
	return x
}

// hashRound is xxHash64's round: for a fixed w it is a bijection of acc, and
// for a fixed acc a bijection of w.
func hashRound(acc, w uint64) uint64 {
	acc += w * prime2
	acc = bits.RotateLeft64(acc, 31)
	return acc * prime1
}
