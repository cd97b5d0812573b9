package annotate

import _ "embed"

// font.bin is DejaVu Sans Mono Bold at 14 px rendered to 8-bit coverage:
// two bytes (cell width, cell height) then one cell per ASCII 32..126.
//
//go:embed font.bin
var fontData []byte

var glyphW, glyphH = int(fontData[0]), int(fontData[1])

func glyph(r rune) []byte {
	if r < 32 || r > 126 {
		r = '?'
	}
	n := glyphW * glyphH
	o := 2 + int(r-32)*n
	return fontData[o : o+n]
}

// TextSize returns the pixel size of s drawn by DrawText.
func TextSize(s string) (w, h int) {
	n := 0
	for range s {
		n++
	}
	return n*glyphW + 6, glyphH + 2
}

// DrawText draws s with its top-left corner at (x, y) in colour fg over a
// background box bg, clipped to the picture.
func DrawText(img Image, x, y int, s string, fg, bg Color) {
	w, h := TextSize(s)
	fill(img, x, y, x+w-1, y+h-1, bg)
	ri, bi := offsets(img.Format)
	lo, hi := img.rows()
	cx := x + 3
	for _, r := range s {
		g := glyph(r)
		for gy := range glyphH {
			yy := y + 1 + gy
			if yy < lo || yy >= hi {
				continue
			}
			row := img.Pix[yy*img.Stride:]
			for gx := range glyphW {
				cov := g[gy*glyphW+gx]
				xx := cx + gx
				if cov == 0 || xx < 0 || xx >= img.W {
					continue
				}
				e := premul(fg, uint8(uint32(cov)*uint32(fg.A)/255))
				blend(row[xx*4:xx*4+4], ri, bi, &e)
			}
		}
		cx += glyphW
	}
}

// drawLabels writes each mark's label next to it; marks without a place
// (type, key) are listed from the top-left corner.
func (a *Annotator) drawLabels(img Image, marks []Mark) {
	fg, bg := a.cfg.Labels.Color, a.cfg.Labels.Background
	listY := 4
	for _, m := range marks {
		if m.Label == "" {
			continue
		}
		w, h := TextSize(m.Label)
		if !m.Pos {
			DrawText(img, 4, listY, m.Label, fg, bg)
			listY += h + 2
			continue
		}
		x, y := px(m.X, img.W)+10, px(m.Y, img.H)+10
		if x+w > img.W {
			x = px(m.X, img.W) - 10 - w
		}
		if y+h > img.H {
			y = px(m.Y, img.H) - 10 - h
		}
		DrawText(img, max(x, 0), max(y, 0), m.Label, fg, bg)
	}
}
