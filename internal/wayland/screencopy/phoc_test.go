package screencopy_test

import (
	"testing"

	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// phoc centres a new window; foot's default size would overhang a small
// output and put its top-left (the red marker) off screen, so the output
// here is 1024x768.

// TestGrabMatchesGrimOnPhoc: a screencopy frame on phoc, a second
// wlroots compositor, equals grim's capture of the same static screen.
func TestGrabMatchesGrimOnPhoc(t *testing.T) {
	waylandtest.Need(t, "grim")
	grabMatchesGrim(t, waylandtest.StartPhoc(t, 1024, 768), 1024, 768)
}

// TestNextWaitsForDamageOnPhoc: copy_with_damage on phoc waits on a
// static screen and returns the changed rectangles when foot draws.
func TestNextWaitsForDamageOnPhoc(t *testing.T) {
	nextWaitsForDamage(t, waylandtest.StartPhoc(t, 1024, 768))
}
