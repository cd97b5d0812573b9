// Package testx is a test helper for packages that need a real X server:
// it starts a fresh Xvfb per test (cleaned up with the test), opens windows
// with known pixel content through its own in-process X client that records
// the pointer and key input it receives, and starts xterm with a command.
//
// It is imported only from *_test.go files. Helpers fail the test (t.Fatal)
// instead of returning errors; a missing Xvfb fails, it never skips.
package testx

import (
	"io"

	"github.com/jezek/xgb"
)

func init() {
	// xgb logs every connection without an .Xauthority file; tests do not
	// need that noise.
	xgb.Logger.SetOutput(io.Discard)
}
