//go:build cgo

package frame

/*
#cgo LDFLAGS: -lturbojpeg
#include <stdlib.h>
#include <turbojpeg.h>

// acu_compress encodes BGRX pixels as baseline JPEG, 4:2:0, accurate DCT,
// into buf (capacity tjBufSize, never reallocated).
static int acu_compress(tjhandle h, const unsigned char *src, int w, int pitch, int hgt,
		int quality, unsigned char *buf, unsigned long *size) {
	unsigned char *out = buf;
	return tjCompress2(h, src, w, pitch, hgt, TJPF_BGRX, &out, size, TJSAMP_420, quality,
		TJFLAG_ACCURATEDCT | TJFLAG_NOREALLOC);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// JPEGEncoder names the JPEG encoder this build uses.
const JPEGEncoder = "libjpeg-turbo"

// compressor is one TurboJPEG handle and its output buffer (C memory, sized
// by tjBufSize so it is never reallocated). A handle is used by one
// goroutine at a time.
type compressor struct {
	h   C.tjhandle
	buf *C.uchar
	cap C.ulong
}

// compressors is a bounded pool of idle handles. Unlike a sync.Pool it never
// drops a handle without tjDestroy, so no C memory leaks.
var compressors = make(chan *compressor, 8)

func getCompressor() (*compressor, error) {
	select {
	case c := <-compressors:
		return c, nil
	default:
	}
	h := C.tjInitCompress()
	if h == nil {
		return nil, fmt.Errorf("start libjpeg-turbo compressor: %s", C.GoString(C.tjGetErrorStr2(nil)))
	}
	return &compressor{h: h}, nil
}

func putCompressor(c *compressor) {
	select {
	case compressors <- c:
	default:
		c.destroy()
	}
}

func (c *compressor) destroy() {
	if c.buf != nil {
		C.tjFree(c.buf)
	}
	C.tjDestroy(c.h)
}

// EncodeJPEG encodes w*h BGRX pixels (stride bytes per row) as a baseline
// JPEG at quality (1..100) with 4:2:0 chroma subsampling and the accurate
// DCT: byte for byte what Pillow writes for the same RGB pixels. It writes
// into dst's storage when it is large enough (dst may be nil) and returns
// the encoded bytes. Safe for concurrent use; built with cgo it uses
// libjpeg-turbo's tjCompress2, without cgo image/jpeg.
func EncodeJPEG(dst []byte, pix []byte, w, h, stride, quality int) ([]byte, error) {
	if err := checkEncode(pix, w, h, stride, quality); err != nil {
		return nil, err
	}
	c, err := getCompressor()
	if err != nil {
		return nil, err
	}
	need := C.tjBufSize(C.int(w), C.int(h), C.TJSAMP_420)
	if need == C.ulong(^C.ulong(0)) {
		putCompressor(c)
		return nil, fmt.Errorf("encode %dx%d JPEG: image too large for libjpeg-turbo", w, h)
	}
	if c.cap < need {
		if c.buf != nil {
			C.tjFree(c.buf)
		}
		c.buf = C.tjAlloc(C.int(need))
		if c.buf == nil {
			c.cap = 0
			putCompressor(c)
			return nil, fmt.Errorf("encode %dx%d JPEG: allocate %d bytes: out of memory", w, h, need)
		}
		c.cap = need
	}
	size := c.cap
	rc := C.acu_compress(c.h, (*C.uchar)(unsafe.Pointer(&pix[0])), C.int(w), C.int(stride), C.int(h),
		C.int(quality), c.buf, &size)
	if rc != 0 {
		msg := C.GoString(C.tjGetErrorStr2(c.h))
		c.destroy() // do not reuse a handle in an unknown state
		return nil, fmt.Errorf("encode %dx%d JPEG with libjpeg-turbo: %w", w, h, errors.New(msg))
	}
	dst = append(dst[:0], unsafe.Slice((*byte)(unsafe.Pointer(c.buf)), int(size))...)
	putCompressor(c)
	return dst, nil
}
