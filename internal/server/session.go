package server

import (
	"net/http"
	"strings"

	"github.com/acu-dev/acu/internal/api"
)

// handleLoginLink: POST /v1/auth/link (token required) -> a one-time URL.
func (s *Server) handleLoginLink(w http.ResponseWriter, r *http.Request) error {
	next := r.URL.Query().Get("next")
	if next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") {
		next = "/"
	}
	code, exp := s.sessions.NewCode(next)
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	writeJSON(w, http.StatusOK, api.LoginLink{URL: scheme + "://" + r.Host + "/auth?code=" + code, ExpiresAt: exp.UTC()})
	return nil
}

// handleAuth: GET /auth?code=… redeems a one-time code into a session cookie.
func (s *Server) handleAuth(w http.ResponseWriter, r *http.Request) error {
	id, next, ok := s.sessions.Redeem(r.URL.Query().Get("code"))
	if !ok {
		return errUnauthorized("this login link is unknown, used or expired: run `acu open` for a new one")
	}
	s.sessions.SetCookie(w, r, id)
	http.Redirect(w, r, next, http.StatusSeeOther)
	return nil
}
