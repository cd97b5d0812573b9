package server

import (
	"context"
	"errors"
	"fmt"
	"image"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/actions"
	"github.com/acu-dev/acu/internal/api"
)

// Actions is what the server needs from the action service
// (*actions.Service): run action requests, read the element map, take
// screenshots whose pixels map back to the screen.
type Actions interface {
	Act(ctx context.Context, who actions.Caller, req api.ActRequest) (api.ActResponse, error)
	Elements(ctx context.Context, q api.ElementsQuery) (api.ElementMap, error)
	Shot(ctx context.Context, display string, o api.ShotOptions) (*api.ActShot, error)
	Pointer(ctx context.Context, display string) (image.Point, error)
	ScreenSize(ctx context.Context, display string) (int, int, error)
	Settle(ctx context.Context, display string, quiet, timeout time.Duration) (api.SettleResult, error)
}

func (s *Server) actions() (Actions, error) {
	if s.opts.Actions == nil {
		return nil, newErr(http.StatusServiceUnavailable, api.CodeUnavailable, "", "acting and the element map are not available in this daemon")
	}
	return s.opts.Actions, nil
}

func (s *Server) handleActions(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.actions()
	if err != nil {
		return err
	}
	var req api.ActRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	client := strings.TrimSpace(r.Header.Get(api.HeaderClient))
	if len(client) > 64 {
		client = client[:64]
	}
	if remote, err := s.elsewhere(r.Context(), req.Host, "host"); err != nil {
		return err
	} else if remote {
		return s.actElsewhere(w, r, req, client)
	}
	resp, err := svc.Act(r.Context(), actions.Caller{Client: client, Token: PrincipalOf(r.Context()).String(), Remote: r.RemoteAddr}, req)
	if err != nil {
		var ae *actions.Error
		if errors.As(err, &ae) && ae.Code == api.CodeUserActive {
			w.Header().Set("Retry-After", strconv.FormatInt(max(1, (ae.RetryAfter.Milliseconds()+999)/1000), 10))
		}
		return err
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

func (s *Server) handleElements(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.actions()
	if err != nil {
		return err
	}
	q := r.URL.Query()
	eq := api.ElementsQuery{Display: q.Get("display"), Window: q.Get("window")}
	if v := q.Get("labels"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errInvalid("labels", "labels must be true or false, got %q", v)
		}
		eq.Labels = b
	}
	if eq.Labels {
		o, err := shotQuery(q.Get)
		if err != nil {
			return err
		}
		eq.Shot = &o
	}
	m, err := svc.Elements(r.Context(), eq)
	if err != nil {
		return err
	}
	if q.Get("format") == "text" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte(m.Text))
		return nil
	}
	writeJSON(w, http.StatusOK, m)
	return nil
}

// shotQuery reads screenshot options from query parameters: format,
// max_width, scale, quality, region (or target).
func shotQuery(get func(string) string) (api.ShotOptions, error) {
	o := api.ShotOptions{Format: get("image_format"), Region: get("region")}
	if o.Format == "" {
		o.Format = get("format")
		if o.Format == "text" || o.Format == "json" {
			o.Format = ""
		}
	}
	if o.Region == "" {
		o.Region = get("target")
	}
	var err error
	if v := get("max_width"); v != "" {
		if o.MaxWidth, err = strconv.Atoi(v); err != nil {
			return o, errInvalid("max_width", "max_width must be a whole number of pixels, got %q", v)
		}
	}
	if v := get("quality"); v != "" {
		if o.Quality, err = strconv.Atoi(v); err != nil {
			return o, errInvalid("quality", "quality must be a whole number 1..100, got %q", v)
		}
	}
	if v := get("scale"); v != "" {
		if o.Scale, err = strconv.ParseFloat(v, 64); err != nil {
			return o, errInvalid("scale", "scale must be a number above 0 and at most 1, got %q", v)
		}
	}
	if v := get("labels"); v != "" {
		if o.Labels, err = strconv.ParseBool(v); err != nil {
			return o, errInvalid("labels", "labels must be true or false, got %q", v)
		}
	}
	return o, nil
}

// handleShot serves GET /v1/screenshot through the action service: the
// image with its geometry and an id (X-Acu-Shot-Id) that maps its pixels
// back to the screen in POST /v1/actions.
func (s *Server) handleShot(w http.ResponseWriter, r *http.Request, svc Actions) error {
	q := r.URL.Query()
	o, err := shotQuery(q.Get)
	if err != nil {
		return err
	}
	if o.Format == "" {
		o.Format = "png" // GET /v1/screenshot's default: the full-resolution frame
	}
	if o.Format == "jpg" {
		o.Format = "jpeg"
	}
	shot, err := svc.Shot(r.Context(), q.Get("display"), o)
	if err != nil {
		var ae *actions.Error
		if errors.As(err, &ae) && strings.HasPrefix(ae.Field, "screenshot.") {
			ae.Field = strings.TrimPrefix(ae.Field, "screenshot.")
			if ae.Field == "region" {
				ae.Field = "target"
			}
		}
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "image/"+shot.Format)
	h.Set(api.HeaderImageSize, fmt.Sprintf("%dx%d", shot.Width, shot.Height))
	h.Set(api.HeaderFrameSize, fmt.Sprintf("%dx%d", shot.Region[2], shot.Region[3]))
	h.Set(api.HeaderFrameOrigin, fmt.Sprintf("%d,%d", shot.Region[0], shot.Region[1]))
	h.Set(api.HeaderScreenSize, fmt.Sprintf("%dx%d", shot.Screen[0], shot.Screen[1]))
	h.Set(api.HeaderShotID, shot.ID)
	if o.Region == "" {
		h.Set(api.HeaderTarget, "screen")
	} else {
		h.Set(api.HeaderTarget, o.Region)
	}
	_, _ = w.Write(shot.Data)
	return nil
}
