package capture

import (
	"runtime"
	"sync"
	"unsafe"
)

// pixPool recycles the pixel buffers of one display's frames. A changed
// frame needs a buffer of its own (frames are shared and immutable); one
// that held an earlier frame spares the runtime a new 3.7 MB allocation
// (1280x720) and the collections they bring every few frames.
//
// A buffer comes back only when nothing can read it any more: a finalizer
// on the buffer itself (not on the Frame: Sub views, and any slice a
// consumer took of Pix, share the buffer) runs once the collector finds no
// reference to any of its bytes, and puts it in a sync.Pool. So the pool
// never hands out pixels still in use, whoever holds them and for however
// long. The sync.Pool drops what stays unused for two collections, so idle
// buffers do not outlive the activity that made them.
//
// Each buffer carries the generation of the segment it is a copy of
// (source.gen), so that bringing it up to date can copy only the bands
// read since (source.frameBuf).
type pixPool struct {
	idle sync.Pool // *pixBuf
}

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
// returns to the pool once nothing references any of its bytes.
func (p *pixPool) publish(b []byte, gen uint64) {
	if len(b) == 0 {
		return
	}
	n := len(b)
	// The finalizer must not reference b, or b would stay reachable. &b[0]
	// is the start of b's allocation: b is always a whole buffer of its
	// own (made here, by append, or handed back by this finalizer).
	runtime.SetFinalizer(&b[0], func(first *byte) { p.put(unsafe.Slice(first, n), gen) })
}
