package llm

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// Google Gemini: POST {base}/v1beta/models/{model}:generateContent with the
// key in x-goog-api-key; systemInstruction; inline_data parts.
var geminiWire = wire{
	defaultBase: "https://generativelanguage.googleapis.com",
	endpoint: func(base, model string) string {
		m := url.PathEscape(bareModel(model))
		if strings.HasSuffix(base, "/v1beta") {
			return base + "/models/" + m + ":generateContent"
		}
		return base + "/v1beta/models/" + m + ":generateContent"
	},
	auth:   func(h http.Header, key string) { h.Set("x-goog-api-key", key) },
	encode: encodeGemini,
	decode: decodeGemini,
}

type gemRequest struct {
	SystemInstruction *gemContent  `json:"systemInstruction,omitempty"`
	Contents          []gemContent `json:"contents"`
	GenerationConfig  gemConfig    `json:"generationConfig"`
}

type gemContent struct {
	Role  string    `json:"role,omitempty"`
	Parts []gemPart `json:"parts"`
}

type gemPart struct {
	Text       string   `json:"text,omitempty"`
	InlineData *gemBlob `json:"inline_data,omitempty"`
}

type gemBlob struct {
	MimeType string `json:"mime_type"`
	Data     string `json:"data"` // a placeholder, see spliceImages
}

type gemConfig struct {
	MaxOutputTokens  int     `json:"maxOutputTokens,omitempty"`
	Temperature      float64 `json:"temperature"`
	TopP             float64 `json:"topP,omitempty"`
	ResponseMimeType string  `json:"responseMimeType,omitempty"`
}

func encodeGemini(req *Request, _ string) (body, error) {
	r := gemRequest{
		Contents: make([]gemContent, 0, len(req.Messages)),
		GenerationConfig: gemConfig{
			MaxOutputTokens: req.MaxTokens,
			Temperature:     req.Temperature,
			TopP:            req.TopP,
		},
	}
	if req.JSON {
		r.GenerationConfig.ResponseMimeType = "application/json"
	}
	if req.System != "" {
		r.SystemInstruction = &gemContent{Parts: []gemPart{{Text: req.System}}}
	}
	var images []Image
	for i, m := range req.Messages {
		role, err := checkRole(i, m.Role)
		if err != nil {
			return nil, err
		}
		if role == "assistant" {
			role = "model"
		}
		parts := make([]gemPart, 0, len(m.Images)+1)
		for j := range m.Images {
			if err := checkImage(i, j, m.Images[j]); err != nil {
				return nil, err
			}
			parts = append(parts, gemPart{InlineData: &gemBlob{MimeType: imageMIME(m.Images[j]), Data: placeholder(len(images))}})
			images = append(images, m.Images[j])
		}
		if m.Text != "" || len(parts) == 0 {
			parts = append(parts, gemPart{Text: m.Text})
		}
		r.Contents = append(r.Contents, gemContent{Role: role, Parts: parts})
	}
	body, err := json.Marshal(&r)
	if err != nil {
		return nil, err
	}
	return spliceImages(body, images, "data", false)
}

type gemResponse struct {
	Candidates []struct {
		Content struct {
			Parts []struct {
				Text    string `json:"text"`
				Thought bool   `json:"thought"`
			} `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	UsageMetadata *struct {
		PromptTokenCount     int `json:"promptTokenCount"`
		CandidatesTokenCount int `json:"candidatesTokenCount"`
		ThoughtsTokenCount   int `json:"thoughtsTokenCount"`
	} `json:"usageMetadata"`
	ModelVersion string          `json:"modelVersion"`
	Error        json.RawMessage `json:"error"`
}

func decodeGemini(body []byte) (Response, error) {
	var r gemResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return Response{}, err
	}
	if len(r.Error) > 0 && string(r.Error) != "null" {
		return Response{}, embeddedError(r.Error, body)
	}
	if len(r.Candidates) == 0 {
		if r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" {
			return Response{}, &APIError{Retryable: false, Message: "reply has no candidates: prompt blocked (" + r.PromptFeedback.BlockReason + ")"}
		}
		return Response{}, &APIError{Retryable: true, Message: "reply has no candidates (the provider returned an empty completion)"}
	}
	c := &r.Candidates[0]
	resp := Response{Model: r.ModelVersion, FinishReason: c.FinishReason}
	var text, thought strings.Builder
	for _, p := range c.Content.Parts {
		if p.Thought {
			thought.WriteString(p.Text)
		} else {
			text.WriteString(p.Text)
		}
	}
	resp.Text, resp.Reasoning = text.String(), thought.String()
	if u := r.UsageMetadata; u != nil {
		resp.Usage = Usage{InputTokens: u.PromptTokenCount, OutputTokens: u.CandidatesTokenCount + u.ThoughtsTokenCount}
	}
	return resp, nil
}
