package server

import (
	"context"
	"net/http"

	"github.com/acu-dev/acu/internal/api"
)

// Desktop manages windows, the pointer, the clipboard and launches
// (*gate.Gate).
type Desktop interface {
	Windows(ctx context.Context, display string) (api.WindowList, error)
	WindowOp(ctx context.Context, id, op string, req api.WindowOp) (api.WindowOpResult, error)
	Pointer(ctx context.Context, display string) (api.Pointer, error)
	GetClipboard(ctx context.Context, display, selection, typ string) (api.Clipboard, error)
	SetClipboard(ctx context.Context, req api.Clipboard) (api.Clipboard, error)
	Launch(ctx context.Context, req api.LaunchRequest) (api.LaunchResult, error)
}

func (s *Server) desktop() (Desktop, error) {
	if s.opts.Desktop == nil {
		return nil, newErr(http.StatusServiceUnavailable, api.CodeUnavailable, "", "desktop management is not available in this daemon")
	}
	return s.opts.Desktop, nil
}

// answer writes v or maps err.
func answer[T any](w http.ResponseWriter, v T, err error) error {
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) handleWindows(w http.ResponseWriter, r *http.Request) error {
	d, err := s.desktop()
	if err != nil {
		return err
	}
	l, err := d.Windows(r.Context(), r.URL.Query().Get("display"))
	return answer(w, l, err)
}

func (s *Server) handleWindowOp(w http.ResponseWriter, r *http.Request) error {
	d, err := s.desktop()
	if err != nil {
		return err
	}
	var req api.WindowOp
	if r.ContentLength != 0 {
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
	}
	if req.Display == "" {
		req.Display = r.URL.Query().Get("display")
	}
	res, err := d.WindowOp(r.Context(), r.PathValue("id"), r.PathValue("op"), req)
	return answer(w, res, err)
}

func (s *Server) handlePointer(w http.ResponseWriter, r *http.Request) error {
	d, err := s.desktop()
	if err != nil {
		return err
	}
	p, err := d.Pointer(r.Context(), r.URL.Query().Get("display"))
	return answer(w, p, err)
}

func (s *Server) handleGetClipboard(w http.ResponseWriter, r *http.Request) error {
	d, err := s.desktop()
	if err != nil {
		return err
	}
	q := r.URL.Query()
	c, err := d.GetClipboard(r.Context(), q.Get("display"), q.Get("selection"), q.Get("type"))
	return answer(w, c, err)
}

func (s *Server) handleSetClipboard(w http.ResponseWriter, r *http.Request) error {
	d, err := s.desktop()
	if err != nil {
		return err
	}
	var req api.Clipboard
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	c, err := d.SetClipboard(r.Context(), req)
	return answer(w, c, err)
}

func (s *Server) handleLaunch(w http.ResponseWriter, r *http.Request) error {
	d, err := s.desktop()
	if err != nil {
		return err
	}
	var req api.LaunchRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	if need := s.launchArgvScope(); len(req.Argv) > 0 && api.ScopeRank(PrincipalOf(r.Context()).Scope) < api.ScopeRank(need) {
		return newErr(http.StatusForbidden, api.CodeScope, "argv",
			"launching an argv needs a token with scope %s (ACU_LAUNCH_ARGV=act lowers it to act); this token has scope %s: launch a desktop entry (desktop_entry) instead, or use an admin token",
			need, PrincipalOf(r.Context()).Scope)
	}
	res, err := d.Launch(r.Context(), req)
	return answer(w, res, err)
}
