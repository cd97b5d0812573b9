package mutterframes_test

import (
	"testing"

	"github.com/acu-dev/acu/internal/leakcheck"
)

// TestMain fails the tests when a goroutine they started (a screen cast's
// pipeline reader, the reaper that closes an unused one) is still running
// after them.
func TestMain(m *testing.M) { leakcheck.Main(m, "acu-dev/acu/") }
