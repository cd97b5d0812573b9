package atspi_test

import (
	"testing"

	"github.com/acu-dev/acu/internal/leakcheck"
)

// TestMain fails the package when goroutines of atspi, of the helpers its
// tests use (buses, display, test apps) or of the D-Bus and X clients and
// child processes they run outlive its tests.
func TestMain(m *testing.M) {
	leakcheck.Main(m,
		"acu/internal/atspi", // and atspitest
		"acu/internal/display",
		"acu/internal/testx",
		"acu/internal/xvfb",
		"github.com/godbus/dbus",
		"github.com/jezek/xgb",
		"os/exec.",
	)
}
