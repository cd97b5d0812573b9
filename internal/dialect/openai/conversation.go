package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acu-dev/acu/internal/dialect"
	"github.com/acu-dev/acu/internal/llm"
)

// Conversation is a computer-use loop's conversation on the Responses
// API: each call sends only the new input items and chains to the last
// response (previous_response_id).
type Conversation struct {
	o     dialect.ConversationOptions
	tools []any
	input []any
	prev  string
}

// reply is a Responses API response.
type reply struct {
	ID     string            `json:"id"`
	Model  string            `json:"model"`
	Output []json.RawMessage `json:"output"`
	Usage  struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
	Status string `json:"status"`
}

// outputItem is an item of a response's output.
type outputItem struct {
	Type      string          `json:"type"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Action    json.RawMessage `json:"action"`
	Actions   json.RawMessage `json:"actions"`
	Pending   []SafetyCheck   `json:"pending_safety_checks"`
	Content   []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// NewConversation starts a conversation on o.Task with the computer tool
// o.Tool and o.Functions.
func NewConversation(o dialect.ConversationOptions) *Conversation {
	c := &Conversation{o: o, tools: []any{o.Tool}}
	for _, f := range o.Functions {
		c.tools = append(c.tools, map[string]any{"type": "function", "name": f.Name, "description": f.Description, "parameters": f.Schema})
	}
	c.input = []any{map[string]any{"role": "user", "content": o.Task}}
	return c
}

func decodeUsage(b []byte) (llm.Response, error) {
	var r reply
	if err := json.Unmarshal(b, &r); err != nil {
		return llm.Response{}, err
	}
	return llm.Response{Model: r.Model, FinishReason: r.Status, Usage: llm.Usage{InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens}}, nil
}

// Next sends the new input and reads the reply: its messages' text, and
// an item per computer_call and function_call, in order.
func (c *Conversation) Next(ctx context.Context, m dialect.Model) (dialect.Turn, error) {
	req := map[string]any{"model": c.o.Model, "tools": c.tools, "input": c.input, "truncation": "auto",
		"reasoning": map[string]string{"summary": "concise"}}
	if c.prev != "" {
		req["previous_response_id"] = c.prev
	}
	body, _ := json.Marshal(req)
	r, err := m.Raw(ctx, llm.RawRequest{Path: "/responses", Body: body, Model: c.o.Model, RunID: c.o.RunID, Decode: decodeUsage})
	if err != nil {
		return dialect.Turn{}, err
	}
	var rep reply
	if err := json.Unmarshal(r.Body, &rep); err != nil {
		return dialect.Turn{}, fmt.Errorf("decode the model's reply: %w", err)
	}
	c.prev, c.input = rep.ID, nil
	t := dialect.Turn{Response: r.Response}
	for _, raw := range rep.Output {
		var it outputItem
		if json.Unmarshal(raw, &it) != nil {
			continue
		}
		switch it.Type {
		case "message":
			for _, p := range it.Content {
				t.Text = joinText(t.Text, p.Text)
			}
		case "function_call":
			t.Items = append(t.Items, dialect.Item{Kind: dialect.ItemFunction, Raw: json.RawMessage(it.Arguments), Name: it.Name, ID: it.CallID,
				Shown: it.Name + " " + it.Arguments})
		case "computer_call":
			a := it.Action
			if a == nil {
				a = it.Actions
			}
			item := dialect.Item{Kind: dialect.ItemAction, Raw: raw, ID: it.CallID, Shown: string(a)}
			for _, p := range it.Pending {
				item.Pending = append(item.Pending, p.ID)
			}
			t.Items = append(t.Items, item)
		}
	}
	return t, nil
}

func joinText(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n" + b
}

// Result hands back a computer_call_output. The Responses API has no
// error output: a failure is told to the model in a message after it.
func (c *Conversation) Result(_ dialect.Item, result json.RawMessage, failure string) {
	c.input = append(c.input, result)
	if failure != "" {
		c.input = append(c.input, map[string]any{"role": "user", "content": "The last computer action failed: " + failure})
	}
}

// Output hands back a function_call_output.
func (c *Conversation) Output(it dialect.Item, out string) {
	c.input = append(c.input, map[string]any{"type": "function_call_output", "call_id": it.ID, "output": out})
}

// Helped: computer use on the Responses API has no call for the user.
func (c *Conversation) Helped(context.Context, string) error {
	return errors.New("the computer tool has no call for the user")
}
