package datacontrol_test

import (
	"testing"

	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// TestRoundTripWithWlClipboardOnPhoc: the same round trip with wl-copy
// and wl-paste on phoc, a second wlroots compositor.
func TestRoundTripWithWlClipboardOnPhoc(t *testing.T) {
	waylandtest.Need(t, "wl-paste")
	roundTrip(t, waylandtest.StartPhoc(t, 320, 200))
}
