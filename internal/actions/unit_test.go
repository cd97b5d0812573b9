package actions

import (
	"image"
	"slices"
	"testing"

	"github.com/acu-dev/acu/internal/elements"
)

// A pixel read off a downscaled screenshot maps to the screen pixel at the
// centre of what it shows, inside the region, and every image pixel of a
// 1:1 screenshot maps to itself.
func TestShotGeometryToScreen(t *testing.T) {
	g := ShotGeometry{Region: image.Rect(0, 0, 1920, 1080), W: 960, H: 540}
	for _, c := range []struct{ x, y, wx, wy int }{{0, 0, 1, 1}, {959, 539, 1919, 1079}, {480, 270, 961, 541}} {
		if p := g.ToScreen(c.x, c.y); p != image.Pt(c.wx, c.wy) {
			t.Errorf("ToScreen(%d,%d) = %v, want %d,%d", c.x, c.y, p, c.wx, c.wy)
		}
	}
	id := ShotGeometry{Region: image.Rect(100, 50, 740, 530), W: 640, H: 480}
	for x := 0; x < 640; x += 7 {
		for y := 0; y < 480; y += 5 {
			if p := id.ToScreen(x, y); p != image.Pt(100+x, 50+y) {
				t.Fatalf("1:1 ToScreen(%d,%d) = %v", x, y, p)
			}
		}
	}
	// Each image pixel of a 960-wide shot of 1280 covers 4/3 screen pixels;
	// the mapped pixel lies within that span.
	s := ShotGeometry{Region: image.Rect(0, 0, 1280, 720), W: 960, H: 540}
	for x := range 960 {
		p := s.ToScreen(x, 0)
		if lo, hi := x*1280/960, (x+1)*1280/960; p.X < lo || p.X > hi {
			t.Fatalf("ToScreen(%d) = %d, outside %d..%d", x, p.X, lo, hi)
		}
	}
}

func TestShotsForget(t *testing.T) {
	s := NewShots()
	first := s.Remember(ShotGeometry{W: 1, H: 1})
	for range maxShots {
		s.Remember(ShotGeometry{W: 1, H: 1})
	}
	if _, ok := s.Lookup(first); ok {
		t.Errorf("shot %s still known after %d newer ones", first, maxShots)
	}
}

func TestNearIDs(t *testing.T) {
	m := &elements.Map{Elements: []elements.Element{{ID: "btn_ok"}, {ID: "btn_cancel"}, {ID: "txt_name"}, {ID: "lbl_your_name"}}}
	if got := nearIDs(m, "btn_okk"); len(got) == 0 || got[0] != "btn_ok" {
		t.Errorf("nearIDs(btn_okk) = %q, want btn_ok first", got)
	}
	if got := nearIDs(m, "name"); !slices.Contains(got, "txt_name") {
		t.Errorf("nearIDs(name) = %q, want txt_name", got)
	}
}
