package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/acu-dev/acu/internal/api"
)

// TestPrintWindowsWithoutGeometry: `acu windows` on a compositor that
// gives no window geometry prints the list's note and "-" for geometry,
// not a 0x0 rectangle.
func TestPrintWindowsWithoutGeometry(t *testing.T) {
	var b bytes.Buffer
	l := api.WindowList{Display: "/run/wayland-0", WM: "wlr-foreign-toplevel", Note: "this compositor gives no window geometry",
		Windows: []api.Window{{ID: "0xff000001", Title: "RED", Class: "foot", Focused: true, Maximized: true}}}
	if err := printWindows(&b, l); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "note: this compositor gives no window geometry") || strings.Contains(out, "0x0+0+0") ||
		!strings.Contains(out, "focused,maximized") {
		t.Errorf("printWindows:\n%s", out)
	}
}
