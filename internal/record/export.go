package record

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color/palette"
	"image/draw"
	"image/gif"
	_ "image/jpeg" // judged frames
	_ "image/png"  // agent turns' annotated frames
	"time"

	"github.com/acu-dev/acu/internal/store"
)

// FrameStore is what a run's frame export reads: the frames its
// judgements saw (*store.DB).
type FrameStore interface {
	GetFrame(ctx context.Context, hash string) (store.Frame, error)
	RunFrames(ctx context.Context, runID string) ([]store.RunFrame, error)
}

// MaxExportFrames bounds an exported animation: the newest frames are
// kept.
const MaxExportFrames = 300

// ErrNoFrames: the run has no judged frames to export.
var ErrNoFrames = errors.New("the run has no judged frames")

// Export timing: a frame stays on screen until the next one, at least
// exportMinShow and at most exportMaxShow; the last for exportLastShow.
const (
	exportMinShow  = 500 * time.Millisecond
	exportMaxShow  = 5 * time.Second
	exportLastShow = 3 * time.Second
)

// RunStills returns a run's judged frames for an exported animation (the
// newest MaxExportFrames), each with how long it stays on screen: the time
// until the next one (0.5 s to 5 s), the last for 3 s. Frames retention
// removed meanwhile are left out; none at all is ErrNoFrames.
func RunStills(ctx context.Context, fs FrameStore, runID string) ([]Still, error) {
	list, err := fs.RunFrames(ctx, runID)
	if err != nil {
		return nil, err
	}
	if len(list) > MaxExportFrames {
		list = list[len(list)-MaxExportFrames:]
	}
	var stills []Still
	for i, rf := range list {
		f, err := fs.GetFrame(ctx, rf.Hash)
		if err != nil {
			continue // removed by retention meanwhile
		}
		show := exportLastShow
		if i+1 < len(list) {
			show = min(max(list[i+1].At.Sub(rf.At), exportMinShow), exportMaxShow)
		}
		stills = append(stills, Still{JPEG: f.JPEG, Show: show, Hash: f.Hash})
	}
	if len(stills) == 0 {
		return nil, ErrNoFrames
	}
	return stills, nil
}

// AnimateGIF encodes stills as an animated GIF (Plan 9 palette,
// Floyd-Steinberg dithering), each shown for its Show.
func AnimateGIF(stills []Still) ([]byte, error) {
	anim := &gif.GIF{}
	for _, s := range stills {
		img, _, err := image.Decode(bytes.NewReader(s.JPEG))
		if err != nil {
			return nil, fmt.Errorf("decode judged frame %s: %w", s.Hash, err)
		}
		p := image.NewPaletted(img.Bounds(), palette.Plan9)
		draw.FloydSteinberg.Draw(p, img.Bounds(), img, image.Point{})
		anim.Image = append(anim.Image, p)
		anim.Delay = append(anim.Delay, int(s.Show/(10*time.Millisecond)))
	}
	var buf bytes.Buffer
	if err := gif.EncodeAll(&buf, anim); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
