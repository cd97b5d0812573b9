package guard

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"sync"
	"time"
)

// Lifetimes of login codes and browser sessions.
const (
	LoginCodeTTL = 2 * time.Minute
	SessionTTL   = 12 * time.Hour
)

// Sessions holds one-time login codes and the browser sessions they open.
// A web page never sees the token: a client that holds the token asks for a
// one-time URL, the browser follows it once, and the listener answers with
// an HttpOnly, SameSite=Strict cookie. Sessions live in memory: a restart
// logs browsers out, which is the safe default.
type Sessions struct {
	cookie   string
	mu       sync.Mutex
	codes    map[string]loginCode
	sessions map[string]time.Time
	now      func() time.Time
}

type loginCode struct {
	expires time.Time
	next    string
}

// NewSessions returns an empty session table whose cookie is named cookie.
// Browsers share cookies across the ports of one host, so each listener
// needs a name of its own. now may be nil (time.Now).
func NewSessions(cookie string, now func() time.Time) *Sessions {
	if now == nil {
		now = time.Now
	}
	return &Sessions{cookie: cookie, codes: map[string]loginCode{}, sessions: map[string]time.Time{}, now: now}
}

// Cookie is the name of the session cookie.
func (s *Sessions) Cookie() string { return s.cookie }

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// NewCode returns a one-time login code, valid for LoginCodeTTL, that
// redirects to next (a local path) once redeemed.
func (s *Sessions) NewCode(next string) (code string, expires time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gc()
	code = randomToken()
	expires = s.now().Add(LoginCodeTTL)
	s.codes[code] = loginCode{expires: expires, next: next}
	return code, expires
}

// Redeem consumes a code and opens a session.
func (s *Sessions) Redeem(code string) (session, next string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lc, found := s.codes[code]
	delete(s.codes, code)
	if !found || s.now().After(lc.expires) {
		return "", "", false
	}
	id := randomToken()
	s.sessions[id] = s.now().Add(SessionTTL)
	return id, lc.next, true
}

// Valid reports whether the request carries a live session cookie.
func (s *Sessions) Valid(r *http.Request) bool {
	c, err := r.Cookie(s.cookie)
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.sessions[c.Value]
	return ok && s.now().Before(exp)
}

// SetCookie answers a redeemed code with the session cookie.
func (s *Sessions) SetCookie(w http.ResponseWriter, r *http.Request, session string) {
	http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: session, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: int(SessionTTL.Seconds())})
}

func (s *Sessions) gc() {
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
