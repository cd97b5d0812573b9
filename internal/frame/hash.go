package frame

import (
	"encoding/binary"
	"math/bits"
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
func Hash(pix []byte, w, h, stride int) uint64 {
	x := foldStart()
	for y := 0; y < h; y += HashBand {
		x = foldRound(x, bandHash(pix[y*stride:], w, min(HashBand, h-y), stride))
	}
	return foldEnd(x, w, h)
}

// Bands returns the number of bands of a frame h rows high.
func Bands(h int) int { return (h + HashBand - 1) / HashBand }

// HashBands writes the hashes of bands b0 to b1-1 of the w*h pixels at
// stride into sums[b0:b1]; the other entries of sums are left as they are.
// FoldBands(sums, w, h) is then Hash(pix, w, h, stride) once every band's
// entry is the hash of its current rows.
func HashBands(sums []uint64, pix []byte, w, h, stride, b0, b1 int) {
	for b := b0; b < b1; b++ {
		y := b * HashBand
		sums[b] = bandHash(pix[y*stride:], w, min(HashBand, h-y), stride)
	}
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

// HashCopy returns Hash(src, w, h, stride) and copies the w*h pixels into
// dst, rows packed (w*4 bytes apart), pad bytes as they are: one pass over
// src where Hash followed by a copy makes two, and the copy costs next to
// nothing beside the hash's multiplications (BenchmarkHashCopy). It panics
// if src or dst is too short, like an index out of range would.
func HashCopy(dst, src []byte, w, h, stride int) uint64 {
	return HashCopyBands(dst, src, w, h, stride, nil)
}

// HashCopyBands is HashCopy that also writes each band's hash into sums
// (len Bands(h)) when sums is not nil, for later HashBands and FoldBands.
func HashCopyBands(dst, src []byte, w, h, stride int, sums []uint64) uint64 {
	checkBuf("frame.HashCopy", src, w, h, stride)
	checkBuf("frame.HashCopy", dst, w, h, w*4)
	if sums != nil && len(sums) != Bands(h) {
		panic("frame.HashCopyBands: sums is not one entry per band")
	}
	rowBytes := w * 4
	x := foldStart()
	for y0, b := 0, 0; y0 < h; y0, b = y0+HashBand, b+1 {
		rows := min(HashBand, h-y0)
		var s uint64
		if littleEndian {
			s = bandHashCopy(dst[y0*rowBytes:], src[y0*stride:], w, rows, stride)
		} else {
			for y := y0; y < y0+rows; y++ {
				copy(dst[y*rowBytes:y*rowBytes+rowBytes], src[y*stride:])
			}
			s = bandHash(src[y0*stride:], w, rows, stride)
		}
		if sums != nil {
			sums[b] = s
		}
		x = foldRound(x, s)
	}
	return foldEnd(x, w, h)
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

// littleEndian reports the machine's byte order, which HashCopy's word
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
