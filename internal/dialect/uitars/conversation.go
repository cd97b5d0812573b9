package uitars

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/acu-dev/acu/internal/dialect"
	"github.com/acu-dev/acu/internal/llm"
)

// Prompt is the computer-use prompt of UI-TARS (its model card's
// COMPUTER_USE template); the task is appended.
const Prompt = "You are a GUI agent. You are given a task and your action history, with screenshots. You need to perform the next action to complete the task.\n\n" +
	"## Output Format\n```\nThought: ...\nAction: ...\n```\n\n" +
	"## Action Space\n" +
	"click(start_box='<|box_start|>(x1,y1)<|box_end|>')\nleft_double(start_box='<|box_start|>(x1,y1)<|box_end|>')\nright_single(start_box='<|box_start|>(x1,y1)<|box_end|>')\n" +
	"drag(start_box='<|box_start|>(x1,y1)<|box_end|>', end_box='<|box_start|>(x3,y3)<|box_end|>')\nhotkey(key='')\n" +
	"type(content='') #If you want to submit your input, use \"\\n\" at the end of `content`.\n" +
	"scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', direction='down or up or right or left')\n" +
	"wait() #Sleep for 5s and take a screenshot to check for any changes.\nfinished(content='xxx') # Use escape characters \\', \\\", and \\n in content part to ensure we can parse the content in normal python string format.\n" +
	"call_user() # Submit the task and call the user when the task is unsolvable, or when you need the user's help.\n\n" +
	"## Note\n- Use English in `Thought` part.\n- Write a small plan and finally summarize your next action (with its target element) in one sentence in `Thought` part.\n\n" +
	"## User Instruction\n"

// History is how many screenshots stay in the conversation.
const History = 5

// Conversation is a computer-use loop's conversation with UI-TARS on an
// OpenAI-compatible chat endpoint: the prompt and task, then each output
// and the screenshot after it.
type Conversation struct {
	o    dialect.ConversationOptions
	msgs []llm.Message
	last string // the last output, sent back with its result
}

// NewConversation starts a conversation on o.Task; the first call takes
// a screenshot with o.Screenshot.
func NewConversation(o dialect.ConversationOptions) *Conversation {
	return &Conversation{o: o}
}

// Next calls the model and reads its output as one action item (the
// output itself, which Execute parses).
func (c *Conversation) Next(ctx context.Context, m dialect.Model) (dialect.Turn, error) {
	if c.msgs == nil {
		png, err := c.shot(ctx)
		if err != nil {
			return dialect.Turn{}, fmt.Errorf("take the first screenshot: %w", err)
		}
		c.msgs = []llm.Message{{Role: "user", Text: Prompt + c.o.Task}, {Role: "user", Images: []llm.Image{{MIME: "image/png", Data: png}}}}
	}
	r, err := m.Chat(ctx, llm.Request{Model: c.o.Model, Messages: prune(c.msgs), MaxTokens: c.o.MaxTokens, RunID: c.o.RunID})
	if err != nil {
		return dialect.Turn{}, err
	}
	c.last = r.Text
	item, _ := json.Marshal(r.Text)
	return dialect.Turn{Text: r.Text, Response: r, Items: []dialect.Item{{Kind: dialect.ItemAction, Raw: item, Shown: ActionPart(r.Text)}}}, nil
}

func (c *Conversation) shot(ctx context.Context) ([]byte, error) {
	if c.o.Screenshot == nil {
		return nil, errors.New("no screenshot source")
	}
	return c.o.Screenshot(ctx)
}

// Result hands back the output and the user message of its result (the
// screenshot after it, or what failed).
func (c *Conversation) Result(_ dialect.Item, result json.RawMessage, _ string) {
	c.msgs = append(c.msgs, llm.Message{Role: "assistant", Text: c.last}, chatMessage(result))
}

// Output: UI-TARS is offered no functions.
func (c *Conversation) Output(dialect.Item, string) {}

// Helped hands the task back after call_user, with what the user said and
// the screen as it is now.
func (c *Conversation) Helped(ctx context.Context, said string) error {
	png, err := c.shot(ctx)
	if err != nil {
		return fmt.Errorf("take a screenshot after the user's help: %w", err)
	}
	text := "The user has helped and hands the task back to you."
	if said != "" {
		text = "The user answered: " + said
	}
	c.msgs = append(c.msgs, llm.Message{Role: "assistant", Text: c.last}, llm.Message{Role: "user", Text: text, Images: []llm.Image{{MIME: "image/png", Data: png}}})
	return nil
}

// ActionPart is the action of an output (what follows its last
// "Action:"), or the whole output.
func ActionPart(s string) string {
	if i := strings.LastIndex(s, "Action:"); i >= 0 {
		return strings.TrimSpace(s[i+len("Action:"):])
	}
	return strings.TrimSpace(s)
}

// chatMessage turns a result item (an OpenAI-compatible user message)
// into a chat message.
func chatMessage(raw json.RawMessage) llm.Message {
	var m struct {
		Content []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			ImageURL struct {
				URL string `json:"url"`
			} `json:"image_url"`
		} `json:"content"`
	}
	_ = json.Unmarshal(raw, &m)
	out := llm.Message{Role: "user"}
	var texts []string
	for _, c := range m.Content {
		if c.Type == "text" {
			texts = append(texts, c.Text)
			continue
		}
		if _, data, ok := strings.Cut(c.ImageURL.URL, ";base64,"); ok {
			if b, err := base64.StdEncoding.DecodeString(data); err == nil {
				out.Images = append(out.Images, llm.Image{Data: b})
			}
		}
	}
	out.Text = strings.Join(texts, "\n")
	return out
}

// prune keeps the images of the last History messages that have one.
func prune(msgs []llm.Message) []llm.Message {
	out := make([]llm.Message, len(msgs))
	copy(out, msgs)
	seen := 0
	for i := len(out) - 1; i >= 0; i-- {
		if len(out[i].Images) == 0 {
			continue
		}
		if seen++; seen > History {
			out[i].Images = nil
			if out[i].Text == "" {
				out[i].Text = "(an older screenshot, left out)"
			}
		}
	}
	return out
}
