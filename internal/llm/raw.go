package llm

import (
	"bytes"
	"context"
	"fmt"
)

// RawRequest is a call whose body the caller encodes itself, in a wire
// format Chat does not speak (Anthropic Messages with tools, OpenAI's
// Responses API, for the computer-use loops), with the client's auth,
// retries, breaker, usage and cost accounting.
type RawRequest struct {
	// Path is appended to the base URL, as "/v1/messages" or "/responses".
	Path  string
	Body  []byte
	Model string // for cost and logs; empty: the client's
	RunID string
	// Headers are sent besides the client's own (anthropic-beta).
	Headers map[string]string
	// Decode reads the reply's usage, model and stop reason into a
	// Response; an *APIError it returns is treated as the provider's.
	Decode func(body []byte) (Response, error)
}

// RawResponse is a raw call's reply: its body and what Decode read.
type RawResponse struct {
	Response
	Body []byte
}

// Raw sends req and returns the reply's body.
func (c *Client) Raw(ctx context.Context, req RawRequest) (RawResponse, error) {
	model := req.Model
	if model == "" {
		model = c.opts.Model
	}
	if req.Decode == nil {
		return RawResponse{}, fmt.Errorf("%s call to %s: raw request without a decoder", c.role, c.service)
	}
	probe, ok := c.breaker.allow(c.now())
	if !ok {
		h := c.breaker.health(c.now())
		return RawResponse{}, fmt.Errorf("%s call to %s model %s: %w (until %s; last error: %s)",
			c.role, c.service, model, ErrCircuitOpen, h.OpenUntil.UTC().Format("2006-01-02T15:04:05Z07:00"), h.LastError)
	}
	var raw []byte
	decode := func(b []byte) (Response, error) {
		r, err := req.Decode(b)
		if err == nil {
			raw = bytes.Clone(b) // b is a pooled buffer
		}
		return r, err
	}
	resp, err := c.call(ctx, model, req.RunID, probe, c.base+req.Path, body{req.Body}, req.Headers, decode)
	if err != nil {
		return RawResponse{}, err
	}
	return RawResponse{Response: resp, Body: raw}, nil
}
