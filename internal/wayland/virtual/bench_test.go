package virtual_test

import (
	"testing"

	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// BenchmarkClick is one click's round trip: move, press, release, and the
// compositor's answer to the sync that follows.
func BenchmarkClick(b *testing.B) {
	c := waylandtest.Start(b, 1280, 720)
	d := open(b, c)
	for b.Loop() {
		if err := d.Click(b.Context(), 640, 360, 1, 1); err != nil {
			b.Fatal(err)
		}
	}
}
