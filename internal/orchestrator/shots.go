package orchestrator

import (
	"context"
	"fmt"
	"image"
	"time"

	"github.com/acu-dev/acu/internal/annotate"
	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/store"
)

// This file is the screenshots the models see and the frames the run
// timeline keeps.

// fastShotDim and fastShotQuality are the fast agent's screenshot's
// longest side and JPEG quality.
const (
	fastShotDim     = 1280
	fastShotQuality = 70
)

// markedShot is the map's frame with each element's id drawn on it
// (set-of-marks), for the fast agent and the progress checker, made once
// per map; nil when FastScreenshots is off or the map has no frame. The
// resize buffer is kept across iterations.
func (l *loop) markedShot(m *elements.Map) []llm.Image {
	if !l.opts.FastScreenshots || m == nil || m.Frame == nil {
		return nil
	}
	if l.marked.m == m {
		return l.marked.imgs
	}
	f := m.Frame
	w, h := frame.TargetSize(f.W, f.H, fastShotDim)
	if cap(l.marked.buf) < w*h*4 {
		l.marked.buf = make([]byte, w*h*4)
	}
	pix := l.marked.buf[:w*h*4]
	if w == f.W && h == f.H {
		for y := range h {
			copy(pix[y*w*4:(y+1)*w*4], f.Pix[y*f.Stride:y*f.Stride+w*4])
		}
	} else {
		frame.Resize(pix, w, h, f.Pix, f.W, f.H, f.Stride, f.Resample)
	}
	m.DrawMarks(annotate.Image{Pix: pix, W: w, H: h, Stride: w * 4, Format: annotate.BGRX}, image.Rect(0, 0, f.W, f.H))
	b, err := frame.EncodeJPEG(nil, pix, w, h, w*4, fastShotQuality)
	if err != nil {
		l.o.log.Warn("encode the fast agent's screenshot", "run_id", l.runID, "err", err)
		return nil
	}
	l.marked.m, l.marked.imgs = m, []llm.Image{{MIME: "image/jpeg", Data: b}}
	return l.marked.imgs
}

// screenshot is the map's frame for the planner and the verifier.
func (l *loop) screenshot(m *elements.Map) []llm.Image {
	if !l.opts.Screenshots || m == nil || m.Frame == nil {
		return nil
	}
	b, err := m.Frame.JPEG(1280, 70)
	if err != nil {
		return nil
	}
	return []llm.Image{{MIME: "image/jpeg", Data: b}}
}

// keepFrame stores the frame the map was read from for the run timeline
// (once per distinct screen) and returns its hash; "" without a store or
// a frame.
func (l *loop) keepFrame(ctx context.Context, m *elements.Map) string {
	if l.opts.Frames == nil || m.Frame == nil {
		return ""
	}
	jpg, err := m.Frame.JPEG(960, 72)
	if err != nil {
		l.o.log.Warn("encode a task frame", "run_id", l.runID, "err", err)
		return ""
	}
	w, h := frame.TargetSize(m.Frame.W, m.Frame.H, 960)
	f := store.Frame{Hash: fmt.Sprintf("%016x", m.Frame.Hash), JPEG: jpg, Width: w, Height: h}
	if err := l.opts.Frames.PutRunFrame(context.WithoutCancel(ctx), l.runID, f, time.Now()); err != nil {
		l.o.log.Warn("keep a task frame", "run_id", l.runID, "err", err)
		return ""
	}
	return f.Hash
}
