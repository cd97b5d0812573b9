package frame

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
)

// Mode selects how Resize resamples.
type Mode uint8

const (
	// Exact is Pillow's BILINEAR resize bit for bit: a two-pass (horizontal,
	// then vertical) convolution with a triangle filter whose support grows
	// with the downscale factor (antialiasing), 22-bit fixed-point
	// coefficients and 8-bit rounding between the passes.
	Exact Mode = iota
	// Fast uses the same filter with 13-bit coefficients and all three
	// channels in one 64-bit multiply per tap; every channel stays within 2
	// levels of Exact. Downscales by more than 4 (where 13 bits would not be
	// enough) run Exact.
	Fast
)

// String returns "exact" or "fast".
func (m Mode) String() string {
	switch m {
	case Exact:
		return "exact"
	case Fast:
		return "fast"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// ParseMode parses "exact" or "fast" (for configuration).
func ParseMode(s string) (Mode, error) {
	switch s {
	case "exact":
		return Exact, nil
	case "fast":
		return Fast, nil
	}
	return 0, fmt.Errorf("resize mode %q: use exact or fast", s)
}

// TargetSize returns the size a w*h image is downsized to so that its long
// side is at most maxDim, keeping the aspect ratio, never upscaling; exactly
// the reference pipeline's target_size (Python's round, half to even). Like
// it, a maxDim below 1 gives 1x1.
func TargetSize(w, h, maxDim int) (int, int) {
	long := max(w, h)
	if long <= maxDim {
		return w, h
	}
	s := float64(maxDim) / float64(long)
	return max(1, int(math.RoundToEven(float64(w)*s))), max(1, int(math.RoundToEven(float64(h)*s)))
}

// Resize resamples the sw*sh BGRX pixels of src (stride bytes per row) into
// dst as dw*dh BGRX pixels (stride dw*4; pad bytes written as 0) with the
// bilinear filter of mode. It panics if a buffer is too short, like an index
// out of range would. An empty source gives black.
func Resize(dst []byte, dw, dh int, src []byte, sw, sh, stride int, mode Mode) {
	checkBuf("frame.Resize source", src, sw, sh, stride)
	checkBuf("frame.Resize destination", dst, dw, dh, dw*4)
	if dw == 0 || dh == 0 {
		return
	}
	if sw == 0 || sh == 0 {
		clear(dst[:dw*dh*4])
		return
	}
	hc, vc := coeffsFor(sw, dw), coeffsFor(sh, dh)
	if mode == Fast && hc.fast != nil && vc.fast != nil {
		resizeFast(dst, dw, dh, src, sw, sh, stride, hc, vc)
		return
	}
	resizeExact(dst, dw, dh, src, sw, sh, stride, hc, vc)
}

const (
	precisionBits = 32 - 8 - 2 // Pillow's fixed point for 8-bit images
	exactHalf     = 1 << (precisionBits - 1)

	fastBits   = 13 // Fast's fixed point: 255<<13 + rounding fits a 21-bit lane
	fastOne    = 1 << fastBits
	fastMaxTap = 9 // Fast's worst-case error stays below 0.3 levels per pass up to 9 taps
	laneG      = 21
	laneR      = 42
	laneMask   = 0xFF | 0xFF<<laneG | 0xFF<<laneR
	fastHalf   = 1<<(fastBits-1) | 1<<(fastBits-1+laneG) | 1<<(fastBits-1+laneR)
)

// coeffs are one axis's filter taps: for output i, the n = bounds[2i+1]
// input samples from bounds[2i], weighted by exact[i*ksize:] (Pillow's
// fixed point) or fast[i*ksize:] (Fast's).
type coeffs struct {
	ksize  int
	bounds []int32
	exact  []int32
	fast   []uint64 // nil when ksize > fastMaxTap
}

var coeffCache struct {
	mu sync.Mutex
	m  map[[2]int]*coeffs
}

// coeffsFor returns the (cached) taps for resampling in samples to out.
func coeffsFor(in, out int) *coeffs {
	key := [2]int{in, out}
	coeffCache.mu.Lock()
	c := coeffCache.m[key]
	coeffCache.mu.Unlock()
	if c != nil {
		return c
	}
	c = precompute(in, out)
	coeffCache.mu.Lock()
	if coeffCache.m == nil || len(coeffCache.m) >= 64 { // window sizes vary; keep it bounded
		coeffCache.m = make(map[[2]int]*coeffs)
	}
	coeffCache.m[key] = c
	coeffCache.mu.Unlock()
	return c
}

// bilinearFilter is Pillow's triangle filter (support 1).
func bilinearFilter(x float64) float64 {
	if x < 0 {
		x = -x
	}
	if x < 1 {
		return 1 - x
	}
	return 0
}

// precompute is Pillow 9's precompute_coeffs + normalize_coeffs_8bpc for
// the bilinear filter and the box (0, in), operation for operation in
// float64 (explicit conversions forbid fused multiply-adds, which C on
// x86-64 does not use either).
func precompute(inSize, outSize int) *coeffs {
	in0, in1 := float32(0), float32(inSize)
	scale := float64(in1-in0) / float64(outSize)
	filterscale := scale
	if filterscale < 1 {
		filterscale = 1
	}
	support := 1.0 * filterscale
	ksize := int(math.Ceil(support))*2 + 1
	c := &coeffs{ksize: ksize, bounds: make([]int32, 2*outSize), exact: make([]int32, outSize*ksize)}
	if ksize <= fastMaxTap {
		c.fast = make([]uint64, outSize*ksize)
	}
	kk := make([]float64, ksize)
	ss := 1.0 / filterscale
	for xx := 0; xx < outSize; xx++ {
		center := float64(in0) + float64((float64(xx)+0.5)*scale)
		ww := 0.0
		xmin := int(center - support + 0.5)
		if xmin < 0 {
			xmin = 0
		}
		xmax := int(center + support + 0.5)
		if xmax > inSize {
			xmax = inSize
		}
		xmax -= xmin
		for x := 0; x < xmax; x++ {
			w := bilinearFilter(float64((float64(x+xmin) - center + 0.5) * ss))
			kk[x] = w
			ww += w
		}
		for x := 0; x < xmax; x++ {
			if ww != 0 {
				kk[x] /= ww
			}
		}
		c.bounds[2*xx] = int32(xmin)
		c.bounds[2*xx+1] = int32(xmax)
		k := c.exact[xx*ksize : xx*ksize+xmax]
		for x := range k {
			if kk[x] < 0 {
				k[x] = int32(-0.5 + float64(kk[x]*(1<<precisionBits)))
			} else {
				k[x] = int32(0.5 + float64(kk[x]*(1<<precisionBits)))
			}
		}
		if c.fast != nil {
			f := c.fast[xx*ksize : xx*ksize+xmax]
			sum, big := 0, 0
			for x := range f {
				f[x] = uint64(math.Round(kk[x] * fastOne))
				sum += int(f[x])
				if f[x] > f[big] {
					big = x
				}
			}
			// Make the taps sum to exactly fastOne: no lane can overflow.
			f[big] = uint64(int(f[big]) + fastOne - sum)
		}
	}
	return c
}

// scratch holds Resize's per-call buffers; pooled.
type scratch struct {
	ring   []byte   // Exact: horizontally resampled rows, ksize of them
	ringF  []uint64 // Fast: the same, channels spread into 21-bit lanes
	spread []uint64 // Fast: one source row spread into lanes
	tags   []int    // source row held by each ring slot, -1 for none
	rows   [][]byte
	rowsF  [][]uint64
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func (s *scratch) resetTags(n int) {
	s.tags = grow(s.tags, n)
	for i := range s.tags {
		s.tags[i] = -1
	}
}

// resizeExact is Pillow's ImagingResampleInner with its 8bpc horizontal and
// vertical passes. Rows of the horizontal pass are made on demand into a
// ring of ksize rows (Pillow makes them all first; the arithmetic is the
// same, the intermediate image just stays in cache). Like Pillow, a pass
// whose size does not change is skipped.
func resizeExact(dst []byte, dw, dh int, src []byte, sw, sh, stride int, hc, vc *coeffs) {
	needH, needV := dw != sw, dh != sh
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	rowBytes := dw * 4
	ks := vc.ksize
	if needH {
		s.ring = grow(s.ring, ks*rowBytes)
		s.resetTags(ks)
	}
	hrow := func(y int) []byte {
		if !needH {
			return src[y*stride : y*stride+sw*4]
		}
		slot := y % ks
		r := s.ring[slot*rowBytes : (slot+1)*rowBytes]
		if s.tags[slot] != y {
			horizExact(r, src[y*stride:y*stride+sw*4], hc)
			s.tags[slot] = y
		}
		return r
	}
	for yy := 0; yy < dh; yy++ {
		out := dst[yy*rowBytes : (yy+1)*rowBytes]
		if !needV {
			copyPixels(out, hrow(yy))
			continue
		}
		ymin, n := int(vc.bounds[2*yy]), int(vc.bounds[2*yy+1])
		rows := s.rows[:0]
		for t := 0; t < n; t++ {
			rows = append(rows, hrow(ymin+t))
		}
		s.rows = rows
		vertExact(out, rows, vc.exact[yy*ks:yy*ks+n])
	}
	clear(s.rows) // do not keep the caller's source alive from the pool
}

// copyPixels copies BGRX pixels, writing 0 pad bytes.
func copyPixels(dst, src []byte) {
	copy(dst, src)
	for i := 3; i < len(dst); i += 4 {
		dst[i] = 0
	}
}

func clip8(s int32) byte {
	if s >= 1<<precisionBits<<8 {
		return 255
	}
	if s <= 0 {
		return 0
	}
	return byte(s >> precisionBits)
}

// horizExact resamples one BGRX row into out (Pillow's
// ImagingResampleHorizontal_8bpc).
func horizExact(out, row []byte, c *coeffs) {
	ks := c.ksize
	n := len(out) / 4
	bounds := c.bounds[:2*n]
	for xx := 0; xx < n; xx++ {
		xmin, cnt := int(bounds[2*xx]), int(bounds[2*xx+1])
		kk := c.exact[xx*ks : xx*ks+cnt]
		p := row[xmin*4 : (xmin+cnt)*4]
		s0, s1, s2 := int32(exactHalf), int32(exactHalf), int32(exactHalf)
		for i, k := range kk {
			px := binary.LittleEndian.Uint32(p[i*4:])
			s0 += int32(px&0xff) * k
			s1 += int32(px>>8&0xff) * k
			s2 += int32(px>>16&0xff) * k
		}
		binary.LittleEndian.PutUint32(out[xx*4:], uint32(clip8(s0))|uint32(clip8(s1))<<8|uint32(clip8(s2))<<16)
	}
}

// vertExact blends rows into out with the taps kk (Pillow's
// ImagingResampleVertical_8bpc).
func vertExact(out []byte, rows [][]byte, kk []int32) {
	switch len(rows) {
	case 2:
		r0, r1 := rows[0][:len(out)], rows[1][:len(out)]
		k0, k1 := kk[0], kk[1]
		for i := 0; i+4 <= len(out); i += 4 {
			s0 := exactHalf + int32(r0[i])*k0 + int32(r1[i])*k1
			s1 := exactHalf + int32(r0[i+1])*k0 + int32(r1[i+1])*k1
			s2 := exactHalf + int32(r0[i+2])*k0 + int32(r1[i+2])*k1
			binary.LittleEndian.PutUint32(out[i:], uint32(clip8(s0))|uint32(clip8(s1))<<8|uint32(clip8(s2))<<16)
		}
	case 3:
		r0, r1, r2 := rows[0][:len(out)], rows[1][:len(out)], rows[2][:len(out)]
		k0, k1, k2 := kk[0], kk[1], kk[2]
		for i := 0; i+4 <= len(out); i += 4 {
			s0 := exactHalf + int32(r0[i])*k0 + int32(r1[i])*k1 + int32(r2[i])*k2
			s1 := exactHalf + int32(r0[i+1])*k0 + int32(r1[i+1])*k1 + int32(r2[i+1])*k2
			s2 := exactHalf + int32(r0[i+2])*k0 + int32(r1[i+2])*k1 + int32(r2[i+2])*k2
			binary.LittleEndian.PutUint32(out[i:], uint32(clip8(s0))|uint32(clip8(s1))<<8|uint32(clip8(s2))<<16)
		}
	case 4:
		r0, r1, r2, r3 := rows[0][:len(out)], rows[1][:len(out)], rows[2][:len(out)], rows[3][:len(out)]
		k0, k1, k2, k3 := kk[0], kk[1], kk[2], kk[3]
		for i := 0; i+4 <= len(out); i += 4 {
			s0 := exactHalf + int32(r0[i])*k0 + int32(r1[i])*k1 + int32(r2[i])*k2 + int32(r3[i])*k3
			s1 := exactHalf + int32(r0[i+1])*k0 + int32(r1[i+1])*k1 + int32(r2[i+1])*k2 + int32(r3[i+1])*k3
			s2 := exactHalf + int32(r0[i+2])*k0 + int32(r1[i+2])*k1 + int32(r2[i+2])*k2 + int32(r3[i+2])*k3
			binary.LittleEndian.PutUint32(out[i:], uint32(clip8(s0))|uint32(clip8(s1))<<8|uint32(clip8(s2))<<16)
		}
	default:
		for i := 0; i+4 <= len(out); i += 4 {
			s0, s1, s2 := int32(exactHalf), int32(exactHalf), int32(exactHalf)
			for t, r := range rows {
				k := kk[t]
				s0 += int32(r[i]) * k
				s1 += int32(r[i+1]) * k
				s2 += int32(r[i+2]) * k
			}
			binary.LittleEndian.PutUint32(out[i:], uint32(clip8(s0))|uint32(clip8(s1))<<8|uint32(clip8(s2))<<16)
		}
	}
}

// resizeFast is resizeExact's structure with Fast's arithmetic: a pixel's
// B, G and R sit in 21-bit lanes of one uint64 (spread), so one multiply
// per tap weighs all three, and the ring keeps rows spread.
func resizeFast(dst []byte, dw, dh int, src []byte, sw, sh, stride int, hc, vc *coeffs) {
	needH, needV := dw != sw, dh != sh
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	rowBytes := dw * 4
	ks := vc.ksize
	s.ringF = grow(s.ringF, ks*dw)
	s.resetTags(ks)
	if needH {
		s.spread = grow(s.spread, sw)
	}
	hrow := func(y int) []uint64 {
		slot := y % ks
		r := s.ringF[slot*dw : (slot+1)*dw]
		if s.tags[slot] != y {
			row := src[y*stride : y*stride+sw*4]
			if needH {
				spreadRow(s.spread, row)
				horizFast(r, s.spread, hc)
			} else {
				spreadRow(r, row)
			}
			s.tags[slot] = y
		}
		return r
	}
	for yy := 0; yy < dh; yy++ {
		out := dst[yy*rowBytes : (yy+1)*rowBytes]
		if !needV {
			packRow(out, hrow(yy))
			continue
		}
		ymin, n := int(vc.bounds[2*yy]), int(vc.bounds[2*yy+1])
		rows := s.rowsF[:0]
		for t := 0; t < n; t++ {
			rows = append(rows, hrow(ymin+t))
		}
		s.rowsF = rows
		vertFast(out, rows, vc.fast[yy*ks:yy*ks+n])
	}
}

// spreadRow puts each BGRX pixel's B, G, R into 21-bit lanes.
func spreadRow(dst []uint64, row []byte) {
	row = row[:len(dst)*4]
	for i := range dst {
		p := uint64(binary.LittleEndian.Uint32(row[i*4:]))
		dst[i] = p&0xff | (p&0xff00)<<(laneG-8) | (p&0xff0000)<<(laneR-16)
	}
}

// packRow writes spread pixels (lanes holding 0..255) as BGRX.
func packRow(out []byte, row []uint64) {
	out = out[:len(row)*4]
	for i, v := range row {
		binary.LittleEndian.PutUint32(out[i*4:], uint32(v&0xff|(v>>(laneG-8))&0xff00|(v>>(laneR-16))&0xff0000))
	}
}

func horizFast(out, sp []uint64, c *coeffs) {
	ks := c.ksize
	bounds := c.bounds[:2*len(out)]
	for xx := range out {
		xmin, cnt := int(bounds[2*xx]), int(bounds[2*xx+1])
		kk := c.fast[xx*ks : xx*ks+cnt]
		p := sp[xmin : xmin+cnt]
		acc := uint64(fastHalf)
		for i, k := range kk {
			acc += p[i] * k
		}
		out[xx] = acc >> fastBits & laneMask
	}
}

func packFast(acc uint64) uint32 {
	v := acc >> fastBits
	return uint32(v&0xff | (v>>(laneG-8))&0xff00 | (v>>(laneR-16))&0xff0000)
}

func vertFast(out []byte, rows [][]uint64, kk []uint64) {
	n := len(out) / 4
	out = out[:n*4]
	switch len(rows) {
	case 2:
		r0, r1 := rows[0][:n], rows[1][:n]
		k0, k1 := kk[0], kk[1]
		for x := range r0 {
			binary.LittleEndian.PutUint32(out[x*4:], packFast(fastHalf+r0[x]*k0+r1[x]*k1))
		}
	case 3:
		r0, r1, r2 := rows[0][:n], rows[1][:n], rows[2][:n]
		k0, k1, k2 := kk[0], kk[1], kk[2]
		for x := range r0 {
			binary.LittleEndian.PutUint32(out[x*4:], packFast(fastHalf+r0[x]*k0+r1[x]*k1+r2[x]*k2))
		}
	case 4:
		r0, r1, r2, r3 := rows[0][:n], rows[1][:n], rows[2][:n], rows[3][:n]
		k0, k1, k2, k3 := kk[0], kk[1], kk[2], kk[3]
		for x := range r0 {
			binary.LittleEndian.PutUint32(out[x*4:], packFast(fastHalf+r0[x]*k0+r1[x]*k1+r2[x]*k2+r3[x]*k3))
		}
	default:
		for x := 0; x < n; x++ {
			acc := uint64(fastHalf)
			for t, r := range rows {
				acc += r[x] * kk[t]
			}
			binary.LittleEndian.PutUint32(out[x*4:], packFast(acc))
		}
	}
}
