package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acu-dev/acu/internal/dialect"
	"github.com/acu-dev/acu/internal/llm"
)

// System is the system prompt of acu's loop on the computer tool.
const System = "You are operating a Linux desktop through the computer tool. Take a screenshot first. After each action acu waits until the screen is still and returns a screenshot, so you do not need to wait after actions. Use smart_wait for anything slow. When the task is done, answer with a short summary and no tool call."

// KeepImages is how many of the latest screenshots stay in the
// conversation sent to the model (as the vendor demo keeps 3): older ones
// become a note, so a long task does not resend every picture.
const KeepImages = 3

// Conversation is a computer-use loop's conversation on the Messages API.
type Conversation struct {
	o       dialect.ConversationOptions
	tools   []any
	beta    string
	msgs    []message
	pending *message // the last reply, sent back with its results
	results []json.RawMessage
}

type message struct {
	Role    string            `json:"role"`
	Content []json.RawMessage `json:"content"`
}

type toolDecl struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// reply is a Messages API response.
type reply struct {
	Content []struct {
		Type  string          `json:"type"`
		Text  string          `json:"text,omitempty"`
		ID    string          `json:"id,omitempty"`
		Name  string          `json:"name,omitempty"`
		Input json.RawMessage `json:"input,omitempty"`
	} `json:"content"`
	StopReason string `json:"stop_reason"`
	Model      string `json:"model"`
	Usage      struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

// NewConversation starts a conversation on o.Task with the computer tool
// o.Tool (of version o.Version) and o.Functions.
func NewConversation(o dialect.ConversationOptions) *Conversation {
	c := &Conversation{o: o, tools: []any{o.Tool}, beta: Tool{Version: o.Version}.BetaHeader()}
	for _, f := range o.Functions {
		c.tools = append(c.tools, toolDecl{Name: f.Name, Description: f.Description, InputSchema: f.Schema})
	}
	task, _ := json.Marshal(map[string]string{"type": "text", "text": o.Task})
	c.msgs = []message{{Role: "user", Content: []json.RawMessage{task}}}
	return c
}

func decodeUsage(b []byte) (llm.Response, error) {
	var r reply
	if err := json.Unmarshal(b, &r); err != nil {
		return llm.Response{}, err
	}
	return llm.Response{Model: r.Model, FinishReason: r.StopReason, Usage: llm.Usage{InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens}}, nil
}

// Next sends the conversation (with the last reply's results) and reads
// the reply: its text, and a tool_use item per call, in order.
func (c *Conversation) Next(ctx context.Context, m dialect.Model) (dialect.Turn, error) {
	if c.pending != nil {
		c.msgs = append(c.msgs, *c.pending, message{Role: "user", Content: c.results})
		c.pending, c.results = nil, nil
	}
	body, _ := json.Marshal(map[string]any{"model": c.o.Model, "max_tokens": c.o.MaxTokens, "system": System, "tools": c.tools, "messages": prune(c.msgs)})
	r, err := m.Raw(ctx, llm.RawRequest{Path: "/v1/messages", Body: body, Model: c.o.Model, RunID: c.o.RunID,
		Headers: map[string]string{"anthropic-beta": c.beta}, Decode: decodeUsage})
	if err != nil {
		return dialect.Turn{}, err
	}
	var rep reply
	if err := json.Unmarshal(r.Body, &rep); err != nil {
		return dialect.Turn{}, fmt.Errorf("decode the model's reply: %w", err)
	}
	t := dialect.Turn{Response: r.Response}
	assistant := message{Role: "assistant"}
	for i, b := range rep.Content {
		raw, _ := json.Marshal(rep.Content[i])
		assistant.Content = append(assistant.Content, raw)
		switch b.Type {
		case "text":
			t.Text = joinText(t.Text, b.Text)
		case "tool_use":
			it := dialect.Item{Kind: dialect.ItemAction, Raw: raw, ID: b.ID, Name: b.Name, Shown: b.Name + " " + string(b.Input)}
			if b.Name != ToolName && c.function(b.Name) {
				it.Kind, it.Raw = dialect.ItemFunction, b.Input
			}
			t.Items = append(t.Items, it)
		}
	}
	c.pending = &assistant
	return t, nil
}

func (c *Conversation) function(name string) bool {
	for _, f := range c.o.Functions {
		if f.Name == name {
			return true
		}
	}
	return false
}

func joinText(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n" + b
}

// Result hands back a computer tool call's tool_result (which already
// says what failed).
func (c *Conversation) Result(_ dialect.Item, result json.RawMessage, _ string) {
	c.results = append(c.results, result)
}

// Output hands back a function's output as a text tool_result.
func (c *Conversation) Output(it dialect.Item, out string) {
	b, _ := json.Marshal(map[string]any{"type": "tool_result", "tool_use_id": it.ID, "content": []map[string]string{{"type": "text", "text": out}}})
	c.results = append(c.results, b)
}

// Helped: the computer tool has no call for the user.
func (c *Conversation) Helped(context.Context, string) error {
	return errors.New("the computer tool has no call for the user")
}

// prune replaces the images of all but the last KeepImages tool results
// with a note.
func prune(msgs []message) []message {
	seen := 0
	out := make([]message, len(msgs))
	copy(out, msgs)
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Role != "user" {
			continue
		}
		var content []json.RawMessage
		changed := false
		for _, c := range out[i].Content {
			var tr ToolResult
			if json.Unmarshal(c, &tr) != nil || tr.Type != "tool_result" {
				content = append(content, c)
				continue
			}
			var kept []Content
			for _, p := range tr.Content {
				if p.Type == "image" {
					seen++
					if seen > KeepImages {
						p = Content{Type: "text", Text: "(an older screenshot, left out)"}
						changed = true
					}
				}
				kept = append(kept, p)
			}
			tr.Content = kept
			b, _ := json.Marshal(tr)
			content = append(content, b)
		}
		if changed {
			out[i] = message{Role: out[i].Role, Content: content}
		}
	}
	return out
}
