package elements_test

import (
	"testing"

	"github.com/acu-dev/acu/internal/leakcheck"
)

// TestMain fails the package when goroutines of elements, of the packages it
// drives (atspi, capture, input, ocr), of the test helpers or of the D-Bus and
// X clients and child processes they run outlive its tests.
func TestMain(m *testing.M) {
	leakcheck.Main(m,
		"acu/internal/elements",
		"acu/internal/atspi", // and atspitest
		"acu/internal/capture",
		"acu/internal/display",
		"acu/internal/input",
		"acu/internal/ocr",
		"acu/internal/testx",
		"acu/internal/wayland", // the Wayland hub, sway and the virtual pointer of wayland_test.go
		"acu/internal/xvfb",
		"github.com/godbus/dbus",
		"github.com/jezek/xgb",
		"os/exec.",
	)
}
