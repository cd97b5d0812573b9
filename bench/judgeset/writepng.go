package main

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"sort"
)

// writePNG stores img as an 8-bit paletted PNG when it has at most 256
// colours, else with its 256 most common colours (each pixel mapped to the
// nearest), which keeps anti-aliased text within a few levels of its grey.
func writePNG(path string, img *image.RGBA) error {
	counts := map[uint32]int{}
	for i := 0; i < len(img.Pix); i += 4 {
		counts[uint32(img.Pix[i])<<16|uint32(img.Pix[i+1])<<8|uint32(img.Pix[i+2])]++
	}
	keys := make([]uint32, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if counts[keys[i]] != counts[keys[j]] {
			return counts[keys[i]] > counts[keys[j]]
		}
		return keys[i] < keys[j]
	})
	var enc image.Image = img
	{
		n := min(256, len(keys))
		pal := make(color.Palette, n)
		index := map[uint32]uint8{}
		for i, k := range keys[:n] {
			pal[i] = color.RGBA{uint8(k >> 16), uint8(k >> 8), uint8(k), 255}
			index[k] = uint8(i)
		}
		p := image.NewPaletted(img.Rect, pal)
		near := map[uint32]uint8{}
		for i, j := 0, 0; i < len(img.Pix); i, j = i+4, j+1 {
			k := uint32(img.Pix[i])<<16 | uint32(img.Pix[i+1])<<8 | uint32(img.Pix[i+2])
			v, ok := index[k]
			if !ok {
				if v, ok = near[k]; !ok {
					v = uint8(pal.Index(color.RGBA{img.Pix[i], img.Pix[i+1], img.Pix[i+2], 255}))
					near[k] = v
				}
			}
			p.Pix[j] = v
		}
		enc = p
	}
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	e := png.Encoder{CompressionLevel: png.BestCompression}
	if err := e.Encode(fh, enc); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}
