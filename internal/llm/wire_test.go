package llm_test

import (
	"encoding/base64"
	"encoding/json"
	"image/color"
	"strings"
	"testing"

	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/google/go-cmp/cmp"
)

// TestRequestLayout sends one multi-turn request with a JPEG and a PNG to
// each provider's fake and checks the decoded request, the headers and the
// reply, including usage and cost.
func TestRequestLayout(t *testing.T) {
	jpg := encodeJPEG(t, testImage(64, 32))
	pngData := encodePNG(t, testImage(16, 16))
	req := llm.Request{
		System: "Answer YES or NO.",
		Messages: []llm.Message{
			{Role: "user", Text: "Is the build done?", Images: []llm.Image{{MIME: "image/jpeg", Data: jpg}}},
			{Role: "assistant", Text: "NO"},
			{Role: "user", Text: "And now?", Images: []llm.Image{{Data: pngData}}}, // MIME sniffed
		},
		MaxTokens:   150,
		Temperature: 0.1,
		RunID:       "run-1",
	}
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			model := "google/gemini-2.0-flash-lite-001"
			if p == llm.Anthropic {
				model = "anthropic/claude-haiku-4-5"
			}
			c, srv := newClient(t, p, func(r llmtest.Request) llmtest.Reply {
				return llmtest.Reply{Text: "YES: it says Done", Reasoning: "the terminal shows Done",
					Usage: llm.Usage{InputTokens: 1200, OutputTokens: 30}}
			}, func(o *llm.Options) {
				o.Model = model
				o.Headers = map[string]string{"X-Title": "acu"}
			})
			resp, err := c.Chat(t.Context(), req)
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			got := srv.Last()
			wantModel := model
			if p != llm.OpenAI {
				wantModel = model[strings.IndexByte(model, '/')+1:] // the provider's own name
			}
			if got.Model != wantModel {
				t.Errorf("model sent = %q, want %q", got.Model, wantModel)
			}
			if got.System != req.System {
				t.Errorf("system = %q, want %q", got.System, req.System)
			}
			type msg struct {
				Role, Text string
				Images     []string
			}
			var gotMsgs []msg
			for _, m := range got.Messages {
				var ims []string
				for _, im := range m.Images {
					ims = append(ims, im.MIME)
				}
				gotMsgs = append(gotMsgs, msg{m.Role, m.Text, ims})
			}
			want := []msg{
				{"user", "Is the build done?", []string{"image/jpeg"}},
				{"assistant", "NO", nil},
				{"user", "And now?", []string{"image/png"}},
			}
			if diff := cmp.Diff(want, gotMsgs); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			ims := got.Images()
			if len(ims) != 2 {
				t.Fatalf("images = %d, want 2", len(ims))
			}
			if b := ims[0].Image.Bounds(); b.Dx() != 64 || b.Dy() != 32 {
				t.Errorf("jpeg decoded to %v, want 64x32", b)
			}
			r, _, bl, _ := ims[0].Image.At(5, 5).RGBA()
			if r>>8 < 150 || bl>>8 > 80 {
				t.Errorf("jpeg pixel (5,5) = %v, want red", ims[0].Image.At(5, 5))
			}
			if c := color.RGBAModel.Convert(ims[1].Image.At(12, 3)).(color.RGBA); c != (color.RGBA{20, 20, 200, 255}) {
				t.Errorf("png pixel (12,3) = %v, want exact blue", c)
			}
			if string(ims[1].Data) != string(pngData) {
				t.Error("png bytes changed on the way")
			}
			if got.MaxTokens != 150 || got.Temperature != 0.1 || got.TopP != 0 || got.JSON {
				t.Errorf("params = max %d temp %v top_p %v json %v, want 150 0.1 0 false", got.MaxTokens, got.Temperature, got.TopP, got.JSON)
			}
			if v := got.Header.Get("X-Title"); v != "acu" {
				t.Errorf("X-Title = %q, want acu", v)
			}
			wantResp := llm.Response{Text: "YES: it says Done", Reasoning: "the terminal shows Done", Model: wantModel,
				Usage: llm.Usage{InputTokens: 1200, OutputTokens: 30}, Attempts: 1, CostKnown: true, CostSource: llm.CostTable}
			resp.Latency, resp.FinishReason = 0, ""
			wantCost := 1200*0.075/1e6 + 30*0.30/1e6
			if p == llm.Anthropic {
				wantCost = 1200*1.0/1e6 + 30*5.0/1e6
			}
			wantResp.CostUSD = resp.CostUSD
			if diff := cmp.Diff(wantResp, resp); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			if !near(resp.CostUSD, wantCost) {
				t.Errorf("CostUSD = %v, want %v", resp.CostUSD, wantCost)
			}
			if got := c.Cost("run-1"); !near(got, wantCost) {
				t.Errorf("Cost(run-1) = %v, want %v", got, wantCost)
			}
		})
	}
}

func near(a, b float64) bool {
	d := a - b
	return d < 1e-12 && d > -1e-12
}

// TestExactBody checks each adapter's JSON body field by field against the
// provider's documented shape.
func TestExactBody(t *testing.T) {
	jpg := encodeJPEG(t, testImage(8, 8))
	b64 := base64.StdEncoding.EncodeToString(jpg)
	req := llm.Request{
		System:      "sys",
		Messages:    []llm.Message{{Role: "user", Text: "q", Images: []llm.Image{{MIME: "image/jpeg", Data: jpg}}}},
		MaxTokens:   150,
		Temperature: 0.25,
		TopP:        0.5,
		JSON:        true,
	}
	tests := []struct {
		provider llm.Provider
		path     string
		headers  map[string]string
		want     string
	}{{
		provider: llm.OpenAI,
		path:     "/v1/chat/completions",
		headers:  map[string]string{"Authorization": "Bearer " + llmtest.Key, "Content-Type": "application/json"},
		want: `{"model":"llmtest-model","messages":[{"role":"system","content":"sys"},
			{"role":"user","content":[{"type":"text","text":"q"},{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,` + b64 + `"}}]}],
			"max_tokens":150,"temperature":0.25,"top_p":0.5,"response_format":{"type":"json_object"}}`,
	}, {
		provider: llm.Anthropic,
		path:     "/v1/messages",
		headers:  map[string]string{"x-api-key": llmtest.Key, "anthropic-version": "2023-06-01", "Content-Type": "application/json"},
		want: `{"model":"llmtest-model","system":"sys","messages":[{"role":"user","content":[
			{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"` + b64 + `"}},{"type":"text","text":"q"}]}],
			"max_tokens":150,"top_p":0.5}`,
	}, {
		provider: llm.Gemini,
		path:     "/v1beta/models/llmtest-model:generateContent",
		headers:  map[string]string{"x-goog-api-key": llmtest.Key, "Content-Type": "application/json"},
		want: `{"systemInstruction":{"parts":[{"text":"sys"}]},"contents":[{"role":"user","parts":[
			{"inline_data":{"mime_type":"image/jpeg","data":"` + b64 + `"}},{"text":"q"}]}],
			"generationConfig":{"maxOutputTokens":150,"temperature":0.25,"topP":0.5,"responseMimeType":"application/json"}}`,
	}}
	for _, tt := range tests {
		t.Run(string(tt.provider), func(t *testing.T) {
			c, srv := newClient(t, tt.provider, nil, nil)
			if _, err := c.Chat(t.Context(), req); err != nil {
				t.Fatalf("Chat: %v", err)
			}
			last := srv.Last()
			if last.Path != tt.path {
				t.Errorf("path = %q, want %q", last.Path, tt.path)
			}
			for k, v := range tt.headers {
				if got := last.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			var got, want any
			if err := json.Unmarshal(last.Body, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			if !last.JSON && tt.provider != llm.Anthropic {
				t.Error("JSON mode not decoded by the fake")
			}
		})
	}
}

// TestTolerantParsing feeds each decoder the shapes real providers send.
func TestTolerantParsing(t *testing.T) {
	tests := []struct {
		name     string
		provider llm.Provider
		body     string
		want     llm.Response
		wantErr  string
	}{
		{"openai null content", llm.OpenAI,
			`{"model":"m","choices":[{"message":{"role":"assistant","content":null},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":0}}`,
			llm.Response{Model: "m", FinishReason: "stop", Usage: llm.Usage{InputTokens: 5}}, ""},
		{"openai content parts", llm.OpenAI,
			`{"model":"m","choices":[{"message":{"content":[{"type":"text","text":"YES"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":" done"}]}}]}`,
			llm.Response{Model: "m", Text: "YES done"}, ""},
		{"openai reasoning_content", llm.OpenAI,
			`{"model":"m","choices":[{"message":{"content":"NO","reasoning_content":"thinking"}}],"usage":{"prompt_tokens":1,"completion_tokens":2}}`,
			llm.Response{Model: "m", Text: "NO", Reasoning: "thinking", Usage: llm.Usage{InputTokens: 1, OutputTokens: 2}}, ""},
		{"openai usage accounting", llm.OpenAI,
			`{"id":"gen-1","model":"m","choices":[{"message":{"role":"assistant","content":"YES"},"finish_reason":"stop"}],"usage":{"prompt_tokens":194,"completion_tokens":2,"total_tokens":196,"cost":0.95,"is_byok":false,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"cost_details":{"upstream_inference_cost":null},"completion_tokens_details":{"reasoning_tokens":0}}}`,
			llm.Response{Model: "m", Text: "YES", FinishReason: "stop", Usage: llm.Usage{InputTokens: 194, OutputTokens: 2}, ProviderCost: llmtest.Cost(0.95)}, ""},
		{"openai reasoning", llm.OpenAI,
			`{"model":"m","choices":[{"message":{"content":"NO","reasoning":"r","reasoning_content":null}}]}`,
			llm.Response{Model: "m", Text: "NO", Reasoning: "r"}, ""},
		{"openai refusal", llm.OpenAI,
			`{"model":"m","choices":[{"message":{"content":null,"refusal":"I can't help"}}]}`,
			llm.Response{Model: "m", Refusal: "I can't help"}, ""},
		{"openai empty choices", llm.OpenAI, `{"id":"x","choices":[]}`, llm.Response{}, "no choices"},
		{"openai no choices field", llm.OpenAI, `{"id":"x"}`, llm.Response{}, "no choices"},
		{"openai error in 200", llm.OpenAI, `{"error":{"message":"upstream overloaded","code":502}}`, llm.Response{}, "502 from openai: upstream overloaded"},
		{"anthropic thinking and two texts", llm.Anthropic,
			`{"type":"message","model":"claude-haiku-4-5-20251001","content":[{"type":"thinking","thinking":"hm","signature":"s"},{"type":"text","text":"YES"},{"type":"text","text":": done"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":3,"cache_read_input_tokens":2}}`,
			llm.Response{Model: "claude-haiku-4-5-20251001", Text: "YES: done", Reasoning: "hm", FinishReason: "end_turn", Usage: llm.Usage{InputTokens: 12, OutputTokens: 3}}, ""},
		{"anthropic empty content", llm.Anthropic,
			`{"type":"message","model":"m","content":[],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":0}}`,
			llm.Response{Model: "m", FinishReason: "end_turn", Usage: llm.Usage{InputTokens: 10}}, ""},
		{"anthropic error in 200", llm.Anthropic, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, llm.Response{}, "Overloaded"},
		{"gemini parts and thoughts", llm.Gemini,
			`{"candidates":[{"content":{"parts":[{"text":"let me see","thought":true},{"text":"YES"},{"text":" it is"}],"role":"model"},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":300,"candidatesTokenCount":4,"thoughtsTokenCount":6},"modelVersion":"gemini-2.5-flash-lite"}`,
			llm.Response{Model: "gemini-2.5-flash-lite", Text: "YES it is", Reasoning: "let me see", FinishReason: "STOP", Usage: llm.Usage{InputTokens: 300, OutputTokens: 10}}, ""},
		{"gemini no candidates", llm.Gemini, `{"usageMetadata":{"promptTokenCount":3}}`, llm.Response{}, "no candidates"},
		{"gemini blocked", llm.Gemini, `{"promptFeedback":{"blockReason":"SAFETY"}}`, llm.Response{}, "prompt blocked (SAFETY)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, srv := newClient(t, tt.provider, nil, func(o *llm.Options) { o.MaxRetries = -1 })
			srv.Fail(llmtest.Fault{Kind: llmtest.Raw, Body: tt.body})
			resp, err := c.Chat(t.Context(), ask("q"))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Chat error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			resp.Latency, resp.Attempts, resp.CostUSD, resp.CostKnown, resp.CostSource = 0, 0, 0, false, ""
			if diff := cmp.Diff(tt.want, resp); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
}
