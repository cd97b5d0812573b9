package notify

import (
	"context"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/pgtest"

	"github.com/acu-dev/acu/internal/leakcheck"
)

// TestMain fails the package when goroutines started by notify outlive the
// tests (a dispatcher or delivery that did not stop).
func TestMain(m *testing.M) { leakcheck.MainThen(m, pgtest.Stop, "acu/internal/notify.") }

// waitFor polls cond until it holds, failing the test after a generous
// bound (a liveness check, not a timing assertion).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("gave up waiting for %s", what)
}

func contextWithCancel(t *testing.T) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	return ctx, cancel
}
