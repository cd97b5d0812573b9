package orchestrator_test

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain fails the package when goroutines outlive its tests (not when
// fuzzing).
func TestMain(m *testing.M) {
	before := runtime.NumGoroutine()
	code := m.Run()
	// The fuzzing engine leaves its signal handler running.
	if f := flag.Lookup("test.fuzz"); code == 0 && (f == nil || f.Value.String() == "") {
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			fmt.Fprintf(os.Stderr, "%d goroutines leaked (%d before the tests):\n%s\n", n-before, before, strings.TrimSpace(string(buf)))
			code = 1
		}
	}
	os.Exit(code)
}
