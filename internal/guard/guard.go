// Package guard holds the defences every acu HTTP listener shares (the
// daemon's API, the relay, the agent's panel): the Host check against DNS
// rebinding, the Origin check against cross-site requests, security headers,
// and acu's JSON error body. Authentication stays with each listener.
package guard

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/acu-dev/acu/internal/api"
)

// Guard holds the browser-facing defences every acu listener shares (the
// daemon's API, the relay, the agent panel): the Host check against DNS
// rebinding and the Origin check against cross-site requests.
type Guard struct {
	AllowedHosts []string // extra Host names besides loopback ones
	ListenHost   string   // the configured listen host, accepted as a Host too
}

// Wrap applies the Host and Origin checks and the security headers to next.
func (g Guard) Wrap(next http.Handler) http.Handler {
	return SecureHeaders(g.checkHost(g.checkOrigin(next)))
}

// checkHost refuses requests whose Host header is not a loopback name or
// address or one configured explicitly: the DNS-rebinding defence.
func (g Guard) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.HostAllowed(r.Host) {
			forbid(w, fmt.Sprintf("Host %q is not allowed: use 127.0.0.1 or localhost, or add the name to ACU_ALLOWED_HOSTS", r.Host))
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
				forbid(w, fmt.Sprintf("cross-origin request from %q refused", o))
				return
			}
		} else if ref := r.Header.Get("Referer"); ref != "" && !g.sameOrigin(ref, r) {
			forbid(w, "request referred by a foreign page refused")
			return
		}
		if fs := r.Header.Get("Sec-Fetch-Site"); fs == "cross-site" {
			forbid(w, "cross-site request refused")
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
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(api.ErrorBody{Error: api.ErrorDetail{Code: code, Message: message, Field: field}})
}

func forbid(w http.ResponseWriter, msg string) {
	WriteError(w, http.StatusForbidden, api.CodeForbidden, "", msg)
}

// SecureHeaders sets the headers every answer of an acu listener carries:
// no sniffing, no framing, no referrer, a strict CSP, no caching.
func SecureHeaders(next http.Handler) http.Handler {
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
