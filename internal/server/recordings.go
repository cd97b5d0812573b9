package server

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/record"
	"github.com/acu-dev/acu/internal/wayland/sway"
)

// Recordings is what the recording routes need (*record.Recorder).
type Recordings interface {
	Start(ctx context.Context, o record.StartOptions) (api.Recording, error)
	Stop(ctx context.Context, id string) (api.Recording, error)
	Get(ctx context.Context, id string) (api.Recording, error)
	List(ctx context.Context, runID string, limit int) ([]api.Recording, error)
	File(ctx context.Context, id string) (string, api.Recording, error)
	AnimateWebP(ctx context.Context, stills []record.Still) ([]byte, error)
}

func (s *Server) recordings() (Recordings, error) {
	if s.opts.Recordings == nil {
		return nil, newErr(http.StatusServiceUnavailable, api.CodeUnavailable, "", "recordings are not available in this daemon")
	}
	return s.opts.Recordings, nil
}

// handleStartRecording: POST /v1/recordings {display, format, run_id}
// starts recording a display; POST /v1/recordings/{id}/stop ends it.
func (s *Server) handleStartRecording(w http.ResponseWriter, r *http.Request) error {
	rs, err := s.recordings()
	if err != nil {
		return err
	}
	var req api.StartRecording
	if r.ContentLength != 0 {
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
	}
	if req.Format != "" && req.Format != record.MP4 && req.Format != record.WebM {
		return errInvalid("format", "format must be mp4 or webm, got %q", req.Format)
	}
	if err := checkDisplayName(req.Display); err != nil {
		return err
	}
	rec, err := rs.Start(r.Context(), record.StartOptions{Display: req.Display, Format: req.Format, RunID: req.RunID})
	if err != nil {
		return about(aboutRecorder, "", err)
	}
	w.Header().Set("Location", "/v1/recordings/"+rec.ID)
	writeJSON(w, http.StatusCreated, rec)
	return nil
}

func (s *Server) handleStopRecording(w http.ResponseWriter, r *http.Request) error {
	rs, err := s.recordings()
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	rec, err := rs.Stop(r.Context(), id)
	if err != nil {
		return about(aboutRecording, id, err)
	}
	writeJSON(w, http.StatusOK, rec)
	return nil
}

// handleListRecordings: GET /v1/recordings[?run=ID&limit=N].
func (s *Server) handleListRecordings(w http.ResponseWriter, r *http.Request) error {
	rs, err := s.recordings()
	if err != nil {
		return err
	}
	limit, err := intParam(r.URL.Query().Get("limit"), "limit", 100, 1, 1000)
	if err != nil {
		return err
	}
	list, err := rs.List(r.Context(), r.URL.Query().Get("run"), limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.RecordingList{Recordings: list})
	return nil
}

// handleRecording: GET /v1/recordings/{id} downloads the file (with Range
// support, so players can seek); with Accept: application/json it is the
// recording's record instead.
func (s *Server) handleRecording(w http.ResponseWriter, r *http.Request) error {
	rs, err := s.recordings()
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	if r.Header.Get("Accept") == "application/json" {
		rec, err := rs.Get(r.Context(), id)
		if err != nil {
			return about(aboutRecording, id, err)
		}
		writeJSON(w, http.StatusOK, rec)
		return nil
	}
	path, rec, err := rs.File(r.Context(), id)
	if err != nil {
		if errors.Is(err, record.ErrNotFound) || errors.Is(err, record.ErrIncomplete) {
			return about(aboutRecording, id, err)
		}
		return errConflict("%v", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return errNotFound("the file of recording %q (%s) is gone from the recordings directory", id, rec.File)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	ct := "video/mp4"
	if rec.Format == record.WebM {
		ct = "video/webm"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Disposition", "attachment; filename=\""+id+"."+rec.Format+"\"")
	w.Header().Set("X-Acu-Duration-Ms", strconv.FormatInt(rec.DurationMs, 10))
	http.ServeContent(w, r, "", fi.ModTime(), f)
	return nil
}

// checkDisplayName refuses a malformed display name before any engine
// sees it: 400 naming the display field (the engines also refuse remote
// names they do not allow, with the same error).
func checkDisplayName(name string) error {
	if name == "" {
		return nil
	}
	if sway.IsName(name) { // a Wayland socket (docs/wayland.md)
		if !filepath.IsAbs(name) {
			return errInvalid("display", "Wayland display %q: give the socket's absolute path ($XDG_RUNTIME_DIR/%s)", name, name)
		}
		return nil
	}
	if _, err := display.ParseName(name, true); err != nil {
		return errInvalid("display", "%v", err)
	}
	return nil
}
