package input

import (
	"fmt"

	"github.com/acu-dev/acu/internal/frame"
)

// NormMax is the top of the normalized coordinate range: (0,0) is the
// working area's top-left pixel, (NormMax,NormMax) its bottom-right pixel.
const NormMax = 1000

// Area is the working area in screen pixels: the rectangle the agent sees and
// the only place its pointer actions can land.
type Area struct{ X, Y, W, H int }

// String formats the area as WxH+X+Y, the X geometry notation.
func (a Area) String() string { return fmt.Sprintf("%dx%d+%d+%d", a.W, a.H, a.X, a.Y) }

// Empty reports whether the area has no pixels.
func (a Area) Empty() bool { return a.W <= 0 || a.H <= 0 }

// AreaFromCrop converts a CAPTURE_CROP rectangle (x1,y1,x2,y2 in 0..1000 of
// the full screen) to the working area in pixels. Values are clamped into
// 0..1000 and swapped when inverted; edges round to the nearest pixel; the
// result is at least one pixel on each side. The all-zero crop means the
// whole screen.
func AreaFromCrop(screenW, screenH int, crop [4]int) Area {
	r := frame.CropRect(crop, screenW, screenH)
	return Area{X: r.Min.X, Y: r.Min.Y, W: r.Dx(), H: r.Dy()}
}

// ToPixel maps normalized coordinates (0..1000 within the area) to screen
// pixels. Coordinates outside 0..1000 are clamped first, so the result always
// lies inside the area: a crop sandboxes every pointer action.
func (a Area) ToPixel(nx, ny int) (x, y int) {
	return a.X + normToPix(nx, a.W), a.Y + normToPix(ny, a.H)
}

// ToNorm maps screen pixels to normalized coordinates within the area,
// clamping pixels outside the area onto its edge. For areas up to 1001
// pixels wide, ToPixel(ToNorm(x, y)) returns (x, y) for every pixel inside.
func (a Area) ToNorm(x, y int) (nx, ny int) {
	return pixToNorm(x-a.X, a.W), pixToNorm(y-a.Y, a.H)
}

func normToPix(n, size int) int {
	if size <= 1 {
		return 0
	}
	n = clamp(n, 0, NormMax)
	return (n*(size-1) + NormMax/2) / NormMax
}

func pixToNorm(p, size int) int {
	if size <= 1 {
		return 0
	}
	p = clamp(p, 0, size-1)
	return (p*NormMax + (size-1)/2) / (size - 1)
}

func clamp(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}
