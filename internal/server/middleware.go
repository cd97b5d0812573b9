package server

import (
	"crypto/subtle"
	"github.com/acu-dev/acu/internal/guard"
	"log/slog"
	"net/http"
	"strings"
	"time"
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

// authenticate requires the bearer token or a page's session
// (X-Acu-Session, from a one-time login link). Cookies count for nothing.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.authorized(r) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="acu"`)
		writeError(w, r, errUnauthorized("missing or wrong token: send Authorization: Bearer <token> (the token is in %s); in a browser, %s", s.opts.TokenHint, loginHint))
	})
}

func (s *Server) authorized(r *http.Request) bool {
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		got := strings.TrimPrefix(h, "Bearer ")
		return subtle.ConstantTimeCompare([]byte(got), []byte(s.opts.Token.Reveal())) == 1
	}
	return s.sessions.Valid(r)
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
