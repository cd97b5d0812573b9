package llmtest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/gif"  // decode what clients may send
	_ "image/jpeg" // decode what clients may send
	_ "image/png"  // decode what clients may send
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/secret"
)

// Key is the API key every server expects unless Server.Key is changed;
// Options fills it in. A request with another key gets the provider's 401.
const Key = "sk-llmtest-0123456789abcdef"

// Model is the default model Options sets.
const Model = "llmtest-model"

// Request is a received call, decoded into provider-neutral form.
type Request struct {
	Provider    llm.Provider
	Path        string
	Header      http.Header
	Model       string
	System      string
	Messages    []Message
	MaxTokens   int
	Temperature float64
	TopP        float64
	JSON        bool // response_format json_object / responseMimeType application/json
	// UsageInclude is OpenRouter's usage accounting request,
	// "usage":{"include":true} (OpenAI wire only).
	UsageInclude bool
	Body         []byte // the raw request body
	At           time.Time
}

// Message is one decoded turn. Role is "user" or "assistant" for every
// provider (Gemini's "model" is mapped to "assistant").
type Message struct {
	Role   string
	Text   string
	Images []Image
}

// Image is one received image: the bytes as sent and the decoded picture.
type Image struct {
	MIME  string
	Data  []byte
	Image image.Image
}

// Text returns the last user message's text, which is the question in a
// single-turn call.
func (r Request) Text() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Text
		}
	}
	return ""
}

// Images returns every image in the request, in order.
func (r Request) Images() []Image {
	var out []Image
	for _, m := range r.Messages {
		out = append(out, m.Images...)
	}
	return out
}

// Reply is what the handler answers.
type Reply struct {
	Text      string
	Reasoning string    // sent as reasoning (OpenAI), a thinking block (Anthropic), a thought part (Gemini)
	Usage     llm.Usage // zero: an estimate (4 characters a token, 258 tokens an image, at least 1)
	Model     string    // the model reported; default the one requested
	// CostUSD, when set, is reported as OpenRouter reports a call's cost
	// with usage accounting: usage.cost in credits (US dollars), with
	// cost_details and token details (OpenAI wire only). Nil: no cost, as
	// OpenAI, vLLM and Ollama reply.
	CostUSD *float64
}

// Cost returns a pointer to usd, for Reply.CostUSD.
func Cost(usd float64) *float64 { return &usd }

// Handler answers one decoded request. It runs on the server's goroutine:
// report problems with t.Errorf, not t.Fatalf.
type Handler func(Request) Reply

// Text is a handler that always answers s.
func Text(s string) Handler {
	return func(Request) Reply { return Reply{Text: s} }
}

// Script is a handler that answers the replies in order, then repeats the
// last one: a scripted conversation for agent-loop tests.
func Script(replies ...string) Handler {
	var mu sync.Mutex
	i := 0
	return func(Request) Reply {
		mu.Lock()
		defer mu.Unlock()
		if len(replies) == 0 {
			return Reply{}
		}
		r := replies[min(i, len(replies)-1)]
		i++
		return Reply{Text: r}
	}
}

// FaultKind is what a queued fault does to a request.
type FaultKind int

const (
	// Hang holds the request without answering until the client gives up
	// (or the server closes).
	Hang FaultKind = iota + 1
	// Status answers Fault.Status (default 500) with the provider's error
	// body carrying Fault.Message, and a Retry-After header when set.
	Status
	// RateLimit answers 429 with Retry-After (default "1").
	RateLimit
	// Malformed answers 200 with a truncated, invalid JSON body.
	Malformed
	// Empty answers 200 with no choices (OpenAI), no candidates (Gemini),
	// or an empty content array (Anthropic, where that is a valid reply).
	Empty
	// Slow answers the handler's normal reply one byte every Fault.Delay
	// (default 20 ms), flushing each byte.
	Slow
	// Raw answers Fault.Status (default 200) with Fault.Body verbatim as
	// application/json.
	Raw
)

// Fault is queued with Server.Fail; each applies to the next Times requests.
type Fault struct {
	Kind       FaultKind
	Status     int
	Message    string
	RetryAfter string // seconds or an HTTP date
	Delay      time.Duration
	Body       string
	Times      int // 0 means 1; negative means every request until Clear
}

// Server is a fake provider endpoint.
type Server struct {
	// URL is the base URL a client takes: up to and including /v1 for
	// OpenAI; the server root for Anthropic and Gemini.
	URL      string
	Provider llm.Provider

	t         testing.TB
	hs        *httptest.Server
	closing   chan struct{}
	closeOnce sync.Once

	mu      sync.Mutex
	key     string
	handler Handler
	faults  []Fault
	reqs    []Request
	calls   int
	seq     int
}

// NewOpenAI starts an OpenAI-compatible chat completions server.
func NewOpenAI(t testing.TB, h Handler) *Server { return New(t, llm.OpenAI, h) }

// NewAnthropic starts an Anthropic Messages server.
func NewAnthropic(t testing.TB, h Handler) *Server { return New(t, llm.Anthropic, h) }

// NewGemini starts a Gemini generateContent server.
func NewGemini(t testing.TB, h Handler) *Server { return New(t, llm.Gemini, h) }

// New starts a server speaking provider's wire format; a nil handler answers
// "YES". The server is closed in t.Cleanup (hung requests are released).
func New(t testing.TB, provider llm.Provider, h Handler) *Server {
	t.Helper()
	switch provider {
	case llm.OpenAI, llm.Anthropic, llm.Gemini:
	default:
		t.Fatalf("llmtest.New: unknown provider %q", provider)
	}
	s := &Server{Provider: provider, t: t, key: Key, handler: h, closing: make(chan struct{})}
	s.hs = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.hs.URL
	if provider == llm.OpenAI {
		s.URL += "/v1"
	}
	t.Cleanup(s.Close)
	return s
}

// Close releases hung requests, drops connections and stops the server; it
// runs in t.Cleanup and may be called earlier to simulate an endpoint going
// away.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.closing)
		s.hs.CloseClientConnections()
		s.hs.Close()
	})
}

// Options returns client options aimed at this server: provider, base URL,
// Model, Key, and a short per-attempt timeout with quick retries.
func (s *Server) Options() llm.Options {
	return llm.Options{
		Provider:  s.Provider,
		BaseURL:   s.URL,
		Model:     Model,
		APIKey:    secret.String(s.Key()),
		Timeout:   10 * time.Second,
		RetryBase: 10 * time.Millisecond,
		Name:      "test",
	}
}

// Client returns a client for this server built from Options, with adjust
// applied first (nil: none); it fails the test if New does.
func (s *Server) Client(t testing.TB, adjust func(*llm.Options)) *llm.Client {
	t.Helper()
	o := s.Options()
	if adjust != nil {
		adjust(&o)
	}
	c, err := llm.New(o)
	if err != nil {
		t.Fatalf("llmtest: llm.New: %v", err)
	}
	return c
}

// Key returns the key the server expects.
func (s *Server) Key() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.key
}

// SetKey changes the expected key; "" accepts requests without auth.
func (s *Server) SetKey(k string) {
	s.mu.Lock()
	s.key = k
	s.mu.Unlock()
}

// SetHandler replaces the handler.
func (s *Server) SetHandler(h Handler) {
	s.mu.Lock()
	s.handler = h
	s.mu.Unlock()
}

// Fail queues faults for the next requests, in order.
func (s *Server) Fail(faults ...Fault) {
	s.mu.Lock()
	s.faults = append(s.faults, faults...)
	s.mu.Unlock()
}

// Clear drops queued faults.
func (s *Server) Clear() {
	s.mu.Lock()
	s.faults = nil
	s.mu.Unlock()
}

// Calls returns how many HTTP requests arrived (including faulted and
// rejected ones).
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Requests returns the well-formed requests received (whatever their key),
// in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Last returns the last well-formed request (zero if none).
func (s *Server) Last() Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) == 0 {
		return Request{}
	}
	return s.reqs[len(s.reqs)-1]
}

// nextFault pops the fault for this request, if any.
func (s *Server) nextFault() (Fault, bool) {
	if len(s.faults) == 0 {
		return Fault{}, false
	}
	f := &s.faults[0]
	out := *f
	switch {
	case f.Times < 0:
	case f.Times <= 1:
		s.faults = s.faults[1:]
	default:
		f.Times--
	}
	return out, true
}

// protocol is one provider's server side.
type protocol interface {
	auth(h http.Header, key string) (status int, why string) // status 0: accepted
	decode(r *http.Request, body []byte) (Request, error)
	reply(req *Request, rep Reply, id int) []byte
	empty(req *Request, id int) []byte
	errorBody(status int, msg string) []byte
}

func (s *Server) proto() protocol {
	switch s.Provider {
	case llm.Anthropic:
		return anthropicProto{}
	case llm.Gemini:
		return geminiProto{}
	}
	return openAIProto{}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	p := s.proto()
	s.mu.Lock()
	s.calls++
	s.seq++
	id := s.seq
	key := s.key
	s.mu.Unlock()

	body, err := readAll(r)
	if err != nil {
		// A client that gives up mid-request (a cancelled wait, a timeout)
		// cuts its body short: that is the client's right, not a fault.
		if errors.Is(err, io.ErrUnexpectedEOF) || r.Context().Err() != nil {
			return
		}
		s.t.Errorf("llmtest %s: read request body: %v", s.Provider, err)
		return
	}
	if r.Method != http.MethodPost {
		s.reject(w, p, http.StatusMethodNotAllowed, fmt.Sprintf("method %s: want POST", r.Method))
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		s.reject(w, p, http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type %q: want application/json", ct))
		return
	}
	req, err := p.decode(r, body)
	if err != nil {
		s.reject(w, p, http.StatusBadRequest, err.Error())
		return
	}
	req.Provider, req.Path, req.Header, req.Body, req.At = s.Provider, r.URL.Path, r.Header.Clone(), body, time.Now()

	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	if key != "" {
		if code, why := p.auth(r.Header, key); code != 0 {
			// Not a wire-format error: tests send wrong keys on purpose.
			writeJSON(w, code, p.errorBody(code, why), "")
			return
		}
	}
	s.mu.Lock()
	fault, faulted := s.nextFault()
	handler := s.handler
	s.mu.Unlock()

	if faulted {
		switch fault.Kind {
		case Hang:
			select {
			case <-r.Context().Done():
			case <-s.closing:
			}
			return
		case Status, RateLimit:
			code := fault.Status
			if code == 0 {
				code = http.StatusInternalServerError
				if fault.Kind == RateLimit {
					code = http.StatusTooManyRequests
				}
			}
			ra := fault.RetryAfter
			if fault.Kind == RateLimit && ra == "" {
				ra = "1"
			}
			msg := fault.Message
			if msg == "" {
				msg = strings.ToLower(http.StatusText(code))
			}
			writeJSON(w, code, p.errorBody(code, msg), ra)
			return
		case Malformed:
			writeJSON(w, http.StatusOK, []byte(`{"id":"x","choices":[{"message":{"content":"YE`), "")
			return
		case Empty:
			writeJSON(w, http.StatusOK, p.empty(&req, id), "")
			return
		case Raw:
			code := fault.Status
			if code == 0 {
				code = http.StatusOK
			}
			writeJSON(w, code, []byte(fault.Body), fault.RetryAfter)
			return
		case Slow:
			s.writeSlow(w, r, p.reply(&req, s.answer(handler, &req), id), fault.Delay)
			return
		}
	}
	writeJSON(w, http.StatusOK, p.reply(&req, s.answer(handler, &req), id), "")
}

func (s *Server) answer(h Handler, req *Request) Reply {
	rep := Reply{Text: "YES"}
	if h != nil {
		rep = h(*req)
	}
	if rep.Model == "" {
		rep.Model = req.Model
	}
	if rep.Usage == (llm.Usage{}) {
		rep.Usage = estimate(req, rep)
	}
	return rep
}

// estimate is the usage reported when the handler gives none.
func estimate(req *Request, rep Reply) llm.Usage {
	in := len(req.System)
	images := 0
	for _, m := range req.Messages {
		in += len(m.Text)
		images += len(m.Images)
	}
	return llm.Usage{InputTokens: in/4 + 258*images + 1, OutputTokens: (len(rep.Text)+len(rep.Reasoning))/4 + 1}
}

// reject answers a wire-format violation with the provider's 400 and fails
// the test: acu's clients must never send one.
func (s *Server) reject(w http.ResponseWriter, p protocol, code int, msg string) {
	s.t.Errorf("llmtest %s: bad request: %s", s.Provider, msg)
	writeJSON(w, code, p.errorBody(code, msg), "")
}

func (s *Server) writeSlow(w http.ResponseWriter, r *http.Request, body []byte, delay time.Duration) {
	if delay <= 0 {
		delay = 20 * time.Millisecond
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	t := time.NewTicker(delay)
	defer t.Stop()
	for i := range body {
		if _, err := w.Write(body[i : i+1]); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		case <-s.closing:
			return
		}
	}
}

func writeJSON(w http.ResponseWriter, code int, body []byte, retryAfter string) {
	w.Header().Set("Content-Type", "application/json")
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

func readAll(r *http.Request) ([]byte, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(r.Body)
	return b.Bytes(), err
}

// decodeImage checks that data is an image of the declared type and decodes it.
func decodeImage(mime string, data []byte) (Image, error) {
	switch mime {
	case "image/jpeg", "image/png", "image/gif":
	default:
		return Image{}, fmt.Errorf("image media type %q: want image/jpeg or image/png", mime)
	}
	img, format, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return Image{}, fmt.Errorf("image declared %s does not decode: %v", mime, err)
	}
	if "image/"+format != mime {
		return Image{}, fmt.Errorf("image declared %s is %s", mime, format)
	}
	return Image{MIME: mime, Data: data, Image: img}, nil
}

// strictJSON decodes body into v, refusing unknown fields and trailing data.
func strictJSON(body []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("request body: %v", err)
	}
	if d.More() {
		return fmt.Errorf("request body: trailing data after the JSON object")
	}
	return nil
}

// decodeBase64 decodes standard base64 as every provider sends it.
func decodeBase64(s string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("image data is not standard base64: %v", err)
	}
	return b, nil
}
