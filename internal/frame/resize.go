package frame

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
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
	// enough) run Exact, and so does every resize the AVX2 Exact kernels
	// take (cgo builds on amd64 CPUs with AVX2): they cost less than Fast's
	// Go kernels.
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
// bilinear filter of mode. dst must not overlap src. It panics if a buffer
// is too short, like an index out of range would. An empty source gives
// black. Large outputs are made in parallel bands of rows (up to
// GOMAXPROCS, at most 4), with the same result. Safe for concurrent use.
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
	band := resizeExact
	// Fast runs Exact where the AVX2 kernels take it: they cost less than
	// Fast's Go kernels, and Exact is within 2 levels of itself.
	if mode == Fast && hc.fast != nil && vc.fast != nil && !avx2Fits(dw, dh, sw, sh, hc, vc) {
		band = resizeFast
	}
	// Output rows are cut into chunks that the caller and up to
	// min(GOMAXPROCS, maxBands)-1 helper goroutines claim one at a time:
	// when a core is free the work is split about evenly, and when the
	// machine is busy and a helper is not scheduled soon, the caller does
	// the chunks itself instead of waiting for it. Each chunk recomputes at
	// most taps intermediate rows at its top edge, and every output row is
	// computed the same way whatever the split, so the result does not
	// depend on it.
	workers := min(runtime.GOMAXPROCS(0), maxBands)
	chunks := min(dh/minBandRows, dw*dh/minBandPixels, workers*chunksPerWorker)
	if workers <= 1 || chunks <= 1 {
		band(dst, dw, dh, 0, dh, src, sw, sh, stride, hc, vc)
		return
	}
	j := &resizeJob{band: band, dst: dst, dw: dw, dh: dh, src: src, sw: sw, sh: sh, stride: stride,
		hc: hc, vc: vc, chunks: int32(chunks)}
	j.wg.Add(chunks)
	for range workers - 1 {
		go j.run()
	}
	j.run()
	j.wg.Wait()
}

// resizeJob is one parallel Resize: chunks of output rows claimed in order.
type resizeJob struct {
	band           func(dst []byte, dw, dh, y0, y1 int, src []byte, sw, sh, stride int, hc, vc *coeffs)
	dst, src       []byte
	dw, dh         int
	sw, sh, stride int
	hc, vc         *coeffs
	chunks         int32
	next           atomic.Int32
	wg             sync.WaitGroup // one count per chunk, not per goroutine
}

// run makes chunks until none is left. A helper that starts after the last
// chunk was claimed returns without touching the buffers.
func (j *resizeJob) run() {
	for {
		c := int(j.next.Add(1) - 1)
		if c >= int(j.chunks) {
			return
		}
		n := int(j.chunks)
		j.band(j.dst, j.dw, j.dh, c*j.dh/n, (c+1)*j.dh/n, j.src, j.sw, j.sh, j.stride, j.hc, j.vc)
		j.wg.Done()
	}
}

// Parallel resizes: at most maxBands goroutines (the caller included), each
// taking chunks of at least minBandRows rows and minBandPixels pixels (so
// small resizes do not pay for goroutines), about chunksPerWorker per
// goroutine.
const (
	maxBands        = 4
	minBandRows     = 32
	minBandPixels   = 64 << 10
	chunksPerWorker = 4
)

const (
	precisionBits = 32 - 8 - 2 // Pillow's fixed point for 8-bit images
	exactHalf     = 1 << (precisionBits - 1)
	exactHalf2    = exactHalf | exactHalf<<32 // in both 32-bit lanes

	fastBits   = 13 // Fast's fixed point: 255<<13 + rounding fits a 21-bit lane
	fastOne    = 1 << fastBits
	fastMaxTap = 9 // Fast's worst-case error stays below 0.3 levels per pass up to 9 taps
	laneG      = 21
	laneR      = 42
	laneMask   = 0xFF | 0xFF<<laneG | 0xFF<<laneR
	fastHalf   = 1<<(fastBits-1) | 1<<(fastBits-1+laneG) | 1<<(fastBits-1+laneR)
)

// coeffs are one axis's filter taps in a uniform shape: output i reads the
// taps input samples from start[i], weighted by exact[i*taps:] (Pillow's
// fixed point) or fast[i*taps:] (Fast's). Pillow gives each output its own
// window of at most taps samples; windows shorter than taps are padded with
// zero weights (shifted left at the far edge), which adds exact zeros, so
// every output runs the same unrolled loop.
type coeffs struct {
	taps  int
	start []int32
	exact []int32
	fast  []uint64 // nil when taps > fastMaxTap
	// kx is exact for the AVX2 kernel: 4 taps (zero padded) of 4 weights
	// each (one per byte of a pixel) per output; nil when taps > 4 or the
	// kernel cannot run.
	kx []int32
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
// x86-64 does not use either), then laid out uniformly (see coeffs).
func precompute(inSize, outSize int) *coeffs {
	in0, in1 := float32(0), float32(inSize)
	scale := float64(in1-in0) / float64(outSize)
	filterscale := scale
	if filterscale < 1 {
		filterscale = 1
	}
	support := 1.0 * filterscale
	ksize := int(math.Ceil(support))*2 + 1
	xmins := make([]int, outSize)
	ns := make([]int, outSize)
	kk := make([]float64, outSize*ksize)
	ss := 1.0 / filterscale
	taps := 1
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
		k := kk[xx*ksize : xx*ksize+xmax]
		for x := range k {
			w := bilinearFilter(float64((float64(x+xmin) - center + 0.5) * ss))
			k[x] = w
			ww += w
		}
		for x := range k {
			if ww != 0 {
				k[x] /= ww
			}
		}
		xmins[xx], ns[xx] = xmin, xmax
		taps = max(taps, xmax)
	}
	c := &coeffs{taps: taps, start: make([]int32, outSize), exact: make([]int32, outSize*taps)}
	if taps <= fastMaxTap {
		c.fast = make([]uint64, outSize*taps)
	}
	if hasAVX2 && taps <= 4 {
		c.kx = make([]int32, outSize*16)
	}
	for xx := 0; xx < outSize; xx++ {
		start := min(xmins[xx], inSize-taps)
		c.start[xx] = int32(start)
		off := xx*taps + xmins[xx] - start
		w := kk[xx*ksize : xx*ksize+ns[xx]]
		k := c.exact[off : off+len(w)]
		for x := range k {
			if w[x] < 0 {
				k[x] = int32(-0.5 + float64(w[x]*(1<<precisionBits)))
			} else {
				k[x] = int32(0.5 + float64(w[x]*(1<<precisionBits)))
			}
		}
		if c.kx != nil {
			for t, v := range c.exact[xx*taps : xx*taps+taps] {
				kx := c.kx[xx*16+t*4 : xx*16+t*4+4]
				kx[0], kx[1], kx[2], kx[3] = v, v, v, v
			}
		}
		if c.fast != nil {
			f := c.fast[off : off+len(w)]
			sum, big := 0, 0
			for x := range f {
				f[x] = uint64(math.Round(w[x] * fastOne))
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
	ringLanes []lanes // Exact: horizontally resampled rows, taps of them
	rowsLanes [][]lanes
	ringF     []uint64 // Fast: the same, channels spread into 21-bit lanes
	spread    []uint64 // Fast: one source row spread into lanes
	tags      []int    // source row held by each ring slot, -1 for none
	ringB     []byte   // AVX2 Exact: horizontally resampled BGRX rows
	tags32    []int32  // AVX2 Exact: tags
	rows      [][]byte
	rowsF     [][]uint64
}

// scratches keeps scratch for reuse across garbage collections (see
// resizeBufs): one per goroutine that can run a band at once.
var scratches = make(chan *scratch, 2*maxBands)

func getScratch() *scratch {
	select {
	case s := <-scratches:
		return s
	default:
		return new(scratch)
	}
}

func putScratch(s *scratch) {
	select {
	case scratches <- s:
	default:
	}
}

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

// resizeExact makes output rows y0..y1-1 of Pillow's ImagingResampleInner
// with its 8bpc horizontal and vertical passes. Rows of the horizontal pass are made on demand into a
// ring of taps rows (Pillow makes them all first; the arithmetic is the
// same, the intermediate image just stays in cache). Like Pillow, a pass
// whose size does not change is skipped.
//
// Pillow clips each sum to 0..255 (clip8); with the bilinear filter's
// non-negative weights, which sum to 1<<22 within taps/2, a sum is always
// in [1<<21, 256<<22), so the unrolled kernels just shift.
func resizeExact(dst []byte, dw, dh, y0, y1 int, src []byte, sw, sh, stride int, hc, vc *coeffs) {
	needH, needV := dw != sw, dh != sh
	rowBytes := dw * 4
	switch {
	case !needH && !needV:
		for yy := y0; yy < y1; yy++ {
			copyPixels(dst[yy*rowBytes:(yy+1)*rowBytes], src[yy*stride:yy*stride+rowBytes])
		}
		return
	case !needV:
		for yy := y0; yy < y1; yy++ {
			horizExact(dst[yy*rowBytes:(yy+1)*rowBytes], src[yy*stride:yy*stride+sw*4], hc)
		}
		return
	}
	if resizeExactAVX2(dst, dw, dh, y0, y1, src, sw, sh, stride, hc, vc) {
		return
	}
	s := getScratch()
	defer putScratch(s)
	ks := vc.taps
	if !needH {
		for yy := y0; yy < y1; yy++ {
			ymin := int(vc.start[yy])
			rows := s.rows[:0]
			for t := 0; t < ks; t++ {
				rows = append(rows, src[(ymin+t)*stride:(ymin+t)*stride+rowBytes])
			}
			s.rows = rows
			vertExact(dst[yy*rowBytes:(yy+1)*rowBytes], rows, vc.exact[yy*ks:yy*ks+ks])
		}
		clear(s.rows) // do not keep the caller's source alive from the pool
		return
	}
	// The intermediate rows are kept as lanes (see lanes).
	np := (dw + 1) / 2
	s.ringLanes = grow(s.ringLanes, ks*np)
	s.resetTags(ks)
	for yy := y0; yy < y1; yy++ {
		ymin := int(vc.start[yy])
		rows := s.rowsLanes[:0]
		for t := 0; t < ks; t++ {
			y := ymin + t
			slot := y % ks
			r := s.ringLanes[slot*np : (slot+1)*np]
			if s.tags[slot] != y {
				horizExactLanes(r, src[y*stride:y*stride+sw*4], hc)
				s.tags[slot] = y
			}
			rows = append(rows, r)
		}
		s.rowsLanes = rows
		vertExactLanes(dst[yy*rowBytes:(yy+1)*rowBytes], rows, vc.exact[yy*ks:yy*ks+ks])
	}
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
	switch c.taps {
	case 2:
		horizExact2(out, row, c.start, c.exact)
	case 3:
		horizExact3(out, row, c.start, c.exact)
	case 4:
		horizExact4(out, row, c.start, c.exact)
	case 5:
		horizExact5(out, row, c.start, c.exact)
	case 6:
		horizExact6(out, row, c.start, c.exact)
	default:
		horizExactN(out, row, c)
	}
}

func horizExactN(out, row []byte, c *coeffs) {
	taps := c.taps
	for xx, x0 := range c.start[:len(out)/4] {
		kk := c.exact[xx*taps : xx*taps+taps]
		p := row[int(x0)*4 : (int(x0)+taps)*4]
		s0, s1, s2 := int32(exactHalf), int32(exactHalf), int32(exactHalf)
		for i, k := range kk {
			s0 += int32(p[i*4]) * k
			s1 += int32(p[i*4+1]) * k
			s2 += int32(p[i*4+2]) * k
		}
		binary.LittleEndian.PutUint32(out[xx*4:], uint32(clip8(s0))|uint32(clip8(s1))<<8|uint32(clip8(s2))<<16)
	}
}

// vertExact blends rows into out with the taps kk (Pillow's
// ImagingResampleVertical_8bpc).
func vertExact(out []byte, rows [][]byte, kk []int32) {
	switch len(rows) {
	case 2:
		vertExact2(out, rows, kk)
	case 3:
		vertExact3(out, rows, kk)
	case 4:
		vertExact4(out, rows, kk)
	case 5:
		vertExact5(out, rows, kk)
	case 6:
		vertExact6(out, rows, kk)
	default:
		vertExactN(out, rows, kk)
	}
}

func vertExactN(out []byte, rows [][]byte, kk []int32) {
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

// resizeFast makes output rows y0..y1-1 with resizeExact's structure with Fast's arithmetic: a pixel's
// B, G and R sit in 21-bit lanes of one uint64 (spread), so one multiply
// per tap weighs all three, and the ring keeps rows spread.
func resizeFast(dst []byte, dw, dh, y0, y1 int, src []byte, sw, sh, stride int, hc, vc *coeffs) {
	needH, needV := dw != sw, dh != sh
	s := getScratch()
	defer putScratch(s)
	rowBytes := dw * 4
	ks := vc.taps
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
	for yy := y0; yy < y1; yy++ {
		out := dst[yy*rowBytes : (yy+1)*rowBytes]
		if !needV {
			packRow(out, hrow(yy))
			continue
		}
		ymin := int(vc.start[yy])
		rows := s.rowsF[:0]
		for t := 0; t < ks; t++ {
			rows = append(rows, hrow(ymin+t))
		}
		s.rowsF = rows
		vertFast(out, rows, vc.fast[yy*ks:yy*ks+ks])
	}
}

// spreadRow puts each BGRX pixel's B, G, R into 21-bit lanes.
func spreadRow(dst []uint64, row []byte) {
	row = row[:len(dst)*4]
	i := 0
	for ; i+1 < len(dst) && len(row) >= 8; i += 2 {
		x := binary.LittleEndian.Uint64(row)
		dst[i] = x&0xff | (x&0xff00)<<(laneG-8) | (x&0xff0000)<<(laneR-16)
		dst[i+1] = x>>32&0xff | (x>>40&0xff)<<laneG | (x>>48&0xff)<<laneR
		row = row[8:]
	}
	if i < len(dst) && len(row) >= 4 {
		p := uint64(binary.LittleEndian.Uint32(row))
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

// packFast rounds an accumulated spread sum to a BGRX pixel (pad 0).
func packFast(acc uint64) uint32 {
	v := acc >> fastBits
	return uint32(v&0xff | (v>>(laneG-8))&0xff00 | (v>>(laneR-16))&0xff0000)
}

func horizFast(out, sp []uint64, c *coeffs) {
	switch c.taps {
	case 2:
		horizFast2(out, sp, c.start, c.fast)
	case 3:
		horizFast3(out, sp, c.start, c.fast)
	case 4:
		horizFast4(out, sp, c.start, c.fast)
	case 5:
		horizFast5(out, sp, c.start, c.fast)
	case 6:
		horizFast6(out, sp, c.start, c.fast)
	default:
		taps := c.taps
		for xx, x0 := range c.start[:len(out)] {
			kk := c.fast[xx*taps : xx*taps+taps]
			p := sp[x0 : int(x0)+taps]
			acc := uint64(fastHalf)
			for i, k := range kk {
				acc += p[i] * k
			}
			out[xx] = acc >> fastBits & laneMask
		}
	}
}

func vertFast(out []byte, rows [][]uint64, kk []uint64) {
	switch len(rows) {
	case 2:
		vertFast2(out, rows, kk)
	case 3:
		vertFast3(out, rows, kk)
	case 4:
		vertFast4(out, rows, kk)
	case 5:
		vertFast5(out, rows, kk)
	case 6:
		vertFast6(out, rows, kk)
	default:
		for x := 0; x < len(out)/4; x++ {
			acc := uint64(fastHalf)
			for t, r := range rows {
				acc += r[x] * kk[t]
			}
			binary.LittleEndian.PutUint32(out[x*4:], packFast(acc))
		}
	}
}

// lanes are two horizontally resampled pixels (Exact): B and R of each in
// the two 32-bit halves of [0] and [1], both G in [2]. A 64-bit multiply of
// a lane word weighs two channel values at once, exactly: every sum stays
// below 1<<31, so no lane carries into the next.
type lanes [3]uint64

// packPair turns lane sums (a and b hold B and R of each pixel, g both G;
// every 32-bit lane below 256<<precisionBits) into two BGRX pixels, pad 0,
// as one little-endian word.
func packPair(a, b, g uint64) uint64 {
	const m = 0xff | 0xff<<32
	a, b, g = a>>precisionBits&m, b>>precisionBits&m, g>>precisionBits&m
	return (a|a>>16)&0xff00ff | ((b|b>>16)&0xff00ff)<<32 | g<<8
}

// storePair writes the pixel pair p (the second only if it is inside out,
// whose length is a multiple of 4) from lane sums (see packPair). Small
// enough to inline into the kernels.
func storePair(out []byte, p int, a, b, g uint64) {
	v := packPair(a, b, g)
	if p*8+8 <= len(out) {
		binary.LittleEndian.PutUint64(out[p*8:], v)
		return
	}
	binary.LittleEndian.PutUint32(out[p*8:], uint32(v))
}

func horizExactLanes(out []lanes, row []byte, c *coeffs) {
	switch c.taps {
	case 2:
		horizExactLanes2(out, row, c.start, c.exact)
	case 3:
		horizExactLanes3(out, row, c.start, c.exact)
	case 4:
		horizExactLanes4(out, row, c.start, c.exact)
	case 5:
		horizExactLanes5(out, row, c.start, c.exact)
	case 6:
		horizExactLanes6(out, row, c.start, c.exact)
	default:
		taps := c.taps
		for p := range out {
			var v [2]uint64
			var g uint64
			for i := 0; i < 2 && 2*p+i < len(c.start); i++ {
				xx := 2*p + i
				x0 := int(c.start[xx])
				kk := c.exact[xx*taps : xx*taps+taps]
				q := row[x0*4 : (x0+taps)*4]
				s0, s1, s2 := int32(exactHalf), int32(exactHalf), int32(exactHalf)
				for t, k := range kk {
					s0 += int32(q[t*4]) * k
					s1 += int32(q[t*4+1]) * k
					s2 += int32(q[t*4+2]) * k
				}
				v[i] = uint64(clip8(s0)) | uint64(clip8(s2))<<32
				g |= uint64(clip8(s1)) << (32 * i)
			}
			out[p] = lanes{v[0], v[1], g}
		}
	}
}

func vertExactLanes(out []byte, rows [][]lanes, kk []int32) {
	switch len(rows) {
	case 2:
		vertExactLanes2(out, rows, kk)
	case 3:
		vertExactLanes3(out, rows, kk)
	case 4:
		vertExactLanes4(out, rows, kk)
	case 5:
		vertExactLanes5(out, rows, kk)
	case 6:
		vertExactLanes6(out, rows, kk)
	default:
		out = out[:len(out)/4*4]
		for p := 0; p < (len(out)/4+1)/2; p++ {
			var v [3]uint64
			for c := range v {
				v[c] = exactHalf2
				for t, r := range rows {
					v[c] += r[p][c] * uint64(kk[t])
				}
				// Clip each 32-bit lane at 255<<precisionBits (only a
				// filter with thousands of taps could reach it).
				lo, hi := min(v[c]&0xffffffff, 255<<precisionBits), min(v[c]>>32, 255<<precisionBits)
				v[c] = lo | hi<<32
			}
			storePair(out, p, v[0], v[1], v[2])
		}
	}
}
