//go:build cgo && amd64

package frame

/*
#cgo CFLAGS: -O2
#include <stdint.h>
#include <string.h>
#include <immintrin.h>

// The same hash as hash.go's bandHash and hashEnd, computed for several
// bands at once: a band's four lanes are four 64-bit elements of a vector,
// two bands share a 512-bit register, and four bands are hashed side by
// side so that the multiplications of one do not wait for another's
// (one band alone is bound by the latency of its lanes' rounds).

#define ACU_P1 0x9E3779B185EBCA87ull
#define ACU_P2 0xC2B2AE3D27D4EB4Full
#define ACU_P3 0x165667B19E3779F9ull
#define ACU_P5 0x27D4EB2F165667C5ull
#define ACU_PAD 0x00FFFFFF00FFFFFFull

static int acu_has_avx512(void) {
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
		__builtin_cpu_supports("avx512dq");
}

static inline uint64_t acu_rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t acu_round(uint64_t acc, uint64_t w) {
	acc += w * ACU_P2;
	return acu_rotl(acc, 31) * ACU_P1;
}

static inline uint64_t acu_load64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline uint32_t acu_load32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }

// acu_end is hashEnd: the lanes merged with the band's size, then the
// avalanche.
static uint64_t acu_end(const uint64_t v[4], int w, int rows) {
	uint64_t x = acu_rotl(v[0], 1) + acu_rotl(v[1], 7) + acu_rotl(v[2], 12) + acu_rotl(v[3], 18);
	x = acu_round(x, (uint64_t)(uint32_t)w << 32 | (uint64_t)(uint32_t)rows);
	x ^= x >> 33;
	x *= ACU_P2;
	x ^= x >> 29;
	x *= ACU_P3;
	x ^= x >> 32;
	return x;
}

// ACU_STEP feeds 32 bytes of two bands' rows (pa, pb, the same when one
// band) to their lanes in register s, storing them to oa, ob first when
// copying.
#define ACU_STEP(s, pa, pb, oa, ob) do { \
	__m256i a_ = _mm256_loadu_si256((const void *)(pa)); \
	__m256i c_ = _mm256_loadu_si256((const void *)(pb)); \
	if (copy) { \
		_mm256_storeu_si256((void *)(oa), a_); \
		_mm256_storeu_si256((void *)(ob), c_); \
	} \
	__m512i d_ = _mm512_and_si512(_mm512_inserti64x4(_mm512_castsi256_si512(a_), c_, 1), pad); \
	s = _mm512_add_epi64(s, _mm512_mullo_epi64(d_, p2)); \
	s = _mm512_rol_epi64(s, 31); \
	s = _mm512_mullo_epi64(s, p1); \
} while (0)

// acu_group hashes g (1 to 4) bands of rows rows each, the first starting
// at row y0, into sums[0:g], copying their rows into dst (w*4 bytes apart)
// when dst is not NULL. Bands 0 and 1 share register s0, bands 2 and 3
// s1; a band without a partner is paired with itself and the copy
// dropped. The two registers are named, not indexed, so that they stay in
// registers.
__attribute__((target("avx512f,avx512vl,avx512dq")))
static void acu_group(const uint8_t *src, int stride, int w, int y0, int g, int rows, uint8_t *dst, uint64_t *sums) {
	const int rowBytes = w * 4, n = rowBytes & ~31, copy = dst != NULL;
	const __m512i pad = _mm512_set1_epi64((long long)ACU_PAD);
	const __m512i p1 = _mm512_set1_epi64((long long)ACU_P1), p2 = _mm512_set1_epi64((long long)ACU_P2);
	const __m256i start = _mm256_setr_epi64x((long long)(ACU_P1 + ACU_P2), (long long)ACU_P2, 0, (long long)(0 - ACU_P1));
	__m512i s0 = _mm512_inserti64x4(_mm512_castsi256_si512(start), start, 1), s1 = s0;
	// The band in each half: bands 0, 1 in s0, 2, 3 in s1.
	const int b1 = g > 1 ? 1 : 0, b2 = g > 2 ? 2 : b1, b3 = g > 3 ? 3 : b2;
	uint64_t v[4][4]; // lanes by band, for row tails and the end
	for (int y = 0; y < rows; y++) {
		const uint8_t *r0 = src + (size_t)(y0 + y) * stride;
		const uint8_t *r1 = r0 + (size_t)(b1 * 16) * stride, *r2 = r0 + (size_t)(b2 * 16) * stride, *r3 = r0 + (size_t)(b3 * 16) * stride;
		uint8_t *o0 = copy ? dst + (size_t)(y0 + y) * rowBytes : NULL;
		uint8_t *o1 = copy ? o0 + (size_t)(b1 * 16) * rowBytes : NULL, *o2 = copy ? o0 + (size_t)(b2 * 16) * rowBytes : NULL,
			*o3 = copy ? o0 + (size_t)(b3 * 16) * rowBytes : NULL;
		if (g > 2) {
			for (int i = 0; i < n; i += 32) {
				ACU_STEP(s0, r0 + i, r1 + i, o0 + i, o1 + i);
				ACU_STEP(s1, r2 + i, r3 + i, o2 + i, o3 + i);
			}
		} else {
			for (int i = 0; i < n; i += 32) {
				ACU_STEP(s0, r0 + i, r1 + i, o0 + i, o1 + i);
			}
		}
		if (n == rowBytes) {
			continue;
		}
		// The row's last words (fewer than four), and a last pixel, go to
		// the first lane (hashTail).
		_mm512_storeu_si512((void *)v[0], s0); // bands 0 and 1 (v[1] follows v[0])
		_mm512_storeu_si512((void *)v[2], s1);
		const uint8_t *rows4[4] = {r0, r1, r2, r3};
		uint8_t *outs4[4] = {o0, o1, o2, o3};
		for (int b = 0; b < g; b++) {
			// With a band paired with itself, its lanes are those of the
			// lower half: v[b] is right for b < g either way.
			const uint8_t *t = rows4[b] + n;
			int left = rowBytes - n;
			if (copy) {
				memcpy(outs4[b] + n, t, (size_t)left);
			}
			for (; left >= 8; left -= 8, t += 8) {
				v[b][0] = acu_round(v[b][0], acu_load64(t) & ACU_PAD);
			}
			if (left >= 4) {
				v[b][0] = acu_round(v[b][0], acu_load32(t) & 0x00FFFFFFu);
			}
		}
		// A band paired with itself keeps both halves equal.
		if (b1 == 0) memcpy(v[1], v[0], sizeof v[0]);
		if (b3 == b2) memcpy(v[3], v[2], sizeof v[2]);
		s0 = _mm512_loadu_si512((const void *)v[0]);
		s1 = _mm512_loadu_si512((const void *)v[2]);
	}
	_mm512_storeu_si512((void *)v[0], s0);
	_mm512_storeu_si512((void *)v[2], s1);
	for (int b = 0; b < g; b++) {
		sums[b] = acu_end(v[b], w, rows);
	}
}

// acu_hash_bands hashes bands b0 to b1-1 (16 rows each, the last one
// shorter when h is not a multiple of 16) of w*h pixels at src into
// sums[b0:b1], copying them into dst when it is not NULL.
static void acu_hash_bands(const uint8_t *src, int stride, int w, int h, int b0, int b1, uint8_t *dst, uint64_t *sums) {
	int full = h / 16; // bands of 16 rows
	int b = b0;
	while (b < b1 && b < full) {
		int g = b1 - b;
		if (g > full - b) g = full - b;
		if (g > 4) g = 4;
		acu_group(src, stride, w, b * 16, g, 16, dst, sums + b);
		b += g;
	}
	if (b < b1) { // the short last band
		acu_group(src, stride, w, b * 16, 1, h - b * 16, dst, sums + b);
	}
}

// acu_hash is Hash: every band, folded as FoldBands does, four bands at a
// time, so no array of band hashes is needed.
static uint64_t acu_hash(const uint8_t *src, int stride, int w, int h) {
	uint64_t x = ACU_P5, sums[4];
	int full = h / 16, b = 0;
	while (b < full) {
		int g = full - b < 4 ? full - b : 4;
		acu_group(src, stride, w, b * 16, g, 16, NULL, sums);
		for (int i = 0; i < g; i++) {
			x = acu_round(x, sums[i]);
		}
		b += g;
	}
	if (b * 16 < h) { // the short last band
		acu_group(src, stride, w, b * 16, 1, h - b * 16, NULL, sums);
		x = acu_round(x, sums[0]);
	}
	x = acu_round(x, (uint64_t)(uint32_t)w << 32 | (uint64_t)(uint32_t)h);
	x ^= x >> 33;
	x *= ACU_P2;
	x ^= x >> 29;
	x *= ACU_P3;
	x ^= x >> 32;
	return x;
}
*/
import "C"

import "unsafe"

// hasHashAVX512 says whether hashBandsFast may run on this CPU (tests turn
// it off to compare with the Go code).
var hasHashAVX512 = hashAVX512OK

// hashAVX512OK: the CPU has what hashBandsFast needs.
var hashAVX512OK = C.acu_has_avx512() != 0

// hashBandsFast computes bands b0 to b1-1 of Hash's band hashes into
// sums[b0:b1], and copies their rows into dst (w*4 bytes apart) unless dst
// is nil, in C with AVX-512: the same arithmetic as bandHash, so the same
// values, several bands at once, about three times as fast on one core
// (docs/perf/frame.md). It reports false, and
// does nothing, when the CPU lacks AVX-512 (F, VL and DQ). The caller has
// checked the lengths.
// hashFast is Hash in C with AVX-512, with nothing allocated; ok is false
// when the CPU lacks it. The caller has checked the length.
func hashFast(pix []byte, w, h, stride int) (sum uint64, ok bool) {
	if !hasHashAVX512 || w <= 0 || h <= 0 {
		return 0, false
	}
	return uint64(C.acu_hash((*C.uint8_t)(unsafe.Pointer(unsafe.SliceData(pix))), C.int(stride), C.int(w), C.int(h))), true
}

func hashBandsFast(sums []uint64, src, dst []byte, w, h, stride, b0, b1 int) bool {
	if !hasHashAVX512 || b0 >= b1 || w <= 0 || h <= 0 {
		return false
	}
	var d *C.uint8_t
	if dst != nil {
		d = (*C.uint8_t)(unsafe.Pointer(unsafe.SliceData(dst)))
	}
	C.acu_hash_bands((*C.uint8_t)(unsafe.Pointer(unsafe.SliceData(src))), C.int(stride), C.int(w), C.int(h),
		C.int(b0), C.int(b1), d, (*C.uint64_t)(unsafe.Pointer(unsafe.SliceData(sums))))
	return true
}
