package dialect_test

import (
	"image"
	"testing"

	"github.com/acu-dev/acu/internal/actions"
	"github.com/acu-dev/acu/internal/dialect"
)

// TestFidelity: every pixel of the picture a model is offered (1280x800
// or less) maps, through the action service's image positions, to the
// screen pixel the model meant: exactly at 1x, and when scaled to a screen
// pixel inside the area the picture's pixel shows (so within one screen
// pixel of its centre) whose picture pixel is the one the model named.
func TestFidelity(t *testing.T) {
	limit := dialect.Size{W: 1280, H: 800}
	for _, screen := range []dialect.Size{{W: 1280, H: 800}, {W: 1920, H: 1200}, {W: 2560, H: 1600}, {W: 1920, H: 1080}, {W: 1366, H: 768}, {W: 3840, H: 2160}, {W: 1024, H: 768}} {
		img := dialect.Fit(screen, limit)
		if img.W > limit.W || img.H > limit.H {
			t.Errorf("Fit(%v) = %v, beyond %v", screen, img, limit)
		}
		g := actions.ShotGeometry{Region: image.Rect(0, 0, screen.W, screen.H), W: img.W, H: img.H}
		bad := 0
		for y := range img.H {
			for x := range img.W {
				p := g.ToScreen(x, y)
				if dx, dy := dialect.ToScreen(x, y, img, screen); dx != p.X || dy != p.Y {
					t.Fatalf("%v: dialect.ToScreen(%d,%d) = %d,%d, the action service says %v", screen, x, y, dx, dy, p)
				}
				bx, by := dialect.FromScreen(p.X, p.Y, img, screen)
				exact := img == screen && (p.X != x || p.Y != y)
				// picture pixel x covers [x*sw/iw, (x+1)*sw/iw) of the screen
				lo := func(v, s, i int) float64 { return float64(v) * float64(s) / float64(i) }
				cx, cy := float64(p.X)+0.5, float64(p.Y)+0.5 // the screen pixel's centre
				inside := cx >= lo(x, screen.W, img.W) && cx < lo(x+1, screen.W, img.W) &&
					cy >= lo(y, screen.H, img.H) && cy < lo(y+1, screen.H, img.H)
				if exact || bx != x || by != y || !inside {
					if bad++; bad < 5 {
						t.Errorf("%v at %v: picture pixel %d,%d -> screen %v -> picture %d,%d (inside %v)", screen, img, x, y, p, bx, by, inside)
					}
				}
			}
		}
		if bad > 0 {
			t.Errorf("%v at %v: %d of %d pixels do not round-trip", screen, img, bad, img.W*img.H)
		}
	}
}
