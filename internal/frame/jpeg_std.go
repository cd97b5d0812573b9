//go:build !cgo

package frame

// JPEGEncoder names the JPEG encoder this build uses.
const JPEGEncoder = "image/jpeg"

// EncodeJPEG encodes w*h BGRX pixels (stride bytes per row) as a baseline
// JPEG at quality (1..100) with 4:2:0 chroma subsampling. It writes into
// dst's storage when it is large enough (dst may be nil) and returns the
// encoded bytes. Safe for concurrent use; built with cgo it uses
// libjpeg-turbo's tjCompress2 (byte-identical to Pillow), without cgo, as
// here, image/jpeg (valid, 8-10x slower, not byte-identical).
func EncodeJPEG(dst []byte, pix []byte, w, h, stride, quality int) ([]byte, error) {
	return encodeStdJPEG(dst, pix, w, h, stride, quality)
}
