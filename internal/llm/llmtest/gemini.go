package llmtest

import (
	"fmt"
	"net/http"
	"strings"
)

type geminiProto struct{}

func (geminiProto) auth(h http.Header, key string) (int, string) {
	if h.Get("x-goog-api-key") == key {
		return 0, ""
	}
	// Gemini answers a bad key with 400 INVALID_ARGUMENT, not 401.
	return http.StatusBadRequest, "API key not valid. Please pass a valid API key."
}

type gemWireRequest struct {
	SystemInstruction *gemWireContent  `json:"systemInstruction"`
	Contents          []gemWireContent `json:"contents"`
	GenerationConfig  *struct {
		MaxOutputTokens  *int     `json:"maxOutputTokens"`
		Temperature      *float64 `json:"temperature"`
		TopP             *float64 `json:"topP"`
		ResponseMimeType string   `json:"responseMimeType"`
	} `json:"generationConfig"`
}

type gemWireContent struct {
	Role  string        `json:"role"`
	Parts []gemWirePart `json:"parts"`
}

type gemWireBlob struct {
	MimeType  string `json:"mime_type"`
	MimeType2 string `json:"mimeType"`
	Data      string `json:"data"`
}

type gemWirePart struct {
	Text        *string      `json:"text"`
	InlineData  *gemWireBlob `json:"inline_data"`
	InlineData2 *gemWireBlob `json:"inlineData"`
}

func (geminiProto) decode(r *http.Request, body []byte) (Request, error) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1beta/models/")
	model, verb, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 || model == "" || verb != "generateContent" {
		return Request{}, fmt.Errorf("path %q: want /v1beta/models/{model}:generateContent", r.URL.Path)
	}
	if strings.Contains(model, "/") {
		return Request{}, fmt.Errorf("model %q in the path: no provider prefix", model)
	}
	if r.URL.Query().Has("key") {
		return Request{}, fmt.Errorf("key in the query string: send it in the x-goog-api-key header")
	}
	var w gemWireRequest
	if err := strictJSON(body, &w); err != nil {
		return Request{}, err
	}
	if len(w.Contents) == 0 {
		return Request{}, fmt.Errorf("contents: empty")
	}
	req := Request{Model: model}
	if g := w.GenerationConfig; g != nil {
		if g.MaxOutputTokens != nil {
			req.MaxTokens = *g.MaxOutputTokens
		}
		if g.Temperature != nil {
			req.Temperature = *g.Temperature
		}
		if g.TopP != nil {
			req.TopP = *g.TopP
		}
		switch g.ResponseMimeType {
		case "", "text/plain":
		case "application/json":
			req.JSON = true
		default:
			return Request{}, fmt.Errorf("generationConfig.responseMimeType %q", g.ResponseMimeType)
		}
	}
	if si := w.SystemInstruction; si != nil {
		for _, p := range si.Parts {
			if p.Text == nil {
				return Request{}, fmt.Errorf("systemInstruction: only text parts")
			}
			req.System += *p.Text
		}
	}
	for i, c := range w.Contents {
		msg := Message{}
		switch c.Role {
		case "user", "":
			msg.Role = "user"
		case "model":
			msg.Role = "assistant"
		default:
			return Request{}, fmt.Errorf("contents[%d]: role %q: want user or model", i, c.Role)
		}
		if len(c.Parts) == 0 {
			return Request{}, fmt.Errorf("contents[%d]: no parts", i)
		}
		var text []string
		for j, p := range c.Parts {
			blob := p.InlineData
			if blob == nil {
				blob = p.InlineData2
			}
			switch {
			case p.Text != nil && blob == nil:
				text = append(text, *p.Text)
			case blob != nil && p.Text == nil:
				mime := blob.MimeType
				if mime == "" {
					mime = blob.MimeType2
				}
				data, err := decodeBase64(blob.Data)
				if err != nil {
					return Request{}, fmt.Errorf("contents[%d].parts[%d].inline_data.data: %v", i, j, err)
				}
				img, err := decodeImage(mime, data)
				if err != nil {
					return Request{}, fmt.Errorf("contents[%d].parts[%d]: %v", i, j, err)
				}
				msg.Images = append(msg.Images, img)
			default:
				return Request{}, fmt.Errorf("contents[%d].parts[%d]: want exactly one of text or inline_data", i, j)
			}
		}
		msg.Text = strings.Join(text, "\n")
		req.Messages = append(req.Messages, msg)
	}
	return req, nil
}

func (geminiProto) reply(req *Request, rep Reply, id int) []byte {
	parts := []any{}
	if rep.Reasoning != "" {
		parts = append(parts, map[string]any{"text": rep.Reasoning, "thought": true})
	}
	parts = append(parts, map[string]any{"text": rep.Text})
	return mustJSON(map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"parts": parts, "role": "model"},
			"finishReason": "STOP",
			"index":        0,
		}},
		"usageMetadata": map[string]any{
			"promptTokenCount":     rep.Usage.InputTokens,
			"candidatesTokenCount": rep.Usage.OutputTokens,
			"totalTokenCount":      rep.Usage.InputTokens + rep.Usage.OutputTokens,
		},
		"modelVersion": rep.Model,
		"responseId":   fmt.Sprintf("llmtest-%d", id),
	})
}

func (geminiProto) empty(req *Request, id int) []byte {
	return mustJSON(map[string]any{
		"usageMetadata": map[string]any{"promptTokenCount": 1, "totalTokenCount": 1},
		"modelVersion":  req.Model,
		"responseId":    fmt.Sprintf("llmtest-%d", id),
	})
}

func (geminiProto) errorBody(status int, msg string) []byte {
	st := "INVALID_ARGUMENT"
	switch {
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		st = "PERMISSION_DENIED"
	case status == http.StatusNotFound:
		st = "NOT_FOUND"
	case status == http.StatusTooManyRequests:
		st = "RESOURCE_EXHAUSTED"
	case status == http.StatusServiceUnavailable:
		st = "UNAVAILABLE"
	case status >= 500:
		st = "INTERNAL"
	}
	return mustJSON(map[string]any{"error": map[string]any{"code": status, "message": msg, "status": st}})
}
