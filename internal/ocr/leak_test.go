package ocr_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/ocr"
)

// TestCancelNoLeak: callers that give up do not leave goroutines or
// processes behind, and callers sharing a run get its result.
func TestCancelNoLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	e := newEngine(t, ocr.Options{})
	w, h := 400, 100
	pix := make([]byte, w*h*4)
	for i := range pix {
		pix[i] = 0xff
	}
	for y := 40; y < 52; y++ { // short strokes: ink for Tesseract to look at
		for x := 50; x < 350; x += 5 {
			copy(pix[(y*w+x)*4:], []byte{0, 0, 0, 0, 0, 0, 0, 0})
		}
	}
	f := frame.New(pix, w, h, w*4, ":0", "screen", time.Now())

	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := t.Context()
			if i%2 == 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				cancel()
			}
			e.RecognizeFrame(ctx, f)
		}()
	}
	wg.Wait()
	// The shared run finishes on its own (bounded by Options.Timeout); wait
	// for it, then every goroutine it used is gone.
	if _, err := e.RecognizeFrame(t.Context(), f); err != nil {
		t.Fatal(err)
	}
	if e.Runs() != 1 {
		t.Errorf("tesseract ran %d times for one frame, want 1", e.Runs())
	}
	deadline := time.Now().Add(30 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("goroutines: %d before, %d after:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
