package capture

import (
	"sync/atomic"

	"github.com/acu-dev/acu/internal/frame"
)

// Buffers recycles the pixel buffers of one display's frames for a
// producer outside this package (the Wayland hubs: internal/wayland/frames
// for wlroots' screencopy, internal/wayland/mutterframes for GNOME's
// screen cast), the way this package's hub recycles its own (pixpool.go):
// Get returns a buffer that a released frame gave back, or a new one; Own
// makes a frame built on it give the buffer back once its last hold is
// dropped (frame.Frame.Release), or, when nothing released it, once the
// collector finds none of its bytes referenced. So a frame still held
// keeps its pixels, whoever holds it, and one that was released is the
// next frame's memory instead of a new 3.7 MB at 1280x720.
//
// The producer holds each frame it publishes (Own's hold) while it is its
// current frame and releases it when the next one replaces it; each
// caller it hands the frame to gets a hold of its own (Retain). The zero
// value is ready to use; its methods are safe for concurrent use.
type Buffers struct {
	p        pixPool
	recycled atomic.Int64
}

// Get returns a buffer of n bytes: one a released frame gave back (its
// contents are that frame's pixels), or a new one.
func (b *Buffers) Get(n int) []byte {
	if buf, _ := b.p.get(n, true); buf != nil {
		b.recycled.Add(1)
		return buf
	}
	return make([]byte, n)
}

// Own makes f, whose Pix is a whole buffer from Get (not a view into
// one), give its buffer back when its last hold is dropped: f starts with
// one hold, the producer's (frame.Frame.Own).
func (b *Buffers) Own(f *frame.Frame) {
	pix := f.Pix
	tracked := b.p.publish(pix, 0)
	f.Own(func() { b.p.release(pix, 0, tracked) })
}

// Recycled is how many Gets returned a buffer a frame gave back.
func (b *Buffers) Recycled() int64 { return b.recycled.Load() }

// Close drops the buffers kept ready (the display's source is gone);
// frames still held keep theirs, and those given back later go to the
// collector's pool.
func (b *Buffers) Close() { b.p.close() }
