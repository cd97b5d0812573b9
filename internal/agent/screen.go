package agent

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"image"
	"math"
	"time"

	"github.com/acu-dev/acu/internal/annotate"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/runlog"
	"github.com/acu-dev/acu/internal/store"
)

// This file is a turn's screen: the screenshot after the actions, its
// overlays, the files of the run directory and the turn's event.

// FrameStore keeps the frames a run saw, once per content hash
// (*store.DB).
type FrameStore interface {
	PutRunFrame(ctx context.Context, runID string, f store.Frame, at time.Time) error
}

// keepFrame stores a turn's annotated PNG (Options.Frames) and returns its
// hash, "" when none is kept.
func (a *Agent) keepFrame(ctx context.Context, png []byte) string {
	if a.opts.Frames == nil || a.run.ID() == "" || len(png) < 24 {
		return ""
	}
	sum := sha256.Sum256(png)
	h := "png-" + hex.EncodeToString(sum[:12])
	w := int(binary.BigEndian.Uint32(png[16:20])) // the IHDR's width and height
	ht := int(binary.BigEndian.Uint32(png[20:24]))
	if err := a.opts.Frames.PutRunFrame(context.WithoutCancel(ctx), a.run.ID(), store.Frame{Hash: h, JPEG: png, Width: w, Height: ht}, a.opts.Now()); err != nil {
		a.log.Warn("keep a turn's frame", "run_id", a.run.ID(), "err", err)
		return ""
	}
	return h
}

// shot is the post-action screenshot: the working area, resized, as BGRX.
type shot struct {
	pix    []byte
	w, h   int
	stride int
}

// capture reads the screen, crops it to the working area (the same pixels
// input maps into) and resizes it as configured.
func (a *Agent) capture(ctx context.Context) (shot, error) {
	f, err := a.opts.Hub.Capture(ctx, a.opts.Display, capture.Target{Kind: capture.Screen})
	if err != nil {
		return shot{}, fmt.Errorf("capture %s: %w", a.opts.Display, err)
	}
	ar := a.area
	v := f.Sub(image.Rect(ar.X, ar.Y, ar.X+ar.W, ar.Y+ar.H), "area")
	w, h := OutputSize(v.W, v.H, a.opts.CaptureWidth, a.opts.CaptureHeight, a.opts.CaptureScalePercent)
	s := shot{w: v.W, h: v.H, stride: v.Stride, pix: v.Pix}
	if w != v.W || h != v.H {
		need := w * h * 4
		if cap(a.rawBuf) < need {
			a.rawBuf = make([]byte, need)
		}
		a.rawBuf = a.rawBuf[:need]
		frame.Resize(a.rawBuf, w, h, v.Pix, v.W, v.H, v.Stride, frame.Fast)
		s.pix, s.w, s.h, s.stride = a.rawBuf, w, h, w*4
	}
	return s, nil
}

// OutputSize is the screenshot size for a w*h working area: width x height
// when both are > 0, else scaled by percent (1..99), else unchanged.
func OutputSize(w, h, width, height, percent int) (int, int) {
	if width > 0 && height > 0 {
		return width, height
	}
	if percent > 0 && percent < 100 {
		return max(int(math.Round(float64(w)*float64(percent)/100)), 1), max(int(math.Round(float64(h)*float64(percent)/100)), 1)
	}
	return w, h
}

// annotateAndEncode copies the screenshot, draws the overlays on the copy
// and encodes it as PNG.
func (a *Agent) annotateAndEncode(s shot, boxes []Box, trail [][]annotate.Mark) []byte {
	need := s.w * s.h * 4
	if cap(a.annBuf) < need {
		a.annBuf = make([]byte, need)
	}
	buf := a.annBuf[:need]
	for y := range s.h {
		copy(buf[y*s.w*4:(y+1)*s.w*4], s.pix[y*s.stride:y*s.stride+s.w*4])
	}
	bx := make([]annotate.Box, len(boxes))
	for i, b := range boxes {
		bx[i] = annotate.Box{X1: b.X1, Y1: b.Y1, X2: b.X2, Y2: b.Y2}
	}
	a.ann.Draw(annotate.Image{Pix: buf, W: s.w, H: s.h, Stride: s.w * 4, Format: annotate.BGRX}, bx, trail)
	return a.annEnc.Encode(buf, s.w, s.h, s.w*4)
}

// flush waits for the previous turn's background work (raw PNG, run
// directory).
func (a *Agent) flush() { a.bg.Wait() }

// marks converts actions to annotation marks with their labels.
func (a *Agent) marks(acts []Action) []annotate.Mark {
	out := make([]annotate.Mark, 0, len(acts))
	for i, act := range acts {
		m := annotate.Mark{Pos: true, X: act.X1, Y: act.Y1}
		switch act.Name {
		case gate.KindDrag:
			m.Drag, m.X2, m.Y2 = true, act.X2, act.Y2
			m.Label = fmt.Sprintf("%d drag %d,%d>%d,%d", i+1, act.X1, act.Y1, act.X2, act.Y2)
		case gate.KindType:
			m.Pos = false
			m.Label = fmt.Sprintf("%d type %q", i+1, truncate(act.Text, 40))
		case gate.KindKey:
			m.Pos = false
			m.Label = fmt.Sprintf("%d key %s", i+1, truncate(act.Keys, 40))
		case gate.KindScroll:
			m.Label = fmt.Sprintf("%d scroll %d,%d dy=%d", i+1, act.X1, act.Y1, act.DY)
		default:
			m.Label = fmt.Sprintf("%d %s %d,%d", i+1, act.Name, act.X1, act.Y1)
		}
		out = append(out, m)
	}
	return out
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}

func (a *Agent) pushTrail(acts []Action) {
	n := max(a.opts.UI.ExecutedHeat.TrailTurns, 1)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.trail = append([][]Action{acts}, a.trail...)
	if len(a.trail) > n {
		a.trail = a.trail[:n]
	}
	a.st.Trail = a.trail
}

// waitAnnotated waits for POST /annotated with seq n (annotator=panel).
func (a *Agent) waitAnnotated(ctx context.Context, n int) ([]byte, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case c := <-a.control:
			if a.applyControl(c) {
				return nil, errStop
			}
		case an := <-a.annotated:
			if an.seq == n {
				a.mu.Lock()
				a.st.AnnotatedSeq, a.st.AnnotatedPNG = n, an.png
				a.st.MsgID++
				a.mu.Unlock()
				return an.png, nil
			}
		}
	}
}

func (a *Agent) saveRaw(n int, out Output, text string, png []byte) {
	if a.dir == nil {
		return
	}
	rec := runlog.RawRecord{Turn: n, Observation: out.Observation, BBoxes: out.BBoxes, Actions: out.Actions, VLMText: text}
	if len(out.Rejected) > 0 {
		rec.Rejected = out.Rejected
	}
	if err := a.dir.WriteRaw(rec, png); err != nil {
		a.logWarn("run log", "turn", n, "err", err)
	}
}

func (a *Agent) saveAnnotated(n int, png []byte) {
	if a.dir == nil {
		return
	}
	if err := a.dir.WriteAnnotated(n, png); err != nil {
		a.logWarn("run log", "turn", n, "err", err)
	}
}

// TurnEvent is the data of a "turn" progress event.
type TurnEvent struct {
	Turn         int        `json:"turn"`
	Observation  string     `json:"observation"`
	Actions      []Action   `json:"actions"`
	BBoxes       []Box      `json:"bboxes"`
	Rejected     []Rejected `json:"rejected,omitempty"`
	ActionErrors []string   `json:"actionErrors,omitempty"`
	Parse        string     `json:"parse"`
	RawPNG       string     `json:"rawPng,omitempty"`
	AnnotatedPNG string     `json:"annotatedPng,omitempty"`
	// FrameHash names the annotated frame the model saw in the frame
	// store (Options.Frames; GET /v1/frames/{hash}), for the run timeline.
	FrameHash string  `json:"frameHash,omitempty"`
	CostUSD   float64 `json:"costUsd"`
	// CostUnknown: some call of the session had no cost (CostUSD is the
	// known part).
	CostUnknown bool `json:"costUnknown,omitempty"`
}

func (a *Agent) emitTurn(ctx context.Context, n int, out Output, execErrs []string, annPNG []byte) {
	ev := TurnEvent{Turn: n, Observation: out.Observation, Actions: out.Actions, BBoxes: out.BBoxes, Rejected: out.Rejected, Parse: out.Mode}
	ev.FrameHash = a.keepFrame(ctx, annPNG)
	for _, e := range execErrs {
		if e != "" {
			ev.ActionErrors = execErrs
			break
		}
	}
	if a.dir != nil {
		ev.RawPNG = a.dir.Path() + "/" + a.dir.RawName(n)
		ev.AnnotatedPNG = a.dir.Path() + "/" + a.dir.AnnotatedName(n)
	}
	a.mu.Lock()
	ev.CostUSD, ev.CostUnknown = a.meter.CostUSD, a.meter.Unpriced > 0
	a.mu.Unlock()
	a.run.Emit(ctx, StreamTurn, ev)
}
