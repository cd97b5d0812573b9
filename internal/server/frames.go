package server

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
	"net/http"
	"strconv"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/record"
	"github.com/acu-dev/acu/internal/store"
)

// Frames is what the run timeline needs from the store of judged frames
// (*store.DB).
type Frames interface {
	GetFrame(ctx context.Context, hash string) (store.Frame, error)
	RunFrames(ctx context.Context, runID string) ([]store.RunFrame, error)
}

func (s *Server) frames() (Frames, error) {
	if s.opts.Frames == nil {
		return nil, newErr(http.StatusServiceUnavailable, api.CodeUnavailable, "", "judged frames are not kept by this daemon")
	}
	return s.opts.Frames, nil
}

// handleRunFrames: GET /v1/runs/{id}/frames lists the frames the run's
// judgements saw (one per distinct screen), oldest first.
func (s *Server) handleRunFrames(w http.ResponseWriter, r *http.Request) error {
	fs, err := s.frames()
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	if _, err := s.opts.Runs.Get(r.Context(), id); err != nil {
		return about(aboutRun, id, err)
	}
	list, err := fs.RunFrames(r.Context(), id)
	if err != nil {
		return err
	}
	out := api.RunFrameList{Frames: make([]api.RunFrame, 0, len(list))}
	for _, f := range list {
		out.Frames = append(out.Frames, api.RunFrame{Hash: f.Hash, At: f.At, URL: "/v1/frames/" + f.Hash})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// handleFrame: GET /v1/frames/{hash} is a kept frame: a judged frame's
// JPEG or an agent turn's annotated PNG. Frames are
// named by their content, so they never change: cached for good.
func (s *Server) handleFrame(w http.ResponseWriter, r *http.Request) error {
	fs, err := s.frames()
	if err != nil {
		return err
	}
	hash := r.PathValue("hash")
	f, err := fs.GetFrame(r.Context(), hash)
	if errors.Is(err, store.ErrNotFound) {
		return errNotFound("no frame %q: it was never judged or retention removed it", hash)
	}
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", http.DetectContentType(f.JPEG)) // JPEG, or PNG for agent turns
	w.Header().Set("Content-Length", strconv.Itoa(len(f.JPEG)))
	w.Header().Set("Cache-Control", "private, max-age=31536000, immutable")
	_, _ = w.Write(f.JPEG)
	return nil
}

// maxGIFFrames bounds an exported animation.
const maxGIFFrames = 300

// runStills returns a run's judged frames for an exported animation
// (the newest maxGIFFrames), each with how long it stays on screen: the
// time until the next one (0.5 s to 5 s), the last for 3 s.
func (s *Server) runStills(r *http.Request, id string) ([]store.Frame, []time.Duration, error) {
	fs, err := s.frames()
	if err != nil {
		return nil, nil, err
	}
	if _, err := s.opts.Runs.Get(r.Context(), id); err != nil {
		return nil, nil, about(aboutRun, id, err)
	}
	list, err := fs.RunFrames(r.Context(), id)
	if err != nil {
		return nil, nil, err
	}
	if len(list) > maxGIFFrames {
		list = list[len(list)-maxGIFFrames:]
	}
	var frames []store.Frame
	var shows []time.Duration
	for i, rf := range list {
		f, err := fs.GetFrame(r.Context(), rf.Hash)
		if err != nil {
			continue // removed by retention meanwhile
		}
		show := 3 * time.Second
		if i+1 < len(list) {
			show = min(max(list[i+1].At.Sub(rf.At), 500*time.Millisecond), 5*time.Second)
		}
		frames, shows = append(frames, f), append(shows, show)
	}
	if len(frames) == 0 {
		return nil, nil, errNotFound("run %q has no judged frames", id)
	}
	return frames, shows, nil
}

// handleRunFramesWebP: GET /v1/runs/{id}/frames.webp is the same animation
// as frames.gif as an animated WebP (full colour, smaller), encoded by
// ffmpeg through the recorder; 503 without one.
func (s *Server) handleRunFramesWebP(w http.ResponseWriter, r *http.Request) error {
	rec, err := s.recordings()
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	frames, shows, err := s.runStills(r, id)
	if err != nil {
		return err
	}
	stills := make([]record.Still, len(frames))
	for i, f := range frames {
		stills[i] = record.Still{JPEG: f.JPEG, Show: shows[i]}
	}
	b, err := rec.AnimateWebP(r.Context(), stills)
	if err != nil {
		return fmt.Errorf("export the frames of run %s as WebP: %w", id, err)
	}
	w.Header().Set("Content-Type", "image/webp")
	w.Header().Set("Content-Disposition", "attachment; filename=\""+id+".webp\"")
	_, _ = w.Write(b)
	return nil
}

// handleRunFramesGIF: GET /v1/runs/{id}/frames.gif is the run's judged
// frames as an animated GIF, for sharing in an issue or a chat (see
// runStills for the timing).
func (s *Server) handleRunFramesGIF(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	frames, shows, err := s.runStills(r, id)
	if err != nil {
		return err
	}
	anim := &gif.GIF{}
	for i, f := range frames {
		img, _, err := image.Decode(bytes.NewReader(f.JPEG))
		if err != nil {
			return fmt.Errorf("decode judged frame %s: %w", f.Hash, err)
		}
		p := image.NewPaletted(img.Bounds(), palette.Plan9)
		draw.FloydSteinberg.Draw(p, img.Bounds(), img, image.Point{})
		anim.Image = append(anim.Image, p)
		anim.Delay = append(anim.Delay, int(shows[i]/(10*time.Millisecond)))
	}
	var buf bytes.Buffer
	if err := gif.EncodeAll(&buf, anim); err != nil {
		return fmt.Errorf("encode the frames of run %s as GIF: %w", id, err)
	}
	w.Header().Set("Content-Type", "image/gif")
	w.Header().Set("Content-Disposition", "attachment; filename=\""+id+".gif\"")
	_, _ = w.Write(buf.Bytes())
	return nil
}
