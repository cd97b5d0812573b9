package server

import (
	"crypto/subtle"
	"github.com/acu-dev/acu/internal/api"
	"log/slog"
	"net"
	"net/http"
	"net/url"
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

// Guard holds the browser-facing defences every acu listener shares (the
// daemon's API, the relay, the agent panel): the Host check against DNS
// rebinding and the Origin check against cross-site requests.
type Guard struct {
	AllowedHosts []string // extra Host names besides loopback ones
	ListenHost   string   // the configured listen host, accepted as a Host too
}

// Wrap applies the Host and Origin checks and the security headers to next.
func (g Guard) Wrap(next http.Handler) http.Handler {
	return secureHeaders(g.checkHost(g.checkOrigin(next)))
}

// checkHost refuses requests whose Host header is not a loopback name or
// address or one configured explicitly: the DNS-rebinding defence.
func (g Guard) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.HostAllowed(r.Host) {
			writeError(w, r, errForbidden("Host %q is not allowed: use 127.0.0.1 or localhost, or add the name to ACU_ALLOWED_HOSTS", r.Host))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// HostAllowed reports whether a Host header value may reach this listener.
func (g Guard) HostAllowed(hostport string) bool {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	h = strings.ToLower(strings.Trim(h, "[]"))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return true
	}
	for _, a := range g.AllowedHosts {
		if strings.EqualFold(a, h) {
			return true
		}
	}
	// A listener bound to a specific non-loopback address answers to it.
	return g.ListenHost != "" && strings.EqualFold(strings.Trim(g.ListenHost, "[]"), h)
}

// checkOrigin refuses requests that carry a foreign Origin (or, without
// Origin, a foreign Referer): a web page on another site must never reach
// a daemon that moves the mouse. Requests without either (CLI, agents) pass.
func (g Guard) checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" {
			if !g.sameOrigin(o, r) {
				writeError(w, r, errForbidden("cross-origin request from %q refused", o))
				return
			}
		} else if ref := r.Header.Get("Referer"); ref != "" && !g.sameOrigin(ref, r) {
			writeError(w, r, errForbidden("request referred by a foreign page refused"))
			return
		}
		if fs := r.Header.Get("Sec-Fetch-Site"); fs == "cross-site" {
			writeError(w, r, errForbidden("cross-site request refused"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (g Guard) sameOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, r.Host) && g.HostAllowed(u.Host)
}

// WriteError writes acu's JSON error body ({"error":{code,message,field}})
// with the given status, for listeners outside this package.
func WriteError(w http.ResponseWriter, status int, code, field, message string) {
	writeJSON(w, status, api.ErrorBody{Error: api.ErrorDetail{Code: code, Message: message, Field: field}})
}

// authenticate requires the bearer token or a valid session cookie.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.authorized(r) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="acu"`)
		writeError(w, r, errUnauthorized("missing or wrong token: send Authorization: Bearer <token> (the token is in %s)", s.opts.TokenHint))
	})
}

func (s *Server) authorized(r *http.Request) bool {
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		got := strings.TrimPrefix(h, "Bearer ")
		return subtle.ConstantTimeCompare([]byte(got), []byte(s.opts.Token.Reveal())) == 1
	}
	if c, err := r.Cookie(sessionCookie); err == nil {
		return s.sessions.valid(c.Value)
	}
	return false
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

// secureHeaders sets headers every answer carries.
func secureHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}
