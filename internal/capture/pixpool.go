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
type pixPool struct {
	idle sync.Pool // *[]byte
}

// get returns an idle buffer of n bytes, or nil when there is none.
func (p *pixPool) get(n int) []byte {
	bp, _ := p.idle.Get().(*[]byte)
	if bp == nil || len(*bp) != n {
		return nil // one of another size (the screen was resized) is dropped
	}
	return *bp
}

// put returns a buffer no frame has used.
func (p *pixPool) put(b []byte) {
	if len(b) > 0 {
		p.idle.Put(&b)
	}
}

// publish marks b as a frame's pixels: it returns to the pool once nothing
// references any of its bytes.
func (p *pixPool) publish(b []byte) {
	if len(b) == 0 {
		return
	}
	n := len(b)
	// The finalizer must not reference b, or b would stay reachable. &b[0]
	// is the start of b's allocation: b is always a whole buffer of its
	// own (made here, by append, or handed back by this finalizer).
	runtime.SetFinalizer(&b[0], func(first *byte) { p.put(unsafe.Slice(first, n)) })
}
