package judge_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/acu-dev/acu/internal/judge"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/llm/llmtest"
)

// deadURL is a loopback address where nothing listens.
func deadURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// fakeOllama answers Ollama's version endpoint.
func fakeOllama(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/version" {
			w.Write([]byte(`{"version":"0.5.7"}`))
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestSelect(t *testing.T) {
	ollama := fakeOllama(t)
	dead := deadURL(t)
	for _, tc := range []struct {
		name     string
		o        judge.SelectOptions
		backend  string
		model    string
		baseURL  string
		provider llm.Provider
		reason   string // substring
		err      string // substring; empty: no error
	}{
		{name: "nothing configured, nothing reachable", o: judge.SelectOptions{OllamaURL: dead},
			backend: "ocr", model: "tesseract", reason: "no Ollama answers"},
		{name: "openrouter key", o: judge.SelectOptions{OllamaURL: ollama, Keys: judge.Keys{OpenRouter: "k", Anthropic: "k"}},
			backend: "openrouter", model: "google/gemini-2.0-flash-lite-001", baseURL: "https://openrouter.ai/api/v1", provider: llm.OpenAI, reason: "OPENROUTER_API_KEY is present"},
		{name: "openrouter model override", o: judge.SelectOptions{OllamaURL: dead, OpenRouterModel: "google/gemini-2.0-flash-001", Keys: judge.Keys{OpenRouter: "k"}},
			backend: "openrouter", model: "google/gemini-2.0-flash-001", baseURL: "https://openrouter.ai/api/v1", provider: llm.OpenAI},
		{name: "anthropic key", o: judge.SelectOptions{OllamaURL: dead, Keys: judge.Keys{Anthropic: "k", OpenAI: "k"}},
			backend: "claude", model: "claude-haiku-4-5", provider: llm.Anthropic, reason: "ANTHROPIC_API_KEY"},
		{name: "gemini key", o: judge.SelectOptions{OllamaURL: dead, Keys: judge.Keys{Gemini: "k"}},
			backend: "gemini", model: "gemini-2.0-flash-lite", provider: llm.Gemini, reason: "GEMINI_API_KEY"},
		{name: "openai key", o: judge.SelectOptions{OllamaURL: dead, Keys: judge.Keys{OpenAI: "k"}},
			backend: "openai", model: "gpt-4o-mini", baseURL: "https://api.openai.com/v1", provider: llm.OpenAI, reason: "OPENAI_API_KEY"},
		{name: "ollama answering", o: judge.SelectOptions{OllamaURL: ollama},
			backend: "ollama", model: "minicpm-v", baseURL: ollama + "/v1", provider: llm.OpenAI, reason: "Ollama answers at " + ollama},
		{name: "explicit ocr beats keys", o: judge.SelectOptions{Backend: "ocr", Keys: judge.Keys{OpenRouter: "k"}},
			backend: "ocr", model: "tesseract", reason: "ACU_VISION_BACKEND=ocr"},
		{name: "explicit claude", o: judge.SelectOptions{Backend: "Claude", OllamaURL: ollama, Keys: judge.Keys{OpenRouter: "k", Anthropic: "k"}},
			backend: "claude", model: "claude-haiku-4-5", provider: llm.Anthropic, reason: "ACU_VISION_BACKEND=claude"},
		{name: "explicit vllm with a model", o: judge.SelectOptions{Backend: "vllm", Model: "Qwen/Qwen2-VL-7B-Instruct"},
			backend: "vllm", model: "Qwen/Qwen2-VL-7B-Instruct", baseURL: "http://127.0.0.1:8000/v1", provider: llm.OpenAI},
		{name: "explicit ollama without probing", o: judge.SelectOptions{Backend: "ollama", OllamaURL: dead},
			backend: "ollama", model: "minicpm-v", baseURL: dead + "/v1", provider: llm.OpenAI},
		{name: "base URL and model override", o: judge.SelectOptions{Backend: "openai", BaseURL: "http://127.0.0.1:4000/v1/", Model: "proxy-model", Keys: judge.Keys{OpenAI: "k"}},
			backend: "openai", model: "proxy-model", baseURL: "http://127.0.0.1:4000/v1", provider: llm.OpenAI, reason: "ACU_VISION_BASE_URL"},
		{name: "base URL alone picks a compatible server", o: judge.SelectOptions{OllamaURL: dead, BaseURL: "http://127.0.0.1:4000/v1", Model: "m"},
			backend: "vllm", model: "m", baseURL: "http://127.0.0.1:4000/v1", provider: llm.OpenAI},
		{name: "explicit openrouter without key", o: judge.SelectOptions{Backend: "openrouter"}, err: "OPENROUTER_API_KEY"},
		{name: "explicit claude without key", o: judge.SelectOptions{Backend: "claude", Keys: judge.Keys{OpenRouter: "k"}}, err: "ANTHROPIC_API_KEY"},
		{name: "explicit gemini without key", o: judge.SelectOptions{Backend: "gemini"}, err: "GEMINI_API_KEY"},
		{name: "explicit openai without key", o: judge.SelectOptions{Backend: "openai"}, err: "OPENAI_API_KEY"},
		{name: "vllm without a model", o: judge.SelectOptions{Backend: "vllm"}, err: "ACU_VISION_MODEL"},
		{name: "unknown backend", o: judge.SelectOptions{Backend: "gpt5"}, err: "openrouter, claude, gemini, openai, ollama, vllm, ocr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got llm.Options
			tc.o.NewClient = func(o llm.Options) (*llm.Client, error) {
				got = o
				return llm.New(o)
			}
			b, ch, err := judge.Select(t.Context(), tc.o)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Select = %v, want an error containing %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "REDACTED") || strings.Contains(err.Error(), `"k"`) {
					t.Errorf("error %q mentions a key", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Select: %v", err)
			}
			if b.Name() != tc.backend || ch.Backend != tc.backend || ch.Model != tc.model {
				t.Errorf("Select = backend %s (choice %s, model %s); want %s, %s", b.Name(), ch.Backend, ch.Model, tc.backend, tc.model)
			}
			if !strings.Contains(ch.Reason, tc.reason) || !strings.HasSuffix(ch.Reason, ".") {
				t.Errorf("Choice.Reason = %q, want a sentence containing %q", ch.Reason, tc.reason)
			}
			if tc.backend == judge.OCR {
				if _, ok := b.(*judge.OCRJudge); !ok {
					t.Errorf("Select returned %T, want *judge.OCRJudge", b)
				}
				return
			}
			if got.Provider != tc.provider || got.BaseURL != tc.baseURL || got.Model != tc.model || got.Service != tc.backend || got.Name != "judge" {
				t.Errorf("client options provider %s base %q model %q service %q name %q; want %s %q %q %q judge",
					got.Provider, got.BaseURL, got.Model, got.Service, got.Name, tc.provider, tc.baseURL, tc.model, tc.backend)
			}
		})
	}
}

// TestSelectEndToEnd: a selected OpenAI-compatible backend (ACU_VISION_BASE_URL
// pointing at a fake) really judges through it.
func TestSelectEndToEnd(t *testing.T) {
	srv := llmtest.NewOpenAI(t, func(r llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "YES: seen."} })
	srv.SetKey("")
	b, ch, err := judge.Select(t.Context(), judge.SelectOptions{Backend: "vllm", BaseURL: srv.URL, Model: "local-vl"})
	if err != nil {
		t.Fatal(err)
	}
	vd, err := b.Judge(t.Context(), judge.Question{Condition: "seen", Frame: testFrame()})
	if err != nil {
		t.Fatal(err)
	}
	if !vd.Met || srv.Last().Model != "local-vl" || ch.BaseURL != srv.URL {
		t.Errorf("judged via %q model %q met %v; want the fake, local-vl, met", ch.BaseURL, srv.Last().Model, vd.Met)
	}
}
