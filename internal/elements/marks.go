package elements

import (
	"image"
	"strings"

	"github.com/acu-dev/acu/internal/annotate"
)

// Mark colours: a bright box and its id on a dark tag.
var (
	markBox = annotate.Color{R: 255, G: 40, B: 120, A: 255}
	markFG  = annotate.Color{R: 255, G: 255, B: 255, A: 255}
	markBG  = annotate.Color{R: 200, G: 20, B: 90, A: 230}
)

// DrawMarks outlines each showing element of m on img and writes its id at
// its top-left corner (set-of-marks). img shows the screen rectangle
// region, scaled to img's size; elements outside it are left out.
func (m *Map) DrawMarks(img annotate.Image, region image.Rectangle) {
	if region.Empty() {
		return
	}
	sx := float64(img.W) / float64(region.Dx())
	sy := float64(img.H) / float64(region.Dy())
	for i := range m.Elements {
		e := &m.Elements[i]
		if e.Box.Empty() || e.Type == TypeWindow || (e.Source&FromTree != 0 && !e.Showing) {
			continue
		}
		b := e.Box.Sub(region.Min)
		x1, y1 := int(float64(b.Min.X)*sx), int(float64(b.Min.Y)*sy)
		x2, y2 := int(float64(b.Max.X)*sx)-1, int(float64(b.Max.Y)*sy)-1
		if x2 < 0 || y2 < 0 || x1 >= img.W || y1 >= img.H {
			continue
		}
		outline(img, x1, y1, x2, y2, markBox)
		label := strings.ToValidUTF8(e.ID, "?")
		_, th := annotate.TextSize(label)
		ty := y1 - th
		if ty < 0 {
			ty = y1
		}
		annotate.DrawText(img, x1, ty, label, markFG, markBG)
	}
}

// outline draws a 2-pixel rectangle, clipped to the picture.
func outline(img annotate.Image, x1, y1, x2, y2 int, c annotate.Color) {
	set := func(x, y int) {
		if x < 0 || y < 0 || x >= img.W || y >= img.H {
			return
		}
		p := img.Pix[y*img.Stride+x*4:]
		p[0], p[1], p[2] = c.B, c.G, c.R // BGRX
	}
	for t := range 2 {
		for x := x1; x <= x2; x++ {
			set(x, y1+t)
			set(x, y2-t)
		}
		for y := y1; y <= y2; y++ {
			set(x1+t, y)
			set(x2-t, y)
		}
	}
}
