package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

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

// runStills returns a run's judged frames for an exported animation, each
// with how long it stays on screen (record.RunStills).
func (s *Server) runStills(r *http.Request, id string) ([]record.Still, error) {
	fs, err := s.frames()
	if err != nil {
		return nil, err
	}
	if _, err := s.opts.Runs.Get(r.Context(), id); err != nil {
		return nil, about(aboutRun, id, err)
	}
	stills, err := record.RunStills(r.Context(), fs, id)
	return stills, about(aboutRun, id, err)
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
	stills, err := s.runStills(r, id)
	if err != nil {
		return err
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
// record.RunStills for the timing).
func (s *Server) handleRunFramesGIF(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	stills, err := s.runStills(r, id)
	if err != nil {
		return err
	}
	b, err := record.AnimateGIF(stills)
	if err != nil {
		return fmt.Errorf("encode the frames of run %s as GIF: %w", id, err)
	}
	w.Header().Set("Content-Type", "image/gif")
	w.Header().Set("Content-Disposition", "attachment; filename=\""+id+".gif\"")
	_, _ = w.Write(b)
	return nil
}
