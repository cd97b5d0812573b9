package server

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/api"
)

const (
	sessionCookie = "acu_session"
	loginCodeTTL  = 2 * time.Minute
	sessionTTL    = 12 * time.Hour
)

// sessions holds one-time login codes and the browser sessions they open.
// A web page never sees the token: `acu open` asks (with the token) for a
// one-time URL, the browser follows it once, and the daemon answers with an
// HttpOnly, SameSite=Strict cookie. Sessions live in memory: a restart logs
// browsers out, which is the safe default.
type sessions struct {
	mu       sync.Mutex
	codes    map[string]loginCode
	sessions map[string]time.Time
	now      func() time.Time
}

type loginCode struct {
	expires time.Time
	next    string
}

func newSessions(now func() time.Time) *sessions {
	return &sessions{codes: map[string]loginCode{}, sessions: map[string]time.Time{}, now: now}
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (s *sessions) newCode(next string) (string, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gc()
	c := randomToken()
	exp := s.now().Add(loginCodeTTL)
	s.codes[c] = loginCode{expires: exp, next: next}
	return c, exp
}

// redeem consumes a code and opens a session.
func (s *sessions) redeem(code string) (session, next string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lc, found := s.codes[code]
	delete(s.codes, code)
	if !found || s.now().After(lc.expires) {
		return "", "", false
	}
	id := randomToken()
	s.sessions[id] = s.now().Add(sessionTTL)
	return id, lc.next, true
}

func (s *sessions) valid(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.sessions[id]
	return ok && s.now().Before(exp)
}

func (s *sessions) gc() {
	now := s.now()
	for k, v := range s.codes {
		if now.After(v.expires) {
			delete(s.codes, k)
		}
	}
	for k, v := range s.sessions {
		if now.After(v) {
			delete(s.sessions, k)
		}
	}
}

// handleLoginLink: POST /v1/auth/link (token required) -> a one-time URL.
func (s *Server) handleLoginLink(w http.ResponseWriter, r *http.Request) error {
	next := r.URL.Query().Get("next")
	if next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") {
		next = "/"
	}
	code, exp := s.sessions.newCode(next)
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	writeJSON(w, http.StatusOK, api.LoginLink{URL: scheme + "://" + r.Host + "/auth?code=" + code, ExpiresAt: exp.UTC()})
	return nil
}

// handleAuth: GET /auth?code=… redeems a one-time code into a session cookie.
func (s *Server) handleAuth(w http.ResponseWriter, r *http.Request) error {
	id, next, ok := s.sessions.redeem(r.URL.Query().Get("code"))
	if !ok {
		return errUnauthorized("this login link is unknown, used or expired: run `acu open` for a new one")
	}
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: id, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: int(sessionTTL.Seconds()),
	})
	http.Redirect(w, r, next, http.StatusSeeOther)
	return nil
}
