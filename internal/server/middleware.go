package server

import (
	"context"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/guard"
	"github.com/acu-dev/acu/internal/runs"
)

// statusWriter records the status code for the access log. It keeps
// http.ResponseController working through Unwrap (SSE needs Flush).
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// accessLog logs each request at Debug (Info for errors). It never logs
// query strings, which may carry one-time codes.
func (s *Server) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		lvl := slog.LevelDebug
		if sw.status >= 400 && sw.status != http.StatusNotFound {
			lvl = slog.LevelInfo
		}
		s.log.Log(r.Context(), lvl, "http request", "method", r.Method, "path", r.URL.Path,
			"status", sw.status, "bytes", sw.bytes, "duration_ms", time.Since(start).Milliseconds())
	})
}

// Guard is guard.Guard, kept here for callers written before the guard
// package existed.
type Guard = guard.Guard

// WriteError writes acu's JSON error body; see guard.WriteError.
func WriteError(w http.ResponseWriter, status int, code, field, message string) {
	guard.WriteError(w, status, code, field, message)
}

// authenticate requires a token with at least scope, or a page's session
// (X-Acu-Session, from a one-time login link, which only an admin can
// mint: it has every scope). Cookies count for nothing.
func (s *Server) authenticate(scope string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who, ok := s.authorized(r)
		has := who.Scope
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="acu"`)
			writeError(w, r, errUnauthorized("missing or wrong token: send Authorization: Bearer <token> (the token is in %s); in a browser, %s", s.opts.TokenHint, loginHint))
			return
		}
		if api.ScopeRank(has) < api.ScopeRank(scope) {
			writeError(w, r, newErr(http.StatusForbidden, api.CodeScope, "",
				"%s %s needs a token with scope %s; this token has scope %s: use the daemon's token (%s) or create one with `acu token create --scope %s`",
				r.Method, r.URL.Path, scope, has, s.opts.TokenHint, scope))
			return
		}
		// A revoked token's open requests end (holdToken).
		r, release := s.holdToken(r, who)
		defer release()
		ctx := context.WithValue(r.Context(), principalKey{}, who)
		// Runs this request starts record who started them: that token may
		// cancel or change them without the act scope.
		ctx = runs.WithCreator(ctx, who.ID)
		// Every effect this request causes is audited with who asked.
		client := strings.TrimSpace(r.Header.Get(api.HeaderClient))
		if len(client) > 64 {
			client = client[:64]
		}
		engine := "api"
		if strings.HasPrefix(r.URL.Path, "/mcp") {
			engine = "mcp"
		}
		ctx = gate.WithCaller(ctx, gate.Caller{Token: who.String(), Engine: engine, Client: client})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// Principal is who a request authenticated as: the daemon's token file,
// a page session, or an extra token (acu token create).
type Principal struct {
	ID    string // "token-file", "session", or the token's id
	Name  string // an extra token's name
	Scope string // api.ScopeRead, ScopeAct or ScopeAdmin

	revocable bool // an extra token: its open requests end when it is revoked
}

func (p Principal) String() string {
	if p.Name != "" {
		return p.ID + " (" + p.Name + ")"
	}
	return p.ID
}

// authorized returns who the request is: admin for the daemon's token and
// for page sessions, an extra token's own scope otherwise.
func (s *Server) authorized(r *http.Request) (Principal, bool) {
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		got := strings.TrimPrefix(h, "Bearer ")
		if subtle.ConstantTimeCompare([]byte(got), []byte(s.opts.Token.Reveal())) == 1 {
			return Principal{ID: "token-file", Scope: api.ScopeAdmin}, true
		}
		if s.opts.LookupToken != nil && got != "" {
			p, ok := s.opts.LookupToken(r.Context(), got)
			p.revocable = ok
			return p, ok
		}
		return Principal{}, false
	}
	if s.sessions.Valid(r) {
		return Principal{ID: "session", Scope: api.ScopeAdmin}, true
	}
	return Principal{}, false
}

type principalKey struct{}

// PrincipalOf is who a request authenticated as (zero outside
// authenticate), for handlers and for routes mounted through Options.Extra.
func PrincipalOf(ctx context.Context) Principal {
	p, _ := ctx.Value(principalKey{}).(Principal)
	return p
}

// limitBody caps request bodies; the JSON decoder turns an overflow into 413.
func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > s.opts.MaxBody {
			writeError(w, r, errTooLarge(s.opts.MaxBody))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBody)
		next.ServeHTTP(w, r)
	})
}
