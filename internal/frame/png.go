package frame

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/adler32"
	"hash/crc32"
	"runtime"
	"sync"
)

// PNGEncoder encodes BGRX pixels as an opaque RGB PNG (Sub filter, deflate
// level 1, like image/png at BestSpeed) with the rows split into strips
// compressed in parallel: each strip is its own deflate stream ended by a
// sync flush, so their concatenation is one valid stream (as pigz does), and
// the zlib checksum is combined from the strips' Adler-32s. It keeps its
// buffers and compressors between calls; not safe for concurrent use.
type PNGEncoder struct {
	strips []pngStrip
}

type pngStrip struct {
	raw   []byte
	out   bytes.Buffer
	fw    *flate.Writer
	adler uint32
}

// minStripRows keeps strips big enough for deflate to find matches.
const minStripRows = 64

// Encode encodes w*h BGRX pixels with stride bytes per row. The result is
// a new slice; the encoder keeps only its scratch buffers.
func (e *PNGEncoder) Encode(pix []byte, w, h, stride int) []byte {
	n := min(max(runtime.GOMAXPROCS(0), 1), max(h/minStripRows, 1), 8)
	if len(e.strips) < n {
		e.strips = append(e.strips, make([]pngStrip, n-len(e.strips))...)
	}
	var wg sync.WaitGroup
	for i := range n {
		y0, y1 := h*i/n, h*(i+1)/n
		wg.Add(1)
		go func(s *pngStrip, last bool) {
			defer wg.Done()
			s.fill(pix, w, stride, y0, y1, last)
		}(&e.strips[i], i == n-1)
	}
	wg.Wait()

	size := 0
	for i := range n {
		size += e.strips[i].out.Len()
	}
	out := make([]byte, 0, size+128)
	out = append(out, "\x89PNG\r\n\x1a\n"...)
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 8, 2 // 8-bit RGB
	out = chunk(out, "IHDR", ihdr[:])
	// IDAT: zlib header, the strips' deflate streams, Adler-32.
	start := len(out)
	out = append(out, 0, 0, 0, 0, 'I', 'D', 'A', 'T', 0x78, 0x01)
	adler := uint32(1)
	for i := range n {
		s := &e.strips[i]
		out = append(out, s.out.Bytes()...)
		adler = adler32Combine(adler, s.adler, int64(len(s.raw)))
	}
	out = binary.BigEndian.AppendUint32(out, adler)
	binary.BigEndian.PutUint32(out[start:], uint32(len(out)-start-8))
	out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[start+4:]))
	return chunk(out, "IEND", nil)
}

func (s *pngStrip) fill(pix []byte, w, stride, y0, y1 int, last bool) {
	rowLen := 1 + 3*w
	need := rowLen * (y1 - y0)
	if cap(s.raw) < need {
		s.raw = make([]byte, need)
	}
	s.raw = s.raw[:need]
	for y := y0; y < y1; y++ {
		dst := s.raw[(y-y0)*rowLen : (y-y0+1)*rowLen]
		dst[0] = 1 // filter Sub: left neighbour differences
		src := pix[y*stride : y*stride+4*w]
		d := dst[1:]
		var pr, pg, pb byte
		for x := 0; x < w; x++ {
			r, g, b := src[4*x+2], src[4*x+1], src[4*x]
			d[3*x], d[3*x+1], d[3*x+2] = r-pr, g-pg, b-pb
			pr, pg, pb = r, g, b
		}
	}
	s.adler = adler32.Checksum(s.raw)
	s.out.Reset()
	if s.fw == nil {
		s.fw, _ = flate.NewWriter(&s.out, flate.BestSpeed)
	} else {
		s.fw.Reset(&s.out)
	}
	_, _ = s.fw.Write(s.raw)
	if last {
		_ = s.fw.Close()
	} else {
		_ = s.fw.Flush()
	}
}

func chunk(out []byte, typ string, data []byte) []byte {
	out = binary.BigEndian.AppendUint32(out, uint32(len(data)))
	start := len(out)
	out = append(out, typ...)
	out = append(out, data...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[start:]))
}

// adler32Combine is zlib's adler32_combine: the checksum of A||B from those
// of A and B and B's length.
func adler32Combine(a1, a2 uint32, len2 int64) uint32 {
	const base = 65521
	rem := uint64(len2 % base)
	sum1 := uint64(a1 & 0xffff)
	sum2 := (rem * sum1) % base
	sum1 += uint64(a2&0xffff) + base - 1
	sum2 += uint64(a1>>16) + uint64(a2>>16) + base - rem
	if sum1 >= base {
		sum1 -= base
	}
	if sum1 >= base {
		sum1 -= base
	}
	if sum2 >= base<<1 {
		sum2 -= base << 1
	}
	if sum2 >= base {
		sum2 -= base
	}
	return uint32(sum2<<16 | sum1)
}
