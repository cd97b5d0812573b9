package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/acu-dev/acu/internal/llm"
)

type anthropicProto struct{}

func (anthropicProto) auth(h http.Header, key string) (int, string) {
	if h.Get("x-api-key") == key {
		return 0, ""
	}
	return http.StatusUnauthorized, "invalid x-api-key"
}

type antWireRequest struct {
	Model       string           `json:"model"`
	System      *json.RawMessage `json:"system"`
	Messages    []antWireMessage `json:"messages"`
	MaxTokens   *int             `json:"max_tokens"`
	Temperature *float64         `json:"temperature"`
	TopP        *float64         `json:"top_p"`
	Stream      *bool            `json:"stream"`
}

type antWireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type antWireBlock struct {
	Type   string `json:"type"`
	Text   string `json:"text"`
	Source *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	} `json:"source"`
}

func (anthropicProto) decode(r *http.Request, body []byte) (Request, error) {
	if r.URL.Path != "/v1/messages" {
		return Request{}, fmt.Errorf("path %q: want /v1/messages", r.URL.Path)
	}
	if v := r.Header.Get("anthropic-version"); v != llm.AnthropicVersion {
		return Request{}, fmt.Errorf("anthropic-version header %q: want %s", v, llm.AnthropicVersion)
	}
	var w antWireRequest
	if err := strictJSON(body, &w); err != nil {
		return Request{}, err
	}
	if w.Model == "" {
		return Request{}, fmt.Errorf("model: missing")
	}
	if strings.Contains(w.Model, "/") {
		return Request{}, fmt.Errorf("model %q: Anthropic model names have no provider prefix", w.Model)
	}
	if w.MaxTokens == nil || *w.MaxTokens <= 0 {
		return Request{}, fmt.Errorf("max_tokens: required and positive")
	}
	if w.Temperature != nil && w.TopP != nil {
		return Request{}, fmt.Errorf("temperature and top_p cannot both be specified for this model")
	}
	if w.Stream != nil && *w.Stream {
		return Request{}, fmt.Errorf("stream: true is not supported by llmtest")
	}
	if len(w.Messages) == 0 {
		return Request{}, fmt.Errorf("messages: empty")
	}
	req := Request{Model: w.Model, MaxTokens: *w.MaxTokens}
	if w.Temperature != nil {
		req.Temperature = *w.Temperature
	}
	if w.TopP != nil {
		req.TopP = *w.TopP
	}
	if w.System != nil {
		if err := json.Unmarshal(*w.System, &req.System); err != nil {
			var blocks []antWireBlock
			if err := json.Unmarshal(*w.System, &blocks); err != nil {
				return Request{}, fmt.Errorf("system: neither a string nor text blocks")
			}
			for _, b := range blocks {
				req.System += b.Text
			}
		}
	}
	for i, m := range w.Messages {
		switch {
		case m.Role != "user" && m.Role != "assistant":
			return Request{}, fmt.Errorf("messages[%d]: role %q: want user or assistant (system goes top-level)", i, m.Role)
		case i == 0 && m.Role != "user":
			return Request{}, fmt.Errorf("messages[0]: the first message must use the user role")
		}
		msg := Message{Role: m.Role}
		if len(m.Content) > 0 && m.Content[0] == '"' {
			if err := json.Unmarshal(m.Content, &msg.Text); err != nil || msg.Text == "" {
				return Request{}, fmt.Errorf("messages[%d].content: empty or not a string", i)
			}
			req.Messages = append(req.Messages, msg)
			continue
		}
		var blocks []antWireBlock
		if err := json.Unmarshal(m.Content, &blocks); err != nil || len(blocks) == 0 {
			return Request{}, fmt.Errorf("messages[%d].content: want a string or a non-empty array of blocks", i)
		}
		var text []string
		for j, b := range blocks {
			switch b.Type {
			case "text":
				if b.Text == "" {
					return Request{}, fmt.Errorf("messages[%d].content[%d]: text content blocks must be non-empty", i, j)
				}
				text = append(text, b.Text)
			case "image":
				if b.Source == nil || b.Source.Type != "base64" {
					return Request{}, fmt.Errorf("messages[%d].content[%d]: image source must be {\"type\":\"base64\",...}", i, j)
				}
				data, err := decodeBase64(b.Source.Data)
				if err != nil {
					return Request{}, fmt.Errorf("messages[%d].content[%d].source.data: %v", i, j, err)
				}
				img, err := decodeImage(b.Source.MediaType, data)
				if err != nil {
					return Request{}, fmt.Errorf("messages[%d].content[%d]: %v", i, j, err)
				}
				msg.Images = append(msg.Images, img)
			default:
				return Request{}, fmt.Errorf("messages[%d].content[%d]: type %q", i, j, b.Type)
			}
		}
		msg.Text = strings.Join(text, "\n")
		req.Messages = append(req.Messages, msg)
	}
	return req, nil
}

func (anthropicProto) reply(req *Request, rep Reply, id int) []byte {
	content := []any{}
	if rep.Reasoning != "" {
		content = append(content, map[string]any{"type": "thinking", "thinking": rep.Reasoning, "signature": "llmtest"})
	}
	content = append(content, map[string]any{"type": "text", "text": rep.Text})
	return anthropicMessage(rep.Model, id, content, rep.Usage)
}

func anthropicMessage(model string, id int, content []any, u llm.Usage) []byte {
	return mustJSON(map[string]any{
		"id":            fmt.Sprintf("msg_llmtest_%d", id),
		"type":          "message",
		"role":          "assistant",
		"model":         model,
		"content":       content,
		"stop_reason":   "end_turn",
		"stop_sequence": nil,
		"usage": map[string]any{
			"input_tokens":                u.InputTokens,
			"cache_creation_input_tokens": 0,
			"cache_read_input_tokens":     0,
			"output_tokens":               u.OutputTokens,
		},
	})
}

func (anthropicProto) empty(req *Request, id int) []byte {
	return anthropicMessage(req.Model, id, []any{}, llm.Usage{InputTokens: 1})
}

func (anthropicProto) errorBody(status int, msg string) []byte {
	typ := "invalid_request_error"
	switch status {
	case http.StatusUnauthorized:
		typ = "authentication_error"
	case http.StatusForbidden:
		typ = "permission_error"
	case http.StatusNotFound:
		typ = "not_found_error"
	case http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case 529:
		typ = "overloaded_error"
	default:
		if status >= 500 {
			typ = "api_error"
		}
	}
	return mustJSON(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}
