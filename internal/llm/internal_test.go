package llm

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1", time.Second, true},
		{" 30 ", 30 * time.Second, true},
		{"0.5", 500 * time.Millisecond, true},
		{"0", 0, true},
		{now.Add(7 * time.Second).Format(http.TimeFormat), 7 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"", 0, false},
		{"-3", 0, false},
		{"soon", 0, false},
		{"NaN", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v, want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestRetryAfterCapped: a huge Retry-After is capped at RetryAfterCap.
func TestRetryAfterCapped(t *testing.T) {
	c, err := New(Options{Provider: OpenAI, BaseURL: "http://127.0.0.1:1/v1", RetryAfterCap: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"3600", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)} {
		resp := &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {h}}}
		ae := c.statusError(resp, []byte(`{"error":{"message":"slow down"}}`)).(*APIError)
		if ae.RetryAfter != 2*time.Second || !ae.Retryable || ae.Message != "slow down" {
			t.Errorf("Retry-After %q: APIError = %+v, want capped at 2s", h, ae)
		}
	}
}

func TestNormModel(t *testing.T) {
	for in, want := range map[string]string{
		"google/gemini-2.0-flash-lite-001": "gemini-2.0-flash-lite-001",
		"models/Gemini-2.0-Flash":          "gemini-2.0-flash",
		"claude-haiku-4-5-20251001":        "claude-haiku-4-5",
		"claude-haiku-4-5@20251001":        "claude-haiku-4-5",
		"gpt-4o-2024-08-06":                "gpt-4o-2024-08-06",
		"a/b/c":                            "c",
		"":                                 "",
	} {
		if got := normModel(in); got != want {
			t.Errorf("normModel(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestProviderMessage(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"error":{"message":"Invalid API key","code":401}}`, "Invalid API key"},
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "Overloaded"},
		{`{"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED"}}`, "Resource exhausted"},
		{`{"error":"model 'x' not found"}`, "model 'x' not found"},
		{`{"object":"error","message":"max_tokens too large","type":"BadRequestError","code":400}`, "max_tokens too large"},
		{`{"detail":"Not Found"}`, "Not Found"},
		{`{"error":{"message":"Provider returned error","code":429,"metadata":{"raw":"quota exceeded","provider_name":"Google AI Studio"}}}`, "Provider returned error (Google AI Studio: quota exceeded)"},
		{`<html>502 Bad Gateway</html>`, "<html>502 Bad Gateway</html>"},
		{``, "bad gateway"},
	}
	for _, tt := range tests {
		if got := providerMessage([]byte(tt.body), 502); got != tt.want {
			t.Errorf("providerMessage(%q) = %q, want %q", tt.body, got, tt.want)
		}
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for name, o := range map[string]Options{
		"unknown provider": {Provider: "bard"},
		"relative URL":     {Provider: OpenAI, BaseURL: "localhost:8000/v1"},
		"ftp URL":          {Provider: OpenAI, BaseURL: "ftp://x/v1"},
		"negative timeout": {Provider: OpenAI, Timeout: -time.Second},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%s) succeeded, want an error", name)
		}
	}
}

func TestEndpoints(t *testing.T) {
	tests := []struct {
		p          Provider
		base, want string
	}{
		{OpenAI, "", "https://api.openai.com/v1/chat/completions"},
		{OpenAI, "https://openrouter.ai/api/v1/", "https://openrouter.ai/api/v1/chat/completions"},
		{Anthropic, "", "https://api.anthropic.com/v1/messages"},
		{Anthropic, "https://proxy.example/v1", "https://proxy.example/v1/messages"},
		{Gemini, "", "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent"},
		{Gemini, "https://g.example/v1beta", "https://g.example/v1beta/models/gemini-2.0-flash:generateContent"},
	}
	for _, tt := range tests {
		c, err := New(Options{Provider: tt.p, BaseURL: tt.base})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.wire.endpoint(c.base, "google/gemini-2.0-flash"); got != tt.want {
			t.Errorf("%s %q: endpoint = %q, want %q", tt.p, tt.base, got, tt.want)
		}
	}
}

// FuzzDecode: no provider reply, however broken, panics a decoder.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"message":{"content":[{"type":"text","text":"x"}]}}]}`,
		`{"choices":[{"message":{"content":null,"reasoning_content":"r"}}],"usage":{"prompt_tokens":1}}`,
		`{"type":"message","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"x"}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"x","thought":true}]}}],"usageMetadata":{}}`,
		`{"error":{"code":"x"}}`, `{"choices":[{"message":{"content":7}}]}`, `[]`, `null`, `"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, w := range wires {
			_, _ = w.decode(body)
		}
	})
}

// TestSpliceCannotBeForged: text that spells an image placeholder stays
// text, in every adapter.
func TestSpliceCannotBeForged(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nxx")
	b64 := base64.StdEncoding.EncodeToString(png)
	for p, w := range wires {
		forged := `"url":"acu-image;0" "data":"acu-image;0"`
		req := Request{System: forged, Messages: []Message{{Text: forged, Images: []Image{{Data: png}}}}}
		segs, err := w.encode(&req, "m")
		if err != nil {
			t.Fatal(err)
		}
		body := segs.Bytes()
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("%s: body is not JSON: %v\n%s", p, err, body)
		}
		counts := map[string]int{}
		var walk func(any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				for _, e := range v {
					walk(e)
				}
			case []any:
				for _, e := range v {
					walk(e)
				}
			case string:
				counts[v]++
			}
		}
		walk(v)
		image := b64
		if p == OpenAI {
			image = "data:image/png;base64," + b64
		}
		if counts[forged] != 2 || counts[image] != 1 {
			t.Errorf("%s: encode mangled text or image: %s", p, body)
		}
	}
}

// TestSharedBase64IsNotCopied: an image whose base64 the caller supplies
// goes into every body as that same slice (no per-call copy), and the
// body's bytes equal those of an image encoded by the client itself.
func TestSharedBase64IsNotCopied(t *testing.T) {
	jpg := []byte("\xff\xd8\xff\xe0 not really a jpeg, but sniffed as one")
	b64 := base64.StdEncoding.AppendEncode(nil, jpg)
	for p, w := range wires {
		own := Request{Messages: []Message{{Text: "is it done?", Images: []Image{{Data: jpg}}}}}
		shared := Request{Messages: []Message{{Text: "is it done?", Images: []Image{{Data: jpg, Base64: b64}}}}}
		a, err := w.encode(&own, "m")
		if err != nil {
			t.Fatal(err)
		}
		b, err := w.encode(&shared, "m")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: body with shared base64 differs:\n%s\n%s", p, a.Bytes(), b.Bytes())
		}
		if a.Len() != len(a.Bytes()) {
			t.Errorf("%s: Len %d, bytes %d", p, a.Len(), len(a.Bytes()))
		}
		found := false
		for _, seg := range b {
			if len(seg) > 0 && &seg[0] == &b64[0] {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: the shared base64 was copied into the body", p)
		}
		got, _ := io.ReadAll(b.reader())
		if !bytes.Equal(got, b.Bytes()) {
			t.Errorf("%s: the body's reader streams other bytes than its segments", p)
		}
	}
}
