package llm

import (
	"encoding/json"
	"net/http"
	"strings"
)

// AnthropicVersion is the anthropic-version header acu sends.
const AnthropicVersion = "2023-06-01"

// anthropicDefaultMaxTokens is sent when the request sets none: the Messages
// API requires max_tokens.
const anthropicDefaultMaxTokens = 1024

// Anthropic Messages: POST {base}/v1/messages with x-api-key and
// anthropic-version; system at top level; base64 image blocks.
var anthropicWire = wire{
	defaultBase: "https://api.anthropic.com",
	endpoint: func(base, _ string) string {
		if strings.HasSuffix(base, "/v1") {
			return base + "/messages"
		}
		return base + "/v1/messages"
	},
	auth:    func(h http.Header, key string) { h.Set("x-api-key", key) },
	headers: map[string]string{"anthropic-version": AnthropicVersion},
	encode:  encodeAnthropic,
	decode:  decodeAnthropic,
}

type antRequest struct {
	Model       string       `json:"model"`
	System      string       `json:"system,omitempty"`
	Messages    []antMessage `json:"messages"`
	MaxTokens   int          `json:"max_tokens"`
	Temperature *float64     `json:"temperature,omitempty"`
	TopP        float64      `json:"top_p,omitempty"`
}

type antMessage struct {
	Role    string     `json:"role"`
	Content []antBlock `json:"content"`
}

type antBlock struct {
	Type   string     `json:"type"`
	Text   string     `json:"text,omitempty"`
	Source *antSource `json:"source,omitempty"`
}

type antSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"` // a placeholder, see spliceImages
}

func encodeAnthropic(req *Request, model string) (body, error) {
	r := antRequest{
		Model:     bareModelFor(model, "anthropic/"),
		System:    req.System,
		MaxTokens: req.MaxTokens,
		TopP:      req.TopP,
		Messages:  make([]antMessage, 0, len(req.Messages)),
	}
	if r.MaxTokens <= 0 {
		r.MaxTokens = anthropicDefaultMaxTokens
	}
	if req.TopP == 0 {
		// Newer models refuse temperature and top_p together.
		t := req.Temperature
		r.Temperature = &t
	}
	var images []Image
	for i, m := range req.Messages {
		role, err := checkRole(i, m.Role)
		if err != nil {
			return nil, err
		}
		blocks := make([]antBlock, 0, len(m.Images)+1)
		// Images first, then the question: what Anthropic recommends.
		for j := range m.Images {
			if err := checkImage(i, j, m.Images[j]); err != nil {
				return nil, err
			}
			blocks = append(blocks, antBlock{Type: "image", Source: &antSource{
				Type: "base64", MediaType: imageMIME(m.Images[j]), Data: placeholder(len(images)),
			}})
			images = append(images, m.Images[j])
		}
		if m.Text != "" || len(blocks) == 0 {
			blocks = append(blocks, antBlock{Type: "text", Text: m.Text})
		}
		r.Messages = append(r.Messages, antMessage{Role: role, Content: blocks})
	}
	body, err := json.Marshal(&r)
	if err != nil {
		return nil, err
	}
	return spliceImages(body, images, "data", false)
}

// bareModelFor strips a provider prefix that the provider's own API does not
// know ("anthropic/claude-haiku-4-5" -> "claude-haiku-4-5").
func bareModelFor(model, prefix string) string {
	return strings.TrimPrefix(model, prefix)
}

type antResponse struct {
	Type    string `json:"type"`
	Model   string `json:"model"`
	Content []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Thinking string `json:"thinking"`
	} `json:"content"`
	StopReason string `json:"stop_reason"`
	Usage      *struct {
		InputTokens              int `json:"input_tokens"`
		OutputTokens             int `json:"output_tokens"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

func decodeAnthropic(body []byte) (Response, error) {
	var r antResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return Response{}, err
	}
	if r.Type == "error" || (len(r.Error) > 0 && string(r.Error) != "null") {
		return Response{}, &APIError{Status: http.StatusBadGateway, Retryable: true, Message: providerMessage(body, 0)}
	}
	if r.Type != "message" && len(r.Content) == 0 && r.Usage == nil {
		return Response{}, &APIError{Retryable: true, Message: "reply is not a message (no content, no usage)"}
	}
	resp := Response{Model: r.Model, FinishReason: r.StopReason}
	var text, thinking strings.Builder
	for _, b := range r.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "thinking":
			thinking.WriteString(b.Thinking)
		}
	}
	resp.Text, resp.Reasoning = text.String(), thinking.String()
	if r.StopReason == "refusal" && resp.Text == "" {
		resp.Refusal = "refused"
	}
	if u := r.Usage; u != nil {
		// Cache tokens are billed as input (at other rates; acu does not cache).
		resp.Usage = Usage{InputTokens: u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens, OutputTokens: u.OutputTokens}
	}
	return resp, nil
}
