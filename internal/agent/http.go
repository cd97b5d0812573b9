package agent

import (
	"bytes"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/guard"
)

//go:embed web
var webFS embed.FS

// loginHint tells a browser user how to get a new panel link.
const loginHint = "POST /auth/link with the token, or restart `acu agent`, for a new one-time link"

// Handler returns the agent's HTTP surface: GET / (the panel), GET /config,
// GET /state, POST /inject, POST /annotated, POST /control, and the login
// routes, behind Guard's Host/Origin checks and the token. The panel page
// and its files are static and open; the page logs in with the code of a
// one-time link (guard.Sessions) and sends its session as X-Acu-Session.
func (a *Agent) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /config", a.handleConfig)
	mux.HandleFunc("GET /state", a.handleState)
	mux.HandleFunc("POST /inject", a.handleInject)
	mux.HandleFunc("POST /annotated", a.handleAnnotated)
	mux.HandleFunc("POST /control", a.handleControl)
	mux.HandleFunc("POST /auth/link", a.handleLoginLink)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		guard.WriteError(w, http.StatusNotFound, "not_found", "", fmt.Sprintf("no route %s %s: see docs/agent.md for the agent's endpoints", r.Method, r.URL.Path))
	})
	outer := http.NewServeMux()
	sub, _ := fs.Sub(webFS, "web")
	files := http.FileServerFS(sub)
	outer.HandleFunc("GET /{$}", a.handlePanel)
	outer.Handle("GET /panel.js", files)
	outer.Handle("GET /panel.css", files)
	outer.Handle("GET /origin-shim.js", files)
	outer.HandleFunc(guard.ScriptPattern, guard.Script)
	outer.Handle(guard.ExchangePattern, a.sessions.Exchange(loginHint))
	outer.Handle("/", a.auth(mux))
	return originShapes(a.opts.Guard.Wrap(a.limit(outer)))
}

func (a *Agent) limit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, a.opts.MaxBody)
		next.ServeHTTP(w, r)
	})
}

// auth requires the bearer token or a page's session (X-Acu-Session) from a
// one-time login link. Cookies count for nothing.
func (a *Agent) auth(next http.Handler) http.Handler {
	if !a.opts.Token.Set() {
		return next
	}
	want := []byte(a.opts.Token.Reveal())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && subtle.ConstantTimeCompare([]byte(h), want) == 1 {
			next.ServeHTTP(w, r)
			return
		}
		if a.sessions.Valid(r) {
			next.ServeHTTP(w, r)
			return
		}
		guard.Unauthorized(w, "acu-agent",
			"missing or wrong token: send Authorization: Bearer <token> (the daemon's token file); in a browser, open the one-time panel link `acu agent` prints, or "+loginHint)
	})
}

// ownPanelHead goes at the head of a panel page of the user's own: acu's
// login, then the shim that gives the page's fetch calls the session.
const ownPanelHead = `<script src="/session.js"></script><script src="/origin-shim.js"></script>`

func (a *Agent) handlePanel(w http.ResponseWriter, r *http.Request) {
	if a.opts.PanelFile != "" {
		b, err := os.ReadFile(a.opts.PanelFile)
		if err != nil {
			guard.WriteError(w, http.StatusInternalServerError, "internal", "", "read ACU_AGENT_PANEL_FILE: "+err.Error())
			return
		}
		page := string(b)
		if i := strings.Index(strings.ToLower(page), "<head>"); i >= 0 {
			page = page[:i+len("<head>")] + ownPanelHead + page[i+len("<head>"):]
		} else {
			page = ownPanelHead + page
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		// The user's own page may carry inline scripts and styles: allowed
		// for it alone, still nothing from another origin.
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write([]byte(page))
		return
	}
	b, err := webFS.ReadFile("web/panel.html")
	if err != nil {
		guard.WriteError(w, http.StatusInternalServerError, "internal", "", "panel missing from the build")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}

// ConfigResponse is GET /config.
type ConfigResponse struct {
	UI            any    `json:"ui"`
	CaptureWidth  int    `json:"capture_width"`
	CaptureHeight int    `json:"capture_height"`
	Annotator     string `json:"annotator"`
	Crop          [4]int `json:"crop"`
	Physical      bool   `json:"physical"`
}

func (a *Agent) handleConfig(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, ConfigResponse{UI: a.opts.UI, CaptureWidth: a.opts.CaptureWidth, CaptureHeight: a.opts.CaptureHeight,
		Annotator: a.opts.Annotator, Crop: a.opts.Crop, Physical: a.opts.Physical})
}

// handleState serves the state; ?images=0 leaves the PNGs out (cheap polls),
// ?since=<msg_id> too when nothing changed since that message.
func (a *Agent) handleState(w http.ResponseWriter, r *http.Request) {
	st := a.State()
	q := r.URL.Query()
	if q.Get("images") == "0" || (q.Get("since") != "" && q.Get("since") == fmt.Sprint(st.MsgID)) {
		st.RawPNG, st.AnnotatedPNG = nil, nil
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, st)
}

// InjectRequest is POST /inject.
type InjectRequest struct {
	VLMText string `json:"vlm_text"`
}

func (a *Agent) handleInject(w http.ResponseWriter, r *http.Request) {
	var req InjectRequest
	if !decode(w, r, &req) {
		return
	}
	if strings.TrimSpace(req.VLMText) == "" {
		guard.WriteError(w, http.StatusBadRequest, "invalid", "vlm_text", "vlm_text: want the model output to run, e.g. {\"observation\":\"...\",\"actions\":[...]}")
		return
	}
	select {
	case a.inbox <- req.VLMText:
		writeJSON(w, http.StatusAccepted, map[string]any{"ok": true, "queued": true})
	default:
		guard.WriteError(w, http.StatusConflict, "busy", "", "an injected output is already waiting to run: try again after the current turn")
	}
}

// AnnotatedRequest is POST /annotated.
type AnnotatedRequest struct {
	Seq      int    `json:"seq"`
	ImageB64 string `json:"image_b64"`
}

func (a *Agent) handleAnnotated(w http.ResponseWriter, r *http.Request) {
	var req AnnotatedRequest
	if !decode(w, r, &req) {
		return
	}
	st := a.State()
	if st.Phase != PhaseWaitingAnnotated || req.Seq != st.PendingSeq {
		guard.WriteError(w, http.StatusConflict, "seq_mismatch", "seq",
			fmt.Sprintf("seq %d does not match: the engine is %s and expects pending_seq %d", req.Seq, st.Phase, st.PendingSeq))
		return
	}
	data := req.ImageB64
	if i := strings.Index(data, ";base64,"); i >= 0 && strings.HasPrefix(data, "data:") {
		data = data[i+len(";base64,"):]
	}
	img, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		guard.WriteError(w, http.StatusBadRequest, "invalid", "image_b64", "image_b64: not base64 (send the PNG as standard base64 or a data: URL)")
		return
	}
	if _, err := png.DecodeConfig(bytes.NewReader(img)); err != nil {
		guard.WriteError(w, http.StatusBadRequest, "invalid", "image_b64", "image_b64: not a PNG image")
		return
	}
	select {
	case a.annotated <- annotation{seq: req.Seq, png: img}:
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "seq": req.Seq})
	case <-r.Context().Done():
	case <-time.After(5 * time.Second):
		guard.WriteError(w, http.StatusConflict, "seq_mismatch", "seq", "the engine stopped waiting for this seq")
	}
}

// ControlRequest is POST /control.
type ControlRequest struct {
	Action string `json:"action"` // pause, resume, step, stop
}

func (a *Agent) handleControl(w http.ResponseWriter, r *http.Request) {
	var req ControlRequest
	if !decode(w, r, &req) {
		return
	}
	switch req.Action {
	case "pause", "resume", "step", "stop":
	default:
		guard.WriteError(w, http.StatusBadRequest, "invalid", "action", "action: want pause, resume, step or stop")
		return
	}
	// Pause state is visible at once; the loop applies it at its next gate.
	a.mu.Lock()
	switch req.Action {
	case "pause":
		a.st.Paused = true
	case "resume":
		a.st.Paused = false
	}
	a.mu.Unlock()
	select {
	case a.control <- req.Action:
		writeJSON(w, http.StatusAccepted, map[string]any{"ok": true, "action": req.Action})
	default:
		guard.WriteError(w, http.StatusConflict, "busy", "", "too many controls pending: try again")
	}
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			guard.WriteError(w, http.StatusRequestEntityTooLarge, "too_large", "", fmt.Sprintf("request body over %d bytes", mbe.Limit))
			return false
		}
		guard.WriteError(w, http.StatusBadRequest, "invalid", "", "request body: want a JSON object: "+err.Error())
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// LoginURL returns a one-time URL (valid guard.LoginCodeTTL) that opens the
// panel in a browser; base is the listener's URL, such as
// "http://127.0.0.1:1234". Its code is in the fragment: the panel swaps it
// for a session of its own.
func (a *Agent) LoginURL(base string) string {
	u, _ := a.sessions.LoginURL(base, "")
	return u
}

func (a *Agent) handleLoginLink(w http.ResponseWriter, r *http.Request) {
	u, exp := a.sessions.LoginURL("http://"+r.Host, "")
	writeJSON(w, http.StatusOK, map[string]any{"url": u, "expires_at": exp.UTC()})
}
