package agent

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
)

// originShapes gives the panel protocol's clients (seed 002's panel.html,
// unchanged) the answer shapes of the origin engine, beside acu's own: an
// error answer {"error":{code,message,field}} also carries "ok": false and
// "err": the message, which the origin panel shows. Success answers carry
// "ok": true where their handlers write one. acu's own clients read the
// fields they always read.
func originShapes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ow := &originWriter{ResponseWriter: w}
		next.ServeHTTP(ow, r)
		ow.finish()
	})
}

// originWriter passes success answers through and holds back error answers
// (small JSON bodies) to add the origin's fields.
type originWriter struct {
	http.ResponseWriter
	status int // the held-back error status; 0 while passing through
	body   bytes.Buffer
}

func (w *originWriter) WriteHeader(code int) {
	if code >= 400 && w.status == 0 {
		w.status = code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *originWriter) Write(b []byte) (int, error) {
	if w.status != 0 {
		return w.body.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *originWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *originWriter) finish() {
	if w.status == 0 {
		return
	}
	b := withOriginError(w.body.Bytes())
	h := w.ResponseWriter.Header()
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.ResponseWriter.WriteHeader(w.status)
	_, _ = w.ResponseWriter.Write(b)
}

// withOriginError adds "ok": false and "err" to acu's error body; any other
// body is returned as it is.
func withOriginError(b []byte) []byte {
	var body map[string]json.RawMessage
	if json.Unmarshal(b, &body) != nil || body["error"] == nil {
		return b
	}
	var detail struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body["error"], &detail) != nil {
		return b
	}
	body["ok"] = json.RawMessage("false")
	msg, _ := json.Marshal(detail.Message)
	body["err"] = msg
	out, err := json.Marshal(body)
	if err != nil {
		return b
	}
	return append(out, '\n')
}
