package llmtest_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/llm/llmtest"
)

// recordingTB captures the fake's complaints instead of failing the test.
type recordingTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

func (r *recordingTB) errors() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.errs, "\n")
}

func post(t *testing.T, url string, hdr map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestRejectsWireViolations: requests a real provider would refuse fail the
// test that sent them, with a message naming the problem.
func TestRejectsWireViolations(t *testing.T) {
	png1 := pngB64(t)
	tests := []struct {
		name     string
		provider llm.Provider
		path     string
		hdr      map[string]string
		body     string
		want     string
	}{
		{"openai wrong path", llm.OpenAI, "/v1/completions", nil, `{"model":"m","messages":[{"role":"user","content":"q"}]}`, "want /v1/chat/completions"},
		{"openai unknown field", llm.OpenAI, "/v1/chat/completions", nil, `{"model":"m","messages":[{"role":"user","content":"q"}],"max_token":5}`, `unknown field "max_token"`},
		{"openai late system", llm.OpenAI, "/v1/chat/completions", nil, `{"model":"m","messages":[{"role":"user","content":"q"},{"role":"system","content":"s"}]}`, "system message after the first"},
		{"openai image not a data URI", llm.OpenAI, "/v1/chat/completions", nil, `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"http://x/a.png"}}]}]}`, "not a data: URI"},
		{"openai image wrong type", llm.OpenAI, "/v1/chat/completions", nil, `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,` + png1 + `"}}]}]}`, "declared image/jpeg is png"},
		{"anthropic no version", llm.Anthropic, "/v1/messages", nil, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"q"}]}`, "anthropic-version"},
		{"anthropic no max_tokens", llm.Anthropic, "/v1/messages", map[string]string{"anthropic-version": "2023-06-01"}, `{"model":"m","messages":[{"role":"user","content":"q"}]}`, "max_tokens"},
		{"anthropic system role", llm.Anthropic, "/v1/messages", map[string]string{"anthropic-version": "2023-06-01"}, `{"model":"m","max_tokens":5,"messages":[{"role":"system","content":"q"}]}`, "system goes top-level"},
		{"anthropic empty text block", llm.Anthropic, "/v1/messages", map[string]string{"anthropic-version": "2023-06-01"}, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`, "must be non-empty"},
		{"gemini key in query", llm.Gemini, "/v1beta/models/m:generateContent?key=k", nil, `{"contents":[{"role":"user","parts":[{"text":"q"}]}]}`, "x-goog-api-key"},
		{"gemini bad role", llm.Gemini, "/v1beta/models/m:generateContent", nil, `{"contents":[{"role":"assistant","parts":[{"text":"q"}]}]}`, `role "assistant"`},
		{"gemini bad base64", llm.Gemini, "/v1beta/models/m:generateContent", nil, `{"contents":[{"parts":[{"inline_data":{"mime_type":"image/png","data":"!!"}}]}]}`, "not standard base64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recordingTB{TB: t}
			srv := llmtest.New(rec, tt.provider, nil)
			base := strings.TrimSuffix(srv.URL, "/v1")
			hdr := map[string]string{"Content-Type": "application/json"}
			for k, v := range tt.hdr {
				hdr[k] = v
			}
			code, body := post(t, base+tt.path, hdr, tt.body)
			if code/100 != 4 {
				t.Errorf("status = %d, want 4xx; body %s", code, body)
			}
			if !strings.Contains(rec.errors(), tt.want) {
				t.Errorf("fake reported %q, want it to mention %q", rec.errors(), tt.want)
			}
			if len(srv.Requests()) != 0 || srv.Calls() != 1 {
				t.Errorf("requests = %d, calls = %d, want 0, 1", len(srv.Requests()), srv.Calls())
			}
		})
	}
}

func pngB64(t *testing.T) string {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// TestGeminiCamelCase: Gemini's REST API takes inlineData/mimeType too.
func TestGeminiCamelCase(t *testing.T) {
	srv := llmtest.NewGemini(t, nil)
	code, body := post(t, srv.URL+"/v1beta/models/gemini-2.0-flash:generateContent",
		map[string]string{"Content-Type": "application/json", "x-goog-api-key": llmtest.Key},
		`{"contents":[{"parts":[{"inlineData":{"mimeType":"image/png","data":"`+pngB64(t)+`"}},{"text":"q"}]}]}`)
	if code != 200 || !strings.Contains(body, `"candidates"`) {
		t.Fatalf("status %d body %s, want a candidate", code, body)
	}
	last := srv.Last()
	if len(last.Images()) != 1 || last.Images()[0].Image.Bounds().Dx() != 4 || last.Text() != "q" || last.Model != "gemini-2.0-flash" {
		t.Errorf("decoded %+v, want one 4x4 image, text q, model gemini-2.0-flash", last)
	}
}

// TestFaultQueue: faults apply in order, Times counts, negative repeats until
// Clear, and the default usage estimate is reported.
func TestFaultQueue(t *testing.T) {
	srv := llmtest.NewOpenAI(t, func(r llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "echo " + r.Text()} })
	c, err := llm.New(func() llm.Options { o := srv.Options(); o.MaxRetries = -1; o.Breaker.Failures = -1; return o }())
	if err != nil {
		t.Fatal(err)
	}
	srv.Fail(llmtest.Fault{Kind: llmtest.Status, Status: 418, Times: 2}, llmtest.Fault{Kind: llmtest.Status, Status: 503, Times: -1})
	var got []string
	for range 5 {
		_, err := c.Chat(t.Context(), llm.Request{Messages: []llm.Message{{Text: "hi"}}})
		var ae *llm.APIError
		if !errors.As(err, &ae) {
			t.Fatalf("Chat = %v, want an APIError", err)
		}
		got = append(got, fmt.Sprint(ae.Status))
	}
	if s := strings.Join(got, " "); s != "418 418 503 503 503" {
		t.Errorf("statuses = %s, want 418 418 503 503 503", s)
	}
	srv.Clear()
	resp, err := c.Chat(t.Context(), llm.Request{Messages: []llm.Message{{Text: "hello there"}}})
	if err != nil || resp.Text != "echo hello there" {
		t.Fatalf("Chat = %q, %v, want echo hello there", resp.Text, err)
	}
	if resp.Usage.InputTokens <= 0 || resp.Usage.OutputTokens <= 0 {
		t.Errorf("usage = %+v, want an estimate", resp.Usage)
	}
	if srv.Calls() != 6 || len(srv.Requests()) != 6 {
		t.Errorf("calls = %d, requests = %d, want 6, 6", srv.Calls(), len(srv.Requests()))
	}
	if h := srv.Last().Header.Get("Authorization"); h != "Bearer "+llmtest.Key {
		t.Errorf("last Authorization = %q", h)
	}
}

func TestScriptAndClient(t *testing.T) {
	for _, p := range []llm.Provider{llm.OpenAI, llm.Anthropic, llm.Gemini} {
		t.Run(string(p), func(t *testing.T) {
			srv := llmtest.New(t, p, llmtest.Script("one", "two"))
			c := srv.Client(t, func(o *llm.Options) { o.Name = "agent" })
			var got []string
			for range 3 {
				resp, err := c.Chat(t.Context(), llm.Request{Messages: []llm.Message{{Text: "next"}}})
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, resp.Text)
			}
			if s := strings.Join(got, ","); s != "one,two,two" {
				t.Errorf("replies = %s, want one,two,two", s)
			}
		})
	}
}
