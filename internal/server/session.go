package server

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"

	"github.com/acu-dev/acu/internal/api"
)

//go:embed web
var webFS embed.FS

// pageCSP is the API page's policy: its own scripts and styles, nothing
// inline, requests to the daemon only.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// loginHint tells a browser user how to get a new login link.
const loginHint = "run `acu open` for a new one-time link"

// handleLoginLink: POST /v1/auth/link (token required) -> a one-time URL of
// the API page; its code is in the fragment and redeemed by the page.
func (s *Server) handleLoginLink(w http.ResponseWriter, r *http.Request) error {
	next := r.URL.Query().Get("next")
	if next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") {
		next = "/"
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	u, exp := s.sessions.LoginURL(scheme+"://"+r.Host+"/", next)
	if strings.HasPrefix(next, "/ui/") && !strings.ContainsAny(next, "#\\") {
		// The pages under /ui/ log in where they are: the link opens the
		// page itself, its code in the fragment.
		code, e := s.sessions.NewCode(next)
		u, exp = scheme+"://"+r.Host+next+"#code="+code, e
	}
	writeJSON(w, http.StatusOK, api.LoginLink{URL: u, ExpiresAt: exp.UTC()})
	return nil
}

// handlePage: GET / is the API page. It is static and holds no secret; its
// script logs in with the code of a one-time link (guard.Sessions).
func (s *Server) handlePage(w http.ResponseWriter, r *http.Request) error {
	b, err := webFS.ReadFile("web/index.html")
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", pageCSP)
	_, _ = w.Write(b)
	return nil
}

// pageFiles serves the page's script and style.
func pageFiles() http.Handler {
	sub, _ := fs.Sub(webFS, "web")
	return http.FileServerFS(sub)
}
