package frame

import (
	"encoding/binary"
	"math/bits"
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

// Hash returns the content hash of w*h BGRX pixels with the given stride,
// ignoring pad bytes. Equal hashes mean equal visible pixels (64-bit, not
// cryptographic). The size is part of the hash.
//
// Each row's visible bytes are read as little-endian words (two pixels
// each, pad bytes masked off) and fed to four xxHash64-style lanes, one
// word per lane in turn; a row's last words (fewer than four) go to the
// first lane. Every
// step is a bijection of a lane's state for a fixed input word and of the
// input word for a fixed state, and the final merge is a bijection of each
// lane, so frames that differ in exactly one pixel always hash differently.
// The value is stable across processes and versions of Go.
func Hash(pix []byte, w, h, stride int) uint64 {
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
	x = hashRound(x, uint64(uint32(w))<<32|uint64(uint32(h)))
	// xxHash64 avalanche: a bijection.
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
