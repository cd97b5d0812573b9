package server

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/live"
)

// Live is what the live view's routes need (*live.Service).
type Live interface {
	Display(dpy string) string
	Stream(ctx context.Context, o live.StreamOptions, send func(live.Frame) error) error
	Take(ctx context.Context, dpy, by string) (api.Takeover, error)
	Release(ctx context.Context, dpy, reason string) (api.Takeover, error)
	State(dpy string) api.Takeover
	Renew(dpy string) error
	Input(ctx context.Context, dpy string, evs []api.LiveInput) error
}

func (s *Server) live() (Live, error) {
	if s.opts.Live == nil {
		return nil, newErr(http.StatusServiceUnavailable, api.CodeUnavailable, "", "the live view is not available in this daemon")
	}
	return s.opts.Live, nil
}

// handleLiveFrames: GET /v1/live/frames?display=&max_width=&max_height=&quality=&max_fps=
// is a Server-Sent Events stream of "frame" events (api.LiveFrame, id =
// its seq), one at the start and one after each change of the screen;
// nothing while it stays the same but a heartbeat comment. A slow reader
// gets the newest screen when it is ready, not a queue of old ones.
func (s *Server) handleLiveFrames(w http.ResponseWriter, r *http.Request) error {
	lv, err := s.live()
	if err != nil {
		return err
	}
	o, err := liveStreamOptions(lv, r.URL.Query())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	out := &sseOut{w: w, rc: http.NewResponseController(w)}
	// Heartbeats share the writer with frames: one goroutine at a time.
	beat, stopBeats := heartbeats(ctx)
	defer func() { cancel(); stopBeats() }()
	sent := make(chan live.Frame)
	errc := make(chan error, 1)
	go func() {
		errc <- lv.Stream(ctx, o, func(f live.Frame) error {
			select {
			case sent <- f:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	for {
		select {
		case err := <-errc:
			if err != nil && !out.started && ctx.Err() == nil {
				return about(aboutLive, o.Display, err)
			}
			if err != nil && ctx.Err() == nil {
				s.log.Warn("live stream ended", "display", o.Display, "err", err)
			}
			return nil
		case <-beat:
			if !out.started {
				continue
			}
			if out.write([]byte(": ping\n\n")) != nil {
				cancel()
			}
		case f := <-sent:
			out.start()
			if out.write(liveFrameEvent(f)) != nil {
				cancel()
			}
		}
	}
}

// liveStreamOptions are GET /v1/live/frames' parameters.
func liveStreamOptions(lv Live, q url.Values) (live.StreamOptions, error) {
	if err := checkDisplayName(q.Get("display")); err != nil {
		return live.StreamOptions{}, err
	}
	o := live.StreamOptions{Display: lv.Display(q.Get("display"))}
	var err error
	if o.MaxW, err = intParam(q.Get("max_width"), "max_width", 0, 0, 16384); err != nil {
		return o, err
	}
	if o.MaxH, err = intParam(q.Get("max_height"), "max_height", 0, 0, 16384); err != nil {
		return o, err
	}
	if o.Quality, err = intParam(q.Get("quality"), "quality", live.DefaultQuality, 1, 100); err != nil {
		return o, err
	}
	if o.MaxFPS, err = intParam(q.Get("max_fps"), "max_fps", live.DefaultMaxFPS, 1, 60); err != nil {
		return o, err
	}
	return o, nil
}

// sseOut is an event stream's writer: the headers go out with the first
// event, so an error before it is still an ordinary error response.
type sseOut struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
}

func (o *sseOut) start() {
	if o.started {
		return
	}
	o.started = true
	h := o.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	o.w.WriteHeader(http.StatusOK)
}

func (o *sseOut) write(b []byte) error {
	_ = o.rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
	if _, err := o.w.Write(b); err != nil {
		return err
	}
	return o.rc.Flush()
}

// heartbeats ticks every heartbeat until ctx ends; stop waits for its
// goroutine.
func heartbeats(ctx context.Context) (beat <-chan struct{}, stop func()) {
	c := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(heartbeat)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				select {
				case c <- struct{}{}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return c, func() { <-done }
}

// liveFrameEvent is a "frame" event of f. The JPEG's base64 is spliced
// in, not marshalled: it is shared with the frame's other consumers and
// megabytes long.
func liveFrameEvent(f live.Frame) []byte {
	b, _ := json.Marshal(api.LiveFrame{Seq: f.Seq, At: f.At.UTC(), W: f.W, H: f.H, ScreenW: f.ScreenW, ScreenH: f.ScreenH,
		Hash: f.HashString()})
	msg := make([]byte, 0, len(b)+len(f.Base64)+64)
	msg = append(msg, "event: frame\nid: "...)
	msg = strconv.AppendUint(msg, f.Seq, 10)
	msg = append(msg, "\ndata: "...)
	msg = append(msg, b[:len(b)-len(`""}`)]...)
	msg = append(msg, `"`...)
	msg = append(msg, f.Base64...)
	msg = append(msg, "\"}\n\n"...)
	return msg
}

func (s *Server) handleTakeoverState(w http.ResponseWriter, r *http.Request) error {
	lv, err := s.live()
	if err != nil {
		return err
	}
	if err := checkDisplayName(r.URL.Query().Get("display")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, lv.State(lv.Display(r.URL.Query().Get("display"))))
	return nil
}

// takerName says who took a display over, for its run and the hold.
func takerName(r *http.Request) string {
	if p := PrincipalOf(r.Context()); p.ID != "session" {
		return "a client with token " + p.String()
	}
	return "a browser (live view)"
}

// handleTakeover: POST /v1/live/takeover {display} gives the display to the
// caller: acu's agents, tasks and action clients on it pause until the
// hand-back (DELETE). Posting again renews it (a page does every few
// seconds; a take-over without a sign for a while is handed back).
func (s *Server) handleTakeover(w http.ResponseWriter, r *http.Request) error {
	lv, err := s.live()
	if err != nil {
		return err
	}
	var req api.TakeoverRequest
	if r.ContentLength != 0 {
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
	}
	if err := checkDisplayName(req.Display); err != nil {
		return err
	}
	dpy := lv.Display(req.Display)
	st, err := lv.Take(r.Context(), dpy, takerName(r))
	if err != nil {
		return about(aboutLive, dpy, err)
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

func (s *Server) handleHandBack(w http.ResponseWriter, r *http.Request) error {
	lv, err := s.live()
	if err != nil {
		return err
	}
	if err := checkDisplayName(r.URL.Query().Get("display")); err != nil {
		return err
	}
	dpy := lv.Display(r.URL.Query().Get("display"))
	st, err := lv.Release(r.Context(), dpy, "handed back")
	if err != nil {
		return about(aboutLive, dpy, err)
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

// handleLiveInput: POST /v1/live/input sends a human's pointer and keyboard
// events to a display taken over by the caller.
func (s *Server) handleLiveInput(w http.ResponseWriter, r *http.Request) error {
	lv, err := s.live()
	if err != nil {
		return err
	}
	var req api.LiveInputRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	if len(req.Events) > 200 {
		return errInvalid("events", "events: at most 200 a request, got %d", len(req.Events))
	}
	if err := checkDisplayName(req.Display); err != nil {
		return err
	}
	dpy := lv.Display(req.Display)
	if err := lv.Input(r.Context(), dpy, req.Events); err != nil {
		return about(aboutLive, dpy, err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// uiCSP is the pages' policy under /ui/: like the API page's, with frames
// shown from data: and blob: URLs.
const uiCSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// uiPage serves one of the pages under /ui/ (static, no secret: its
// script logs in with a one-time link's code).
func uiPage(name string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		b, err := webFS.ReadFile("web/ui/" + name)
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", uiCSP)
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(b)
		return nil
	}
}

// uiFiles serves the pages' scripts and styles under /ui/.
func uiFiles() http.Handler {
	sub, _ := fs.Sub(webFS, "web")
	fsrv := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", uiCSP)
		fsrv.ServeHTTP(w, r)
	})
}
