// Package leakcheck fails a test binary whose tests leave goroutines of
// acu's own running: a hung handler, a retry loop, a subscriber nobody
// closed. Call Main from a package's TestMain.
package leakcheck

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Grace is how long goroutines get to finish after the tests: they exit
// asynchronously after their owners return.
const Grace = 5 * time.Second

// Main runs the tests, then exits non-zero when goroutines whose stacks
// mention one of match (import path fragments such as "acu/internal/llm")
// outlive Grace. With no match, any goroutine of acu's packages counts.
func Main(m *testing.M, match ...string) { MainThen(m, nil, match...) }

// MainThen is Main with after run once the tests have run (stopping a
// shared server they used) and before goroutines are checked.
func MainThen(m *testing.M, after func(), match ...string) {
	code := m.Run()
	if after != nil {
		after()
	}
	if code == 0 {
		if leaked := Leaked(Grace, match...); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines leaked by the tests:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

// Leaked returns the stacks of matching goroutines still running after
// waiting up to grace for them to end, or "" when there are none.
func Leaked(grace time.Duration, match ...string) string {
	if len(match) == 0 {
		match = []string{"acu-dev/acu/internal/", "acu-dev/acu/cmd/"}
	}
	deadline := time.Now().Add(grace)
	for {
		leaked := scan(match)
		if len(leaked) == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			return strings.Join(leaked, "\n\n")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func scan(match []string) []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var leaked []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "leakcheck.Leaked(") || strings.Contains(g, "leakcheck.Main(") || strings.Contains(g, "testing.(*M).") || strings.Contains(g, ".TestMain(") {
			continue
		}
		for _, m := range match {
			if strings.Contains(g, m) {
				leaked = append(leaked, g)
				break
			}
		}
	}
	return leaked
}
