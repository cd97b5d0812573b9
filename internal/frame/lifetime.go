package frame

import "sync/atomic"

// A frame's pixel buffer may belong to a producer that reuses it (the
// capture hub keeps a few buffers per display and copies only the rows that
// changed into a reused one). Such a frame counts its holds: the producer
// holds it while it is the producer's current frame, and each consumer it
// was handed to holds it until it calls Release. When the last hold is
// dropped the producer gets the buffer back at once, instead of waiting for
// the garbage collector to find it unreferenced.
//
// Releasing is optional. A frame a consumer never releases keeps its
// buffer until the collector frees it (or, in the capture hub, hands it
// back through a finalizer), exactly as if it had no owner. So code that
// keeps frames for long or hands them on (to a judge in flight, to a saved
// screenshot) simply does not release them; code on a hot loop (a live
// view, a benchmark) that is done with a frame when the loop turns
// releases it, and its captures reuse memory instead of faulting in new
// pages.
//
// Frames made by New, Sub views of them and frames built as literals have
// no owner: Retain and Release do nothing on them.

// lifetime is the count of holds on an owned buffer, shared by a frame and
// its Sub views.
type lifetime struct {
	holds atomic.Int64
	free  func()
}

// Own makes f's pixel buffer owned by the caller (a producer, before it
// publishes f): f starts with one hold, the producer's, which it drops
// with Release when f stops being its current frame. free runs once, when
// the last hold is dropped: nothing may read f.Pix (nor any view of it)
// after that, so free may reuse the buffer.
func (f *Frame) Own(free func()) {
	l := &lifetime{free: free}
	l.holds.Store(1)
	f.life = l
}

// Retain adds a hold on f's buffer for a new holder and returns f; the
// holder drops it with Release. It panics if the last hold was dropped
// already (the buffer may be reused): only a holder may pass a frame on
// with Retain.
func (f *Frame) Retain() *Frame {
	if f.life != nil && f.life.holds.Add(1) <= 1 {
		panic("frame: Retain of a frame whose pixels were released")
	}
	return f
}

// Release drops one hold on f's buffer: the caller (a holder: the one f
// was returned to by a producer such as capture.Hub.Capture, or by Retain
// or Sub) will not read f's pixels again, through f, its Pix, its
// encodings not yet made or a view of it (its other fields, and encodings
// already returned, stay valid). Each hold is released at most once; a
// frame without an owner ignores it.
func (f *Frame) Release() {
	l := f.life
	if l == nil {
		return
	}
	switch n := l.holds.Add(-1); {
	case n == 0:
		l.free()
	case n < 0:
		panic("frame: Release of a frame more often than it was held")
	}
}
