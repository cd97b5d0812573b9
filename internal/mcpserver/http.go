package mcpserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// SSERetry is the reconnection delay acu announces on the MCP endpoint's
// event streams.
const SSERetry = 3 * time.Second

// WithSSERetry puts a "retry:" field at the head of every event stream the
// handler answers with, so a client whose stream breaks knows when to
// reconnect (and, with the SDK's event store, resume after the priming
// event's id), as the conformance suite recommends; the SDK writes retry
// only on its close events. The field is written without the blank line
// that ends an event, so it joins the stream's first event (the priming
// event) instead of standing alone.
func WithSSERetry(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&retryWriter{ResponseWriter: w}, r)
	})
}

type retryWriter struct {
	http.ResponseWriter
	wrote bool
}

func (w *retryWriter) WriteHeader(code int) {
	if w.wrote {
		return
	}
	w.wrote = true
	w.ResponseWriter.WriteHeader(code)
	if code == http.StatusOK && strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		_, _ = w.ResponseWriter.Write([]byte("retry: " + strconv.FormatInt(SSERetry.Milliseconds(), 10) + "\n"))
	}
}

func (w *retryWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Flush reaches the real writer through any wrappers in between (the
// server's access log): a Flush that stopped here would leave the stream
// unsent and the client waiting.
func (w *retryWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *retryWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// BindSessions binds every MCP session to the identity that opened it,
// with the SDK's own check: the streamable handler records the TokenInfo's
// UserID when it creates a session and answers 403 to any later request
// for that session whose UserID differs, before anything runs. identity
// names the request's caller (acu's token id, "token-file", "session");
// the caller has already been authenticated by the daemon's middleware,
// so the token itself is not checked again here.
//
// The SDK takes a TokenInfo only from a bearer token's middleware; a
// page's session (X-Acu-Session, no Authorization header) gets a stand-in
// header for that middleware alone, removed before next sees the request.
func BindSessions(next http.Handler, identity func(*http.Request) string) http.Handler {
	restore := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Context().Value(standInKey{}) != nil {
			r.Header.Del("Authorization")
		}
		next.ServeHTTP(w, r)
	})
	verify := auth.RequireBearerToken(func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		id := identity(r)
		if id == "" {
			return nil, fmt.Errorf("%w: the request has no identity", auth.ErrInvalidToken)
		}
		return &auth.TokenInfo{UserID: id}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(restore)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			r = r.Clone(context.WithValue(r.Context(), standInKey{}, true))
			r.Header.Set("Authorization", "Bearer page-session")
		}
		mw := &mismatchWriter{ResponseWriter: w}
		verify.ServeHTTP(mw, r)
		if mw.held { // a 403 without a body
			w.WriteHeader(http.StatusForbidden)
		}
	})
}

type standInKey struct{}

// sdkMismatch is the SDK's answer to a request for another user's session.
const sdkMismatch = "session user mismatch"

// MismatchMessage replaces sdkMismatch: what happened and what to do.
const MismatchMessage = "this MCP session was opened with another token, and a session answers only the token that opened it: " +
	"open a session of your own (initialize without an Mcp-Session-Id header)"

// mismatchWriter holds back a 403 until its body shows whether it is the
// SDK's session-user check, whose terse text it replaces with
// MismatchMessage; any other answer passes unchanged.
type mismatchWriter struct {
	http.ResponseWriter
	held bool
}

func (w *mismatchWriter) WriteHeader(code int) {
	if code == http.StatusForbidden && !w.held {
		w.held = true
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *mismatchWriter) Write(b []byte) (int, error) {
	if !w.held {
		return w.ResponseWriter.Write(b)
	}
	w.held = false
	if strings.TrimSpace(string(b)) == sdkMismatch {
		w.ResponseWriter.WriteHeader(http.StatusForbidden)
		_, err := io.WriteString(w.ResponseWriter, MismatchMessage+"\n")
		return len(b), err
	}
	w.ResponseWriter.WriteHeader(http.StatusForbidden)
	return w.ResponseWriter.Write(b)
}

// Flush reaches the real writer (SSE streams flush through here).
func (w *mismatchWriter) Flush() {
	if w.held {
		w.held = false
		w.ResponseWriter.WriteHeader(http.StatusForbidden)
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *mismatchWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
