package portal

import (
	"testing"

	"github.com/acu-dev/acu/internal/leakcheck"
)

// TestMain fails the tests when a goroutine they started (the waiter
// of a headless mutter or portal process) is still running after them.
func TestMain(m *testing.M) { leakcheck.Main(m, "acu-dev/acu/") }
