package screencopy_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// BenchmarkGrab1280x720 is one full capture of a 1280x720 output into a
// frame: screencopy into the kept shm buffer, converted to BGRX, hashed.
func BenchmarkGrab1280x720(b *testing.B) {
	c := waylandtest.Start(b, 1280, 720)
	cap := open(b, c)
	b.ReportAllocs()
	for b.Loop() {
		f, err := cap.Grab(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		f.Release()
	}
}

// BenchmarkGrim1280x720 runs grim on the same output, the reference: a
// process, a capture and a PNG.
func BenchmarkGrim1280x720(b *testing.B) {
	waylandtest.Need(b, "grim")
	c := waylandtest.Start(b, 1280, 720)
	out := filepath.Join(b.TempDir(), "grim.png")
	for b.Loop() {
		cmd := exec.Command("grim", out)
		cmd.Env = c.Env()
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}
