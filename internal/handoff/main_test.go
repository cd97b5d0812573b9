package handoff

import (
	"testing"

	"github.com/acu-dev/acu/internal/leakcheck"
)

// TestMain fails the tests when a goroutine they started is still running
// after them (leakcheck.Grace).
func TestMain(m *testing.M) { leakcheck.Main(m, "acu-dev/acu/") }
