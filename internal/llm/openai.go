package llm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// OpenAI-compatible chat completions: POST {base}/chat/completions with
// Bearer auth; images as data: URIs in image_url content parts.
var openAIWire = wire{
	defaultBase: "https://api.openai.com/v1",
	endpoint:    func(base, _ string) string { return base + "/chat/completions" },
	auth:        func(h http.Header, key string) { h.Set("Authorization", "Bearer "+key) },
	encode:      encodeOpenAI,
	decode:      decodeOpenAI,
}

type oaiRequest struct {
	Model          string       `json:"model"`
	Messages       []oaiMessage `json:"messages"`
	MaxTokens      int          `json:"max_tokens,omitempty"`
	Temperature    float64      `json:"temperature"`
	TopP           float64      `json:"top_p,omitempty"`
	ResponseFormat *oaiFormat   `json:"response_format,omitempty"`
	Usage          *oaiUsageReq `json:"usage,omitempty"`
}

// oaiUsageReq is OpenRouter's usage accounting request, {"include": true}:
// the reply's usage then carries cost, in credits (US dollars).
type oaiUsageReq struct {
	Include bool `json:"include"`
}

type oaiFormat struct {
	Type string `json:"type"`
}

// oaiMessage content is a string for text-only turns and a parts array when
// images are attached (the form every compatible server accepts).
type oaiMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

type oaiPart struct {
	Type     string       `json:"type"`
	Text     string       `json:"text,omitempty"`
	ImageURL *oaiImageURL `json:"image_url,omitempty"`
}

type oaiImageURL struct {
	URL string `json:"url"`
}

func encodeOpenAI(req *Request, model string) (body, error) {
	r := oaiRequest{
		Model:       model,
		MaxTokens:   req.MaxTokens,
		Temperature: req.Temperature,
		TopP:        req.TopP,
		Messages:    make([]oaiMessage, 0, len(req.Messages)+1),
	}
	if req.JSON {
		r.ResponseFormat = &oaiFormat{Type: "json_object"}
	}
	if req.usageAccounting {
		r.Usage = &oaiUsageReq{Include: true}
	}
	if req.System != "" {
		r.Messages = append(r.Messages, oaiMessage{Role: "system", Content: req.System})
	}
	var images []Image
	for i, m := range req.Messages {
		role, err := checkRole(i, m.Role)
		if err != nil {
			return nil, err
		}
		if len(m.Images) == 0 {
			r.Messages = append(r.Messages, oaiMessage{Role: role, Content: m.Text})
			continue
		}
		parts := make([]oaiPart, 0, len(m.Images)+1)
		if m.Text != "" {
			parts = append(parts, oaiPart{Type: "text", Text: m.Text})
		}
		for j := range m.Images {
			if err := checkImage(i, j, m.Images[j]); err != nil {
				return nil, err
			}
			parts = append(parts, oaiPart{Type: "image_url", ImageURL: &oaiImageURL{URL: placeholder(len(images))}})
			images = append(images, m.Images[j])
		}
		r.Messages = append(r.Messages, oaiMessage{Role: role, Content: parts})
	}
	body, err := json.Marshal(&r)
	if err != nil {
		return nil, err
	}
	return spliceImages(body, images, "url", true)
}

type oaiResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content          json.RawMessage `json:"content"`
			Reasoning        *string         `json:"reasoning"`
			ReasoningContent *string         `json:"reasoning_content"`
			Refusal          *string         `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		// Cost is OpenRouter's usage accounting: the call's cost in
		// credits, which are US dollars.
		Cost *float64 `json:"cost"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

func decodeOpenAI(body []byte) (Response, error) {
	var r oaiResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return Response{}, err
	}
	if len(r.Error) > 0 && string(r.Error) != "null" {
		// OpenRouter reports some upstream failures in a 200 body.
		return Response{}, embeddedError(r.Error, body)
	}
	if len(r.Choices) == 0 {
		return Response{}, &APIError{Retryable: true, Message: "reply has no choices (the provider returned an empty completion)"}
	}
	ch := &r.Choices[0]
	text, err := contentText(ch.Message.Content)
	if err != nil {
		return Response{}, err
	}
	resp := Response{Text: text, Model: r.Model}
	switch {
	case ch.Message.Reasoning != nil && *ch.Message.Reasoning != "":
		resp.Reasoning = *ch.Message.Reasoning
	case ch.Message.ReasoningContent != nil:
		resp.Reasoning = *ch.Message.ReasoningContent
	}
	if resp.Text == "" && ch.Message.Refusal != nil {
		resp.Refusal = *ch.Message.Refusal
	}
	resp.FinishReason = ch.FinishReason
	if r.Usage != nil {
		resp.Usage = Usage{InputTokens: r.Usage.PromptTokens, OutputTokens: r.Usage.CompletionTokens}
		if c := r.Usage.Cost; c != nil && *c >= 0 {
			resp.ProviderCost = c
		}
	}
	return resp, nil
}

// contentText reads content that is null, a string, or an array of parts
// ({"type":"text","text":...}; other part types are skipped).
func contentText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", err
		}
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" || p.Type == "output_text" || p.Type == "" {
				b.WriteString(p.Text)
			}
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("content is neither a string nor an array of parts")
}

// embeddedError turns an error object found in a 2xx body into an APIError,
// taking the status from its numeric code when it has one.
func embeddedError(raw json.RawMessage, body []byte) error {
	var e struct {
		Code any `json:"code"`
	}
	_ = json.Unmarshal(raw, &e)
	status := http.StatusBadGateway
	if f, ok := e.Code.(float64); ok && f >= 400 && f < 600 {
		status = int(f)
	}
	return &APIError{Status: status, Retryable: retryableStatus(status), Message: providerMessage(body, status)}
}
