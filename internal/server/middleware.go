package server

import (
	"crypto/subtle"
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

// checkHost refuses requests whose Host header is not a loopback name or
// address or one configured explicitly: the DNS-rebinding defence.
func (s *Server) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hostAllowed(r.Host) {
			writeError(w, r, errForbidden("Host %q is not allowed: use 127.0.0.1 or localhost, or add the name to ACU_ALLOWED_HOSTS", r.Host))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) hostAllowed(hostport string) bool {
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
	for _, a := range s.opts.AllowedHosts {
		if strings.EqualFold(a, h) {
			return true
		}
	}
	// A daemon bound to a specific non-loopback address answers to it.
	return s.opts.ListenHost != "" && strings.EqualFold(strings.Trim(s.opts.ListenHost, "[]"), h)
}

// checkOrigin refuses requests that carry a foreign Origin (or, without
// Origin, a foreign Referer): a web page on another site must never reach
// a daemon that moves the mouse. Requests without either (CLI, agents) pass.
func (s *Server) checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" {
			if !s.sameOrigin(o, r) {
				writeError(w, r, errForbidden("cross-origin request from %q refused", o))
				return
			}
		} else if ref := r.Header.Get("Referer"); ref != "" && !s.sameOrigin(ref, r) {
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

func (s *Server) sameOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, r.Host) && s.hostAllowed(u.Host)
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
