package testx

import (
	"image/color"

	"github.com/jezek/xgb/xproto"
)

// Paint repaints the whole window with the color f gives each pixel
// (window coordinates) and returns once drawn: textured content, which
// video encoders code differently from flat fills.
func (w *Window) Paint(f func(x, y int) color.RGBA) {
	w.t.Helper()
	w.mu.Lock()
	for y := 0; y < w.h; y++ {
		for x := 0; x < w.w; x++ {
			c := f(x, y)
			c.A = 0xff
			w.content.SetRGBA(x, y, c)
		}
	}
	w.mu.Unlock()
	if err := w.put(0, 0, w.w, w.h); err != nil {
		w.t.Fatalf("testx: paint: %v", err)
	}
	xproto.ClearArea(w.conn, false, w.id, 0, 0, 0, 0)
	if err := w.sync(); err != nil {
		w.t.Fatalf("testx: paint: %v", err)
	}
}
