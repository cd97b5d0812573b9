package guard

import (
	"crypto/rand"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/api"
)

// Lifetimes of login codes and browser sessions.
const (
	LoginCodeTTL = 2 * time.Minute
	SessionTTL   = 12 * time.Hour
)

// SessionHeader carries a browser session on every request of a page.
const SessionHeader = "X-Acu-Session"

// Routes every listener with pages mounts, open (no token): the exchange
// of a one-time code for a session, and the script pages use for it.
const (
	ExchangePattern = "POST /auth/session"
	ScriptPattern   = "GET /session.js"
)

//go:embed session.js
var sessionJS []byte

// Sessions holds one-time login codes and the browser sessions they open.
// A web page never sees the token, and no cookie is ever set: browsers
// send cookies to every port of a host, so a page served from another
// local port would receive them. Instead a client that holds the token
// asks for a one-time link (LoginURL) whose code travels in the URL
// fragment (never sent to a server, never in a Referer); the page's script
// (session.js) swaps it at POST /auth/session for a session, keeps that in
// sessionStorage (readable by the page's own origin only: scheme, host and
// port) and sends it as the X-Acu-Session header. Sessions live in memory:
// a restart logs browsers out, which is the safe default.
type Sessions struct {
	mu       sync.Mutex
	codes    map[string]loginCode
	sessions map[string]time.Time
	now      func() time.Time
}

type loginCode struct {
	expires time.Time
	next    string
}

// NewSessions returns an empty session table. now may be nil (time.Now).
func NewSessions(now func() time.Time) *Sessions {
	if now == nil {
		now = time.Now
	}
	return &Sessions{codes: map[string]loginCode{}, sessions: map[string]time.Time{}, now: now}
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// NewCode returns a one-time login code, valid for LoginCodeTTL; next (a
// local path, or "") is handed to the page when the code is redeemed.
func (s *Sessions) NewCode(next string) (code string, expires time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gc()
	code = randomToken()
	expires = s.now().Add(LoginCodeTTL)
	s.codes[code] = loginCode{expires: expires, next: next}
	return code, expires
}

// LoginURL returns a one-time link to the page at base (such as
// "http://127.0.0.1:18790/") and when it expires. The code is in the
// fragment, so it reaches neither access logs nor Referer headers.
func (s *Sessions) LoginURL(base, next string) (string, time.Time) {
	code, exp := s.NewCode(next)
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	return base + "#code=" + code, exp
}

// Redeem consumes a code and opens a session. A code works once, and only
// within LoginCodeTTL.
func (s *Sessions) Redeem(code string) (session, next string, expires time.Time, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lc, found := s.codes[code]
	delete(s.codes, code)
	if !found || !s.now().Before(lc.expires) {
		return "", "", time.Time{}, false
	}
	id := randomToken()
	expires = s.now().Add(SessionTTL)
	s.sessions[id] = expires
	return id, lc.next, expires, true
}

// Valid reports whether the request carries a live session in the
// X-Acu-Session header. Cookies are never looked at.
func (s *Sessions) Valid(r *http.Request) bool {
	id := r.Header.Get(SessionHeader)
	if id == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.sessions[id]
	return ok && s.now().Before(exp)
}

// SessionRequest is the body of POST /auth/session.
type SessionRequest struct {
	Code string `json:"code"`
}

// SessionResponse answers POST /auth/session: the session to send as
// X-Acu-Session, and the path the login link was made for.
type SessionResponse struct {
	Session   string    `json:"session"`
	Next      string    `json:"next,omitempty"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Exchange is the handler of POST /auth/session: it redeems the code in a
// JSON body {"code":…} and answers with a session. hint tells the user how
// to get a new link ("run `acu open`").
func (s *Sessions) Exchange(hint string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req SessionRequest
		if err := json.NewDecoder(io.LimitReader(r.Body, 4<<10)).Decode(&req); err != nil || req.Code == "" {
			WriteError(w, http.StatusBadRequest, api.CodeInvalid, "code", "body must be {\"code\":\"…\"} with the code of a one-time login link")
			return
		}
		id, next, exp, ok := s.Redeem(req.Code)
		if !ok {
			WriteError(w, http.StatusUnauthorized, api.CodeUnauthorized, "code", "this login link is unknown, used or expired: "+hint)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(SessionResponse{Session: id, Next: next, ExpiresAt: exp.UTC()})
	}
}

// Script serves session.js, the pages' side of the login (GET /session.js).
func Script(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(sessionJS)
}

// Unauthorized answers a request without a valid token or session; hint
// tells a CLI client where the token is and a browser how to log in.
func Unauthorized(w http.ResponseWriter, realm, hint string) {
	w.Header().Set("WWW-Authenticate", fmt.Sprintf("Bearer realm=%q", realm))
	WriteError(w, http.StatusUnauthorized, api.CodeUnauthorized, "", hint)
}

func (s *Sessions) gc() {
	now := s.now()
	for k, v := range s.codes {
		if !now.Before(v.expires) {
			delete(s.codes, k)
		}
	}
	for k, v := range s.sessions {
		if !now.Before(v) {
			delete(s.sessions, k)
		}
	}
}
