package mcpserver

import (
	"net/http"
	"strconv"
	"strings"
	"time"
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
