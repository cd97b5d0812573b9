package frame

import "sync"

// encodings memoizes encoded forms of a frame.
type encodings struct {
	mu    sync.Mutex
	jpegs []*encoded
	png   *encoded
}

// encoded is one memoized encoding; once makes concurrent callers encode once.
type encoded struct {
	maxDim, quality int
	once            sync.Once
	b               []byte
	err             error
}

func (e *encodings) reset() {
	e.mu.Lock()
	e.jpegs, e.png = nil, nil
	e.mu.Unlock()
}

// JPEG returns the frame downsized so its long side is at most maxDim
// (no upscaling; maxDim < 1 means full size) and encoded as JPEG at quality.
func (f *Frame) JPEG(maxDim, quality int) ([]byte, error) { panic("todo") }

// PNG returns the full-resolution frame as PNG (for saved screenshots).
func (f *Frame) PNG() ([]byte, error) { panic("todo") }
