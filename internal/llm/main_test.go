package llm_test

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain fails the package when goroutines from llm or llmtest outlive the
// tests (a hung handler, a retry loop, a slow writer).
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := waitForLeaks(5 * time.Second); leaked != "" {
			fmt.Fprintf(os.Stderr, "leaked goroutines:\n%s\n", leaked)
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
		var leaked []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "acu/internal/llm") && !strings.Contains(g, "TestMain") && !strings.Contains(g, "waitForLeaks") {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			return strings.Join(leaked, "\n\n")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
