package frame

import "image"

// CropRect converts a working area given as x1,y1,x2,y2 in 0..1000 of a
// w*h screen (CAPTURE_CROP, crop: targets) to pixels. It is the one mapping
// both capture and input use, so what a crop shows and where clicks in it
// land agree to the pixel. Values are clamped into 0..1000 and swapped when
// inverted; edges round to the nearest pixel; the result is at least one
// pixel on each side; the all-zero crop means the whole screen.
func CropRect(crop [4]int, w, h int) image.Rectangle {
	if crop == [4]int{} {
		crop = [4]int{0, 0, 1000, 1000}
	}
	x1, x2 := cropEdges(w, crop[0], crop[2])
	y1, y2 := cropEdges(h, crop[1], crop[3])
	return image.Rect(x1, y1, x2, y2)
}

// cropEdges maps two normalized edges to pixel edges [lo, hi) within size.
func cropEdges(size, a, b int) (lo, hi int) {
	if size <= 0 {
		return 0, 0
	}
	a, b = min(max(a, 0), 1000), min(max(b, 0), 1000)
	if a > b {
		a, b = b, a
	}
	lo = (a*size + 500) / 1000
	hi = (b*size + 500) / 1000
	if hi <= lo {
		hi = lo + 1
		if hi > size {
			lo, hi = size-1, size
		}
	}
	return lo, hi
}
