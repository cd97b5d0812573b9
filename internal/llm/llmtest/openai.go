package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

type openAIProto struct{}

func (openAIProto) auth(h http.Header, key string) (int, string) {
	got := h.Get("Authorization")
	if got == "Bearer "+key {
		return 0, ""
	}
	if got == "" {
		return http.StatusUnauthorized, "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
	}
	return http.StatusUnauthorized, "Incorrect API key provided: " + strings.TrimPrefix(got, "Bearer ") + "."
}

type oaiWireRequest struct {
	Model          string           `json:"model"`
	Messages       []oaiWireMessage `json:"messages"`
	MaxTokens      *int             `json:"max_tokens"`
	Temperature    *float64         `json:"temperature"`
	TopP           *float64         `json:"top_p"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
	Stream *bool `json:"stream"`
	// Usage is OpenRouter's usage accounting request, {"include": true}.
	Usage *struct {
		Include *bool `json:"include"`
	} `json:"usage"`
}

type oaiWireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type oaiWirePart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL    string `json:"url"`
		Detail string `json:"detail"`
	} `json:"image_url"`
}

func (openAIProto) decode(r *http.Request, body []byte) (Request, error) {
	if r.URL.Path != "/v1/chat/completions" {
		return Request{}, fmt.Errorf("path %q: want /v1/chat/completions", r.URL.Path)
	}
	var w oaiWireRequest
	if err := strictJSON(body, &w); err != nil {
		return Request{}, err
	}
	if w.Model == "" {
		return Request{}, fmt.Errorf("model: missing")
	}
	if len(w.Messages) == 0 {
		return Request{}, fmt.Errorf("messages: empty")
	}
	if w.Stream != nil && *w.Stream {
		return Request{}, fmt.Errorf("stream: true is not supported by llmtest")
	}
	req := Request{Model: w.Model}
	if w.Usage != nil {
		if w.Usage.Include == nil {
			return Request{}, fmt.Errorf("usage: want {\"include\": true}")
		}
		req.UsageInclude = *w.Usage.Include
	}
	if w.MaxTokens != nil {
		req.MaxTokens = *w.MaxTokens
	}
	if w.Temperature != nil {
		req.Temperature = *w.Temperature
	}
	if w.TopP != nil {
		req.TopP = *w.TopP
	}
	if w.ResponseFormat != nil {
		if w.ResponseFormat.Type != "json_object" {
			return Request{}, fmt.Errorf("response_format.type %q: want json_object", w.ResponseFormat.Type)
		}
		req.JSON = true
	}
	for i, m := range w.Messages {
		switch m.Role {
		case "system":
			if i != 0 {
				return Request{}, fmt.Errorf("messages[%d]: system message after the first", i)
			}
			var s string
			if err := json.Unmarshal(m.Content, &s); err != nil {
				return Request{}, fmt.Errorf("messages[0]: system content is not a string")
			}
			req.System = s
			continue
		case "user", "assistant":
		default:
			return Request{}, fmt.Errorf("messages[%d]: role %q", i, m.Role)
		}
		msg := Message{Role: m.Role}
		if len(m.Content) == 0 || m.Content[0] == 'n' {
			return Request{}, fmt.Errorf("messages[%d]: content missing or null", i)
		}
		if m.Content[0] == '"' {
			if err := json.Unmarshal(m.Content, &msg.Text); err != nil {
				return Request{}, fmt.Errorf("messages[%d].content: %v", i, err)
			}
			req.Messages = append(req.Messages, msg)
			continue
		}
		var parts []oaiWirePart
		if err := json.Unmarshal(m.Content, &parts); err != nil {
			return Request{}, fmt.Errorf("messages[%d].content: neither a string nor parts: %v", i, err)
		}
		var text []string
		for j, p := range parts {
			switch p.Type {
			case "text":
				text = append(text, p.Text)
			case "image_url":
				if p.ImageURL == nil {
					return Request{}, fmt.Errorf("messages[%d].content[%d]: image_url missing", i, j)
				}
				if m.Role != "user" {
					return Request{}, fmt.Errorf("messages[%d]: images only in user messages", i)
				}
				img, err := decodeDataURI(p.ImageURL.URL)
				if err != nil {
					return Request{}, fmt.Errorf("messages[%d].content[%d].image_url.url: %v", i, j, err)
				}
				msg.Images = append(msg.Images, img)
			default:
				return Request{}, fmt.Errorf("messages[%d].content[%d]: type %q", i, j, p.Type)
			}
		}
		msg.Text = strings.Join(text, "\n")
		req.Messages = append(req.Messages, msg)
	}
	return req, nil
}

// decodeDataURI reads data:<mime>;base64,<data>.
func decodeDataURI(u string) (Image, error) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return Image{}, fmt.Errorf("not a data: URI")
	}
	mime, data, ok := strings.Cut(rest, ";base64,")
	if !ok {
		return Image{}, fmt.Errorf("data: URI without ;base64,")
	}
	b, err := decodeBase64(data)
	if err != nil {
		return Image{}, err
	}
	return decodeImage(mime, b)
}

func (openAIProto) reply(req *Request, rep Reply, id int) []byte {
	msg := map[string]any{"role": "assistant", "content": rep.Text}
	if rep.Reasoning != "" {
		msg["reasoning"] = rep.Reasoning
	}
	return mustJSON(map[string]any{
		"id":      fmt.Sprintf("chatcmpl-llmtest-%d", id),
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   rep.Model,
		"choices": []any{map[string]any{
			"index":         0,
			"message":       msg,
			"logprobs":      nil,
			"finish_reason": "stop",
		}},
		"usage": openAIUsage(rep),
	})
}

// openAIUsage is the reply's usage object; with Reply.CostUSD set it is
// OpenRouter's, with usage accounting: cost in credits (US dollars),
// cost_details and the token details.
func openAIUsage(rep Reply) map[string]any {
	u := map[string]any{
		"prompt_tokens":     rep.Usage.InputTokens,
		"completion_tokens": rep.Usage.OutputTokens,
		"total_tokens":      rep.Usage.InputTokens + rep.Usage.OutputTokens,
	}
	if rep.CostUSD != nil {
		u["cost"] = *rep.CostUSD
		u["is_byok"] = false
		u["cost_details"] = map[string]any{"upstream_inference_cost": nil}
		u["prompt_tokens_details"] = map[string]any{"cached_tokens": 0, "audio_tokens": 0}
		u["completion_tokens_details"] = map[string]any{"reasoning_tokens": 0}
	}
	return u
}

func (openAIProto) empty(req *Request, id int) []byte {
	return mustJSON(map[string]any{
		"id":      fmt.Sprintf("chatcmpl-llmtest-%d", id),
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   req.Model,
		"choices": []any{},
		"usage":   map[string]any{"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
	})
}

func (openAIProto) errorBody(status int, msg string) []byte {
	typ := "invalid_request_error"
	switch {
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_exceeded"
	case status >= 500:
		typ = "server_error"
	}
	return mustJSON(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": status}})
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
