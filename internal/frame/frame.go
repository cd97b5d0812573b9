// Package frame owns acu's in-memory screen frame and its conversions: crop,
// downsize, content hash, JPEG and PNG encoding. It is pure: no X11, no I/O.
//
// Pixels stay in the X server's native BGRX layout (4 bytes per pixel, the
// pad byte is garbage, never alpha) from capture to encoder: no full-frame
// channel swap anywhere on the per-frame path.
package frame

import (
	"image"
	"time"
)

// Frame is one capture of a target. Pix holds BGRX pixels, Stride bytes per
// row. A Frame is immutable once published: consumers share it and must not
// write to Pix.
type Frame struct {
	Pix     []byte
	Stride  int
	W, H    int
	Display string    // X display name, ":99"
	Target  string    // "screen", "window:0x1a00003", "crop:100,100,900,900"
	At      time.Time // capture time
	Hash    uint64    // content hash of the W*H visible pixels (pad bytes excluded)

	enc encodings // memoized encodings, at most one per (size, quality)
}

// Bounds returns the frame's rectangle, origin at (0,0).
func (f *Frame) Bounds() image.Rectangle { return image.Rect(0, 0, f.W, f.H) }

// encodings memoizes encoded forms of a frame. Filled in by encode.go.
type encodings struct{}

// JPEG returns the frame downsized so its long side is at most maxDim
// (no upscaling) and encoded as JPEG at quality. The result is memoized per
// (maxDim, quality): a frame shared by many consumers is encoded once.
// Callers must not modify the returned slice.
func (f *Frame) JPEG(maxDim, quality int) ([]byte, error) { panic("frame.JPEG: being written") }

// PNG returns the full-resolution frame as PNG (for saved screenshots).
func (f *Frame) PNG() ([]byte, error) { panic("frame.PNG: being written") }

// Sub returns a view of r within f (intersected with its bounds) sharing the
// same pixels, with Hash recomputed for the view and Target set to target.
func (f *Frame) Sub(r image.Rectangle, target string) *Frame { panic("frame.Sub: being written") }

// Hash returns the content hash of w*h BGRX pixels with the given stride,
// ignoring pad bytes. Equal hashes mean equal visible pixels (64-bit, not
// cryptographic).
func Hash(pix []byte, w, h, stride int) uint64 { panic("frame.Hash: being written") }

// RGBA converts the frame into a new image.RGBA (a copy; for OCR, annotation
// and tests, never on the judge's JPEG path).
func (f *Frame) RGBA() *image.RGBA { panic("frame.RGBA: being written") }
