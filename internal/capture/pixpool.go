package capture

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// pixPool recycles the pixel buffers of one display's frames. A changed
// frame needs a buffer of its own (frames are shared and immutable); one
// that held an earlier frame needs only the rows that changed since copied
// into it (source.catchUp), where a new one needs them all.
//
// A buffer comes back only when nothing can read it any more: a finalizer
// on the buffer itself (not on the Frame: Sub views, and any slice a
// consumer took of Pix, share the buffer) runs once the collector finds no
// reference to any of its bytes, and puts it in a sync.Pool. So the pool
// never hands out pixels still in use, whoever holds them and for however
// long. The sync.Pool drops what stays unused for two collections, so idle
// buffers do not outlive the activity that made them.
//
// The buffers that carry that finalizer at a time hold at most
// trackedBudget bytes; the frames beyond them get plain buffers that the
// collector frees. Without the bound, memory grew without limit on a
// display read continuously: a buffer with a finalizer outlives the
// collection that finds it dead (resurrected for its finalizer) and the
// collector's pacing does not count it, so every frame between two
// collections stayed in the heap, and their number grew from one
// collection to the next (about 270 MB over 1,500 captures at 1280x720;
// TestRecyclingBoundsMemory).
//
// Each buffer carries the generation of the segment it is a copy of
// (source.gen), so that bringing it up to date can copy only the bands
// read since (source.frameBuf).
type pixPool struct {
	idle    sync.Pool    // *pixBuf
	tracked atomic.Int64 // published buffers whose finalizer has not run
}

// trackedBudget bounds the bytes of a display's buffers that come back to
// the pool: 11 frames at 1280x720, 5 at 1920x1080 (at least 2). A returned
// buffer is tracked again only when it is published again, so the idle and
// the tracked together stay about this size. More recycles more, with
// little gain beyond this (docs/perf/capture.md).
const trackedBudget = 40 << 20

type pixBuf struct {
	b   []byte
	gen uint64
}

// get returns an idle buffer of n bytes and the generation it holds, or
// nil when there is none.
func (p *pixPool) get(n int) ([]byte, uint64) {
	pb, _ := p.idle.Get().(*pixBuf)
	if pb == nil || len(pb.b) != n {
		return nil, 0 // one of another size (the screen was resized) is dropped
	}
	return pb.b, pb.gen
}

// put returns a buffer no frame references, holding generation gen.
func (p *pixPool) put(b []byte, gen uint64) {
	if len(b) > 0 {
		p.idle.Put(&pixBuf{b, gen})
	}
}

// publish marks b, holding generation gen, as a frame's pixels: it
// returns to the pool once nothing references any of its bytes, unless
// trackedBudget is spent already (then the collector frees it).
func (p *pixPool) publish(b []byte, gen uint64) {
	if len(b) == 0 {
		return
	}
	if p.tracked.Add(1) > max(2, trackedBudget/int64(len(b))) {
		p.tracked.Add(-1)
		return
	}
	n := len(b)
	// The finalizer must not reference b, or b would stay reachable. &b[0]
	// is the start of b's allocation: b is always a whole buffer of its
	// own (made here, by append, or handed back by this finalizer).
	runtime.SetFinalizer(&b[0], func(first *byte) {
		p.tracked.Add(-1)
		p.put(unsafe.Slice(first, n), gen)
	})
}
