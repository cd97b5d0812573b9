package capture

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// pixPool recycles the pixel buffers of one display's frames. A changed
// frame needs a buffer of its own (frames are shared and immutable); one
// that held an earlier frame needs only the rows that changed since copied
// into it (source.catchUp), where a new one needs them all.
//
// A buffer comes back only when nothing can read it any more: when every
// holder of its frame has released it (frame.Frame.Release: a live view
// does once it has sent the frame), or else when the collector finds no
// reference to any of its bytes: a finalizer on the buffer itself (not on
// the Frame: Sub views, and any slice a consumer took of Pix, share the
// buffer). So the pool never hands out pixels still in use, whoever holds
// them and for however long.
//
// Buffers that come back wait in a short list (ready), newest last, for the
// next captures; what stays there unused for readyIdle moves to a
// sync.Pool, which drops what stays unused for two collections, so idle
// buffers do not outlive the activity that made them. (A sync.Pool alone
// does not hand a buffer put on one processor to a capture running on
// another until a collection: with the pool alone, 37 of 40 captures in
// TestReleasedBuffersComeBack found a released buffer, now 38, all but the
// first two.)
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
	mu    sync.Mutex
	ready []pixBuf    // at most readyMax of them
	drain *time.Timer // moves ready to idle after readyIdle without a put
	shut  bool        // close was called: nothing is kept ready

	idle    sync.Pool    // *pixBuf
	tracked atomic.Int64 // published buffers whose finalizer has not run
}

// readyMax bounds the buffers ready for the next captures: a live view
// holds one or two frames at a time.
const readyMax = 4

// readyIdle is how long buffers stay ready after the last one came back;
// then the collector may free them.
const readyIdle = 2 * time.Second

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
// nil when there is none: a ready one, or on a busy display (a read 10
// times a second or more) one the sync.Pool still has. A display read now
// and then takes only what a released frame gave back in the last
// readIdle (a screenshot after a screenshot, a recording at a few frames
// a second), so no buffer waits in memory for it beyond that.
func (p *pixPool) get(n int, busy bool) ([]byte, uint64) {
	p.mu.Lock()
	if k := len(p.ready); k > 0 {
		pb := p.ready[k-1]
		p.ready[k-1] = pixBuf{}
		p.ready = p.ready[:k-1]
		p.mu.Unlock()
		if len(pb.b) != n {
			return nil, 0 // one of another size (the screen was resized) is dropped
		}
		return pb.b, pb.gen
	}
	p.mu.Unlock()
	if !busy {
		return nil, 0
	}
	pb, _ := p.idle.Get().(*pixBuf)
	if pb == nil || len(pb.b) != n {
		return nil, 0
	}
	return pb.b, pb.gen
}

// put returns a buffer no frame references, holding generation gen.
func (p *pixPool) put(b []byte, gen uint64) {
	if len(b) == 0 {
		return
	}
	p.mu.Lock()
	if !p.shut && len(p.ready) < readyMax && (len(p.ready)+1)*len(b) <= trackedBudget {
		p.ready = append(p.ready, pixBuf{b, gen})
		if p.drain == nil {
			p.drain = time.AfterFunc(readyIdle, p.drainReady)
		} else {
			p.drain.Reset(readyIdle)
		}
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	p.idle.Put(&pixBuf{b, gen})
}

// drainReady leaves the buffers still ready to the sync.Pool.
func (p *pixPool) drainReady() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, pb := range p.ready {
		p.idle.Put(&pb)
		p.ready[i] = pixBuf{}
	}
	p.ready = p.ready[:0]
}

// close stops the drain timer and leaves the ready buffers to the
// collector (the display's source is gone).
func (p *pixPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.shut = true
	if p.drain != nil {
		p.drain.Stop()
	}
	clear(p.ready)
	p.ready = p.ready[:0]
}

// publish marks b, holding generation gen, as a frame's pixels: it
// returns to the pool once nothing references any of its bytes, unless
// trackedBudget is spent already (then the collector frees it). It reports
// whether b is tracked so, for release.
func (p *pixPool) publish(b []byte, gen uint64) bool {
	if len(b) == 0 {
		return false
	}
	if p.tracked.Add(1) > max(2, trackedBudget/int64(len(b))) {
		p.tracked.Add(-1)
		return false
	}
	n := len(b)
	// The finalizer must not reference b, or b would stay reachable. &b[0]
	// is the start of b's allocation: b is always a whole buffer of its
	// own (made here, by append, or handed back by this finalizer).
	runtime.SetFinalizer(&b[0], func(first *byte) {
		p.tracked.Add(-1)
		p.put(unsafe.Slice(first, n), gen)
	})
	return true
}

// release returns b, holding generation gen, when every holder of its
// frame has released it (frame.Frame.Release), without waiting for the
// collector; tracked is what publish reported. Any buffer may come back
// this way, within the budget or not.
func (p *pixPool) release(b []byte, gen uint64, tracked bool) {
	if tracked {
		runtime.SetFinalizer(&b[0], nil)
		p.tracked.Add(-1)
	}
	p.put(b, gen)
}
