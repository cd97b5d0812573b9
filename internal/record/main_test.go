package record

import (
	"testing"

	"github.com/acu-dev/acu/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.Main(m, "acu/internal/record.") }
