//go:build cgo && amd64

package frame

/*
#cgo CFLAGS: -O2
#include <stdint.h>
#include <string.h>
#include <immintrin.h>

#define ACU_PREC 22
#define ACU_HALF (1 << (ACU_PREC - 1))

static int acu_has_avx2(void) {
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
}

// acu_hrow is the horizontal Exact pass of one BGRX row: output xx reads 4
// pixels from start[xx] weighted by kx[xx*16:], each tap's weight repeated
// for the 4 bytes of a pixel (taps beyond the filter's are 0). Same int32
// arithmetic as Pillow; the pad byte is written as 0.
__attribute__((target("avx2")))
static void acu_hrow(const uint8_t *row, int sw, uint8_t *out, int dw, const int32_t *start, const int32_t *kx) {
	const __m128i half = _mm_set1_epi32(ACU_HALF);
	for (int xx = 0; xx < dw; xx++) {
		int x0 = start[xx];
		const int32_t *k = kx + xx * 16;
		__m128i lo, hi;
		if (x0 + 4 <= sw) {
			lo = _mm_loadl_epi64((const __m128i *)(row + x0 * 4));
			hi = _mm_loadl_epi64((const __m128i *)(row + x0 * 4 + 8));
		} else { // the filter's taps end inside the row; the rest weigh 0
			uint8_t tmp[16] = {0};
			memcpy(tmp, row + x0 * 4, (size_t)(sw - x0) * 4);
			lo = _mm_loadl_epi64((const __m128i *)tmp);
			hi = _mm_loadl_epi64((const __m128i *)(tmp + 8));
		}
		__m256i a = _mm256_mullo_epi32(_mm256_cvtepu8_epi32(lo), _mm256_loadu_si256((const __m256i *)k));
		__m256i b = _mm256_mullo_epi32(_mm256_cvtepu8_epi32(hi), _mm256_loadu_si256((const __m256i *)(k + 8)));
		a = _mm256_add_epi32(a, b);
		__m128i s = _mm_add_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
		s = _mm_srai_epi32(_mm_add_epi32(s, half), ACU_PREC);
		s = _mm_packus_epi32(s, s);
		s = _mm_packus_epi16(s, s);
		uint32_t v = (uint32_t)_mm_cvtsi128_si32(s) & 0x00ffffff;
		memcpy(out + xx * 4, &v, 4);
	}
}

// acu_vrow blends taps rows of n bytes (pad bytes 0) into out with kk.
__attribute__((target("avx2")))
static void acu_vrow(uint8_t *out, const uint8_t *const *rows, int taps, const int32_t *kk, int n) {
	int i = 0;
	for (; i + 16 <= n; i += 16) {
		__m256i s0 = _mm256_set1_epi32(ACU_HALF), s1 = s0;
		for (int t = 0; t < taps; t++) {
			__m256i k = _mm256_set1_epi32(kk[t]);
			__m128i v = _mm_loadu_si128((const __m128i *)(rows[t] + i));
			s0 = _mm256_add_epi32(s0, _mm256_mullo_epi32(_mm256_cvtepu8_epi32(v), k));
			s1 = _mm256_add_epi32(s1, _mm256_mullo_epi32(_mm256_cvtepu8_epi32(_mm_srli_si128(v, 8)), k));
		}
		s0 = _mm256_srai_epi32(s0, ACU_PREC);
		s1 = _mm256_srai_epi32(s1, ACU_PREC);
		__m256i p = _mm256_packus_epi32(s0, s1);              // lanes: s0lo s1lo | s0hi s1hi
		p = _mm256_permute4x64_epi64(p, 0xd8);                 // s0lo s0hi s1lo s1hi
		__m128i q = _mm_packus_epi16(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1));
		_mm_storeu_si128((__m128i *)(out + i), q);
	}
	for (; i < n; i++) {
		int32_t s = ACU_HALF;
		for (int t = 0; t < taps; t++) s += (int32_t)rows[t][i] * kk[t];
		out[i] = (uint8_t)(s >> ACU_PREC);
	}
}

// acu_band makes output rows y0..y1-1 of a resize that changes both sizes:
// horizontal rows on demand into a ring of vtaps rows (tags: source row
// held by each slot, -1 for none), then the vertical blend.
static void acu_band(uint8_t *dst, int dw, int y0, int y1, const uint8_t *src, int sw, int stride,
		const int32_t *hstart, const int32_t *hkx, const int32_t *vstart, const int32_t *vk, int vtaps,
		uint8_t *ring, int32_t *tags) {
	const uint8_t *rows[16];
	int rb = dw * 4;
	for (int t = 0; t < vtaps; t++) tags[t] = -1;
	for (int yy = y0; yy < y1; yy++) {
		int ymin = vstart[yy];
		for (int t = 0; t < vtaps; t++) {
			int y = ymin + t, slot = y % vtaps;
			uint8_t *r = ring + (size_t)slot * rb;
			if (tags[slot] != y) {
				acu_hrow(src + (size_t)y * stride, sw, r, dw, hstart, hkx);
				tags[slot] = y;
			}
			rows[t] = r;
		}
		acu_vrow(dst + (size_t)yy * rb, rows, vtaps, vk + (size_t)yy * vtaps, rb);
	}
}
*/
import "C"

import "unsafe"

// hasAVX2 says whether resizeExactAVX2 may run on this CPU (tests turn it
// off to compare with the Go kernels).
var hasAVX2 = C.acu_has_avx2() != 0

// avx2MaxVTaps bounds the vertical taps of the C band (its rows array).
const avx2MaxVTaps = 16

// avx2Fits says whether resizeExactAVX2 takes this resize.
func avx2Fits(dw, dh, sw, sh int, hc, vc *coeffs) bool {
	return hasAVX2 && hc.kx != nil && vc.taps <= avx2MaxVTaps && dw != sw && dh != sh
}

// resizeExactAVX2 is resizeExact for a resize that changes both sizes, with
// the horizontal filter at most 4 taps, in C with AVX2 (the same int32
// arithmetic, so the same bytes). It reports false when it cannot run.
func resizeExactAVX2(dst []byte, dw, dh, y0, y1 int, src []byte, sw, sh, stride int, hc, vc *coeffs) bool {
	if !avx2Fits(dw, dh, sw, sh, hc, vc) || y0 >= y1 {
		return false
	}
	s := getScratch()
	defer putScratch(s)
	s.ringB = grow(s.ringB, vc.taps*dw*4)
	s.tags32 = grow(s.tags32, vc.taps)
	C.acu_band((*C.uint8_t)(unsafe.Pointer(&dst[0])), C.int(dw), C.int(y0), C.int(y1),
		(*C.uint8_t)(unsafe.Pointer(&src[0])), C.int(sw), C.int(stride),
		(*C.int32_t)(unsafe.Pointer(&hc.start[0])), (*C.int32_t)(unsafe.Pointer(&hc.kx[0])),
		(*C.int32_t)(unsafe.Pointer(&vc.start[0])), (*C.int32_t)(unsafe.Pointer(&vc.exact[0])), C.int(vc.taps),
		(*C.uint8_t)(unsafe.Pointer(&s.ringB[0])), (*C.int32_t)(unsafe.Pointer(&s.tags32[0])))
	return true
}
