package input

import "fmt"

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
	if crop == [4]int{} {
		crop = [4]int{0, 0, NormMax, NormMax}
	}
	x1, x2 := cropEdges(screenW, crop[0], crop[2])
	y1, y2 := cropEdges(screenH, crop[1], crop[3])
	return Area{X: x1, Y: y1, W: x2 - x1, H: y2 - y1}
}

// cropEdges maps two normalized edges to pixel edges [lo, hi) within size.
func cropEdges(size, a, b int) (lo, hi int) {
	if size <= 0 {
		return 0, 0
	}
	a, b = clamp(a, 0, NormMax), clamp(b, 0, NormMax)
	if a > b {
		a, b = b, a
	}
	lo = (a*size + NormMax/2) / NormMax
	hi = (b*size + NormMax/2) / NormMax
	if hi <= lo {
		hi = lo + 1
		if hi > size {
			lo, hi = size-1, size
		}
	}
	return lo, hi
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
