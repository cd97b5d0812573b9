package input

import (
	"fmt"
	"testing"
)

func TestAreaFromCrop(t *testing.T) {
	tests := []struct {
		name string
		w, h int
		crop [4]int
		want Area
	}{
		{"zero is full screen", 1280, 720, [4]int{}, Area{0, 0, 1280, 720}},
		{"full", 1280, 720, [4]int{0, 0, 1000, 1000}, Area{0, 0, 1280, 720}},
		{"top-left quadrant", 1280, 720, [4]int{0, 0, 500, 500}, Area{0, 0, 640, 360}},
		{"bottom-right quadrant", 1280, 720, [4]int{500, 500, 1000, 1000}, Area{640, 360, 640, 360}},
		{"inverted is swapped", 1280, 720, [4]int{1000, 1000, 500, 500}, Area{640, 360, 640, 360}},
		{"out of range is clamped", 1920, 1080, [4]int{-50, -1, 2000, 1001}, Area{0, 0, 1920, 1080}},
		{"rounds to nearest pixel", 1920, 1080, [4]int{100, 100, 900, 900}, Area{192, 108, 1536, 864}},
		{"empty keeps one pixel", 1280, 720, [4]int{300, 300, 300, 300}, Area{384, 216, 1, 1}},
		{"empty at right edge", 1280, 720, [4]int{1000, 1000, 1000, 1000}, Area{1279, 719, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := AreaFromCrop(tt.w, tt.h, tt.crop); got != tt.want {
				t.Errorf("AreaFromCrop(%d, %d, %v) = %+v, want %+v", tt.w, tt.h, tt.crop, got, tt.want)
			}
		})
	}
}

func TestAreaToPixel(t *testing.T) {
	full := Area{0, 0, 1280, 720}
	quad := Area{640, 360, 640, 360} // bottom-right quadrant
	tests := []struct {
		area         Area
		nx, ny       int
		wantX, wantY int
	}{
		{full, 0, 0, 0, 0},
		{full, 1000, 1000, 1279, 719},
		{full, 500, 500, 640, 360},
		{full, 250, 750, 320, 539},
		{full, -10, 5000, 0, 719},
		{quad, 0, 0, 640, 360},
		{quad, 1000, 1000, 1279, 719},
		{quad, 500, 500, 960, 540},
		{quad, -1000, -1000, 640, 360},
		{quad, 99999, 99999, 1279, 719},
		{Area{10, 20, 1, 1}, 700, 300, 10, 20},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%v_%d_%d", tt.area, tt.nx, tt.ny), func(t *testing.T) {
			x, y := tt.area.ToPixel(tt.nx, tt.ny)
			if x != tt.wantX || y != tt.wantY {
				t.Errorf("%v.ToPixel(%d, %d) = %d, %d, want %d, %d", tt.area, tt.nx, tt.ny, x, y, tt.wantX, tt.wantY)
			}
		})
	}
}

// TestAreaSandbox checks that no normalized coordinate, however wild, maps
// outside a quadrant crop.
func TestAreaSandbox(t *testing.T) {
	for _, crop := range [][4]int{{0, 0, 500, 500}, {500, 0, 1000, 500}, {0, 500, 500, 1000}, {500, 500, 1000, 1000}, {123, 456, 789, 987}} {
		a := AreaFromCrop(1280, 720, crop)
		for _, n := range []int{-1 << 30, -1, 0, 1, 499, 500, 999, 1000, 1001, 1 << 30} {
			for _, m := range []int{-5, 0, 1000, 2000} {
				x, y := a.ToPixel(n, m)
				if x < a.X || x >= a.X+a.W || y < a.Y || y >= a.Y+a.H {
					t.Errorf("crop %v: %v.ToPixel(%d, %d) = %d, %d, outside the area", crop, a, n, m, x, y)
				}
			}
		}
	}
}

func TestAreaToNorm(t *testing.T) {
	a := Area{100, 50, 801, 401}
	tests := []struct{ x, y, wantX, wantY int }{
		{100, 50, 0, 0},
		{900, 450, 1000, 1000},
		{500, 250, 500, 500},
		{0, 0, 0, 0},             // left of / above the area: clamped onto its edge
		{5000, 5000, 1000, 1000}, // right of / below
	}
	for _, tt := range tests {
		if nx, ny := a.ToNorm(tt.x, tt.y); nx != tt.wantX || ny != tt.wantY {
			t.Errorf("%v.ToNorm(%d, %d) = %d, %d, want %d, %d", a, tt.x, tt.y, nx, ny, tt.wantX, tt.wantY)
		}
	}
}

// TestAreaRoundTrip checks that every pixel of an area up to 1001 pixels
// wide survives pixel -> normalized -> pixel.
func TestAreaRoundTrip(t *testing.T) {
	for _, size := range []int{1, 2, 3, 7, 360, 640, 720, 999, 1000, 1001} {
		a := Area{X: 13, Y: 17, W: size, H: size}
		for p := 0; p < size; p++ {
			nx, ny := a.ToNorm(a.X+p, a.Y+p)
			x, y := a.ToPixel(nx, ny)
			if x != a.X+p || y != a.Y+p {
				t.Fatalf("size %d: pixel %d -> norm %d -> pixel %d", size, p, nx, x-a.X)
			}
		}
	}
}

func BenchmarkAreaToPixel(b *testing.B) {
	b.ReportAllocs()
	a := AreaFromCrop(1920, 1080, [4]int{100, 100, 900, 900})
	s := 0
	for i := 0; b.Loop(); i++ {
		x, y := a.ToPixel(i%1001, (i*7)%1001)
		s += x + y
	}
	_ = s
}
