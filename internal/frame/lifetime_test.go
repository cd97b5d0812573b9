package frame

import (
	"image"
	"sync"
	"testing"
)

func TestLifetime(t *testing.T) {
	f := testFrame(40, 30, 8, 1)
	freed := 0
	f.Own(func() { freed++ })
	g := f.Retain() // a consumer
	if g != f {
		t.Fatal("Retain returned another frame")
	}
	v := f.Sub(image.Rect(1, 1, 5, 5), "crop:x") // a view, held on its own
	f.Release()                                  // the producer's hold
	g.Release()                                  // the consumer's
	if freed != 0 {
		t.Fatal("freed while a Sub view still held the buffer")
	}
	v.Release()
	if freed != 1 {
		t.Fatalf("free ran %d times after the last hold was dropped, want 1", freed)
	}
	mustPanic(t, "Release after the last", v.Release)
	mustPanic(t, "Retain after the last Release", func() { f.Retain() })
}

func TestLifetimeUnowned(t *testing.T) {
	f := testFrame(4, 4, 0, 1)
	f.Retain().Release()
	f.Release() // no owner: nothing to count
	f.Sub(image.Rect(0, 0, 2, 2), "crop:x").Release()
}

// TestLifetimeConcurrent: holders on many goroutines, free exactly once,
// and only after the last (go test -race checks the accesses).
func TestLifetimeConcurrent(t *testing.T) {
	for range 50 {
		f := testFrame(8, 8, 0, 1)
		var mu sync.Mutex
		freed := 0
		f.Own(func() { mu.Lock(); freed++; mu.Unlock() })
		var wg sync.WaitGroup
		for range 8 {
			g := f.Retain()
			wg.Go(func() {
				v := g.Sub(image.Rect(0, 0, 4, 4), "crop:x")
				_ = v.Pix[0]
				v.Release()
				g.Release()
			})
		}
		f.Release()
		wg.Wait()
		if freed != 1 {
			t.Fatalf("free ran %d times, want 1", freed)
		}
	}
}

func mustPanic(t *testing.T, what string, fn func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", what)
		}
	}()
	fn()
}
