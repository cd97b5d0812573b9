package sense

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/ocr"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leak := waitForLeaks(5 * time.Second); leak != "" {
			fmt.Fprintf(os.Stderr, "leaked goroutines:\n%s\n", leak)
			code = 1
		}
	}
	os.Exit(code)
}

func waitForLeaks(d time.Duration) string {
	deadline := time.Now().Add(d)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var leaks []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "internal/sense.") && !strings.Contains(g, "TestMain") && !strings.Contains(g, "waitForLeaks") {
				leaks = append(leaks, g)
			}
		}
		if len(leaks) == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			return strings.Join(leaks, "\n\n")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

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
