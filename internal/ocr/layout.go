package ocr

import (
	"image"
)

// Text regions and their scale.
//
// After flatten the page is dark ink on white. It is cut into blocks
// (recursive cuts along empty rows and wide empty columns, then along the
// faint rows between touching text lines), each block's text height is
// measured, and every block is resampled so its lines are about targetLine
// pixels tall: 8 pt terminal text is enlarged 3x, a 96 pt heading shrunk.
// The blocks are stacked on one page for a single Tesseract run (a process
// per block would cost its start-up each time), and the words read are
// mapped back to the frame through their block.

const (
	inkLevel   = 200 // flattened value below which a pixel is ink
	targetLine = 40  // block line height Tesseract reads best, in pixels
	maxScale   = 3
	blockGap   = 20 // white rows between stacked blocks: half a line (at 12 Tesseract read xterm's 16 px "CHARLIE" as "CHARLTE")
	// minConfRead is the word confidence above which a block counts as read.
	minConfRead = 50
)

// prepare turns the grayscale page g (overwritten) into the page given to
// Tesseract: flattened, cut into blocks, large text redrawn solid, GTK's
// mnemonic underlines taken off (underline.go), every block resampled to
// its scale (fixed when not 0) and stacked. It returns nil blocks when
// there is no ink at all.
func prepare(g gray, sz sizing, sc *scratch) (gray, []block) {
	orig := gray{pix: grow(&sc.orig2, len(g.pix)), w: g.w, h: g.h}
	copy(orig.pix, g.pix)
	flatten(g, sc)
	rects := segment(g)
	if len(rects) == 0 {
		return g, nil
	}
	// The same page flattened for large text, in the buffers flatten is
	// done with.
	area := gray{pix: grow(&sc.area, len(orig.pix)), w: orig.w, h: orig.h, up: g.up, down: g.down, left: g.left, right: g.right}
	copy(area.pix, orig.pix)
	flattenArea(area, sc)
	rects, large := largeBlocks(rects, area)
	kinds := make([]int, len(rects))
	for i, r := range rects {
		switch {
		case edgesDiffer(orig, r):
			kinds[i] = renderPanel
		case inBox(orig, r):
			kinds[i] = renderBand
		case large[i] != renderNone:
			kinds[i] = large[i]
		}
	}
	render(g, orig, rects, kinds)
	eraseUnderlines(g, orig, rects)
	st, blocks := stack(g, rects, sz, sc.crop)
	sc.crop = st.pix
	return st, blocks
}

// block is one text region: src in the page, dst in the stacked image.
type block struct {
	src   image.Rectangle
	dst   image.Rectangle
	scale float64
}
