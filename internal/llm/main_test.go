package llm_test

import (
	"testing"

	"github.com/acu-dev/acu/internal/leakcheck"
)

// TestMain fails the package when goroutines from llm or llmtest outlive the
// tests (a hung handler, a retry loop, a slow writer).
func TestMain(m *testing.M) { leakcheck.Main(m, "acu/internal/llm") }
