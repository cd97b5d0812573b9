package sense

import (
	"image"

	"github.com/acu-dev/acu/internal/frame"
)

// cell is the side of the square pixel blocks a thumbnail averages.
const cell = 8

// thumb is a frame reduced to the mean luma of each cell×cell block: cheap
// to keep per sent event and to compare (a 1920x1080 screen is 240x135).
type thumb struct {
	w, h         int
	v            []uint8
	sums, counts []uint32 // scratch rows
}

// makeThumb reduces f (BGRX) into t, reusing t's buffer.
func makeThumb(t *thumb, f *frame.Frame) {
	t.w, t.h = (f.W+cell-1)/cell, (f.H+cell-1)/cell
	n := t.w * t.h
	if cap(t.v) < n {
		t.v = make([]uint8, n)
	}
	t.v = t.v[:n]
	if cap(t.sums) < t.w {
		t.sums, t.counts = make([]uint32, t.w), make([]uint32, t.w)
	}
	sums, counts := t.sums[:t.w], t.counts[:t.w]
	for by := 0; by < t.h; by++ {
		clear(sums)
		clear(counts)
		y1 := min((by+1)*cell, f.H)
		for y := by * cell; y < y1; y++ {
			row := f.Pix[y*f.Stride : y*f.Stride+f.W*4]
			for x := 0; x < f.W; x++ {
				p := row[x*4 : x*4+3 : x*4+3]
				// BT.601 luma from B, G, R.
				sums[x/cell] += (uint32(p[2])*77 + uint32(p[1])*150 + uint32(p[0])*29) >> 8
				counts[x/cell]++
			}
		}
		for bx := 0; bx < t.w; bx++ {
			t.v[by*t.w+bx] = uint8(sums[bx] / counts[bx])
		}
	}
}

// change is how two thumbnails differ.
type change struct {
	SSIM  float64         // structural similarity over 4x4-cell windows, 1 = same
	Cells int             // cells whose mean luma moved by more than cellDelta
	Box   image.Rectangle // bounding box of those cells, in screen pixels
}

// cellDelta is the luma difference below which a cell counts as unchanged
// (noise, anti-aliasing shifts).
const cellDelta = 6

// compare measures a against b (same size; otherwise everything changed).
func compare(a, b *thumb, screen image.Rectangle) change {
	if a == nil || a.w != b.w || a.h != b.h || len(a.v) == 0 {
		return change{SSIM: 0, Cells: len(b.v), Box: screen}
	}
	c := change{}
	minX, minY, maxX, maxY := b.w, b.h, -1, -1
	for y := 0; y < b.h; y++ {
		for x := 0; x < b.w; x++ {
			d := int(a.v[y*b.w+x]) - int(b.v[y*b.w+x])
			if d > cellDelta || d < -cellDelta {
				c.Cells++
				minX, minY, maxX, maxY = min(minX, x), min(minY, y), max(maxX, x), max(maxY, y)
			}
		}
	}
	if c.Cells > 0 {
		c.Box = image.Rect(minX*cell, minY*cell, (maxX+1)*cell, (maxY+1)*cell).Intersect(screen)
	}
	c.SSIM = ssim(a, b)
	return c
}

// ssim is the mean SSIM of 4x4-cell windows of two thumbnails.
func ssim(a, b *thumb) float64 {
	const win = 4
	const c1, c2 = (0.01 * 255) * (0.01 * 255), (0.03 * 255) * (0.03 * 255)
	var total float64
	n := 0
	for wy := 0; wy+win <= b.h; wy += win {
		for wx := 0; wx+win <= b.w; wx += win {
			var sa, sb, saa, sbb, sab float64
			for y := wy; y < wy+win; y++ {
				for x := wx; x < wx+win; x++ {
					va, vb := float64(a.v[y*b.w+x]), float64(b.v[y*b.w+x])
					sa += va
					sb += vb
					saa += va * va
					sbb += vb * vb
					sab += va * vb
				}
			}
			const k = win * win
			ma, mb := sa/k, sb/k
			va, vb, cov := saa/k-ma*ma, sbb/k-mb*mb, sab/k-ma*mb
			total += ((2*ma*mb + c1) * (2*cov + c2)) / ((ma*ma + mb*mb + c1) * (va + vb + c2))
			n++
		}
	}
	if n == 0 {
		return 1
	}
	return total / float64(n)
}
