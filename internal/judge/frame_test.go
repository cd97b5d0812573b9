package judge_test

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"testing"

	"github.com/acu-dev/acu/internal/judge"
)

// TestFrameFromPaletted: the paletted fast path gives the same BGRX frame
// as drawing the image into RGBA first.
func TestFrameFromPaletted(t *testing.T) {
	pal := color.Palette{color.RGBA{10, 20, 30, 255}, color.RGBA{250, 128, 1, 255}, color.RGBA{0, 0, 255, 255}}
	p := image.NewPaletted(image.Rect(0, 0, 7, 5), pal)
	for i := range p.Pix {
		p.Pix[i] = uint8(i % len(pal))
	}
	rgba := image.NewRGBA(p.Rect)
	draw.Draw(rgba, rgba.Rect, p, image.Point{}, draw.Src)
	a, b := judge.FrameFromImage(p, "p"), judge.FrameFromImage(rgba, "r")
	if !bytes.Equal(a.Pix, b.Pix) || a.Hash != b.Hash {
		t.Errorf("FrameFromImage(paletted) = %v, want %v", a.Pix[:12], b.Pix[:12])
	}
}
