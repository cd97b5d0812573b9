package sense

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/leakcheck"
	"github.com/acu-dev/acu/internal/ocr"
)

// TestMain fails the package when goroutines of sense outlive the tests.
func TestMain(m *testing.M) { leakcheck.Main(m, "acu/internal/sense.") }

type nilScreen struct{}

func (nilScreen) Watch(context.Context, string, capture.Target) (<-chan struct{}, error) {
	return nil, errors.New("no screen")
}
func (nilScreen) Capture(context.Context, string, capture.Target) (*frame.Frame, error) {
	return nil, errors.New("no screen")
}

type nilReader struct{}

func (nilReader) RecognizeFrame(context.Context, *frame.Frame) (ocr.Result, error) {
	return ocr.Result{}, nil
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
