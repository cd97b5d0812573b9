package dialect

import (
	"context"
	"encoding/json"

	"github.com/acu-dev/acu/internal/llm"
)

// Model is a computer-use model's endpoint (*llm.Client): raw calls for
// the vendors' own wire formats (Anthropic Messages, OpenAI Responses),
// chat for an OpenAI-compatible endpoint (UI-TARS).
type Model interface {
	Raw(ctx context.Context, req llm.RawRequest) (llm.RawResponse, error)
	Chat(ctx context.Context, req llm.Request) (llm.Response, error)
}

// Function is a tool of acu's own offered to the model beside the
// vendor's computer tool (acu's smart wait).
type Function struct {
	Name        string
	Description string
	Schema      json.RawMessage // the arguments' JSON schema
}

// ItemKind says what a model's item asks for.
type ItemKind int

// Item kinds.
const (
	// ItemAction is an action item of the vendor's computer tool, to run
	// with computer.Execute.
	ItemAction ItemKind = iota + 1
	// ItemFunction is a call of a Function (or of one acu did not offer).
	ItemFunction
)

// Item is one thing a model asked for in a turn.
type Item struct {
	Kind ItemKind
	// Raw is the action item as the vendor sent it (ItemAction), or the
	// function's arguments (ItemFunction).
	Raw json.RawMessage
	// Name is the function's name (ItemFunction); ID the vendor's id
	// of the call, for the answer.
	Name string
	ID   string
	// Shown is how a turn's record shows the item.
	Shown string
	// Pending are the ids of the item's pending safety checks (OpenAI),
	// which the loop acknowledges when the user said so beforehand.
	Pending []string
}

// Turn is a model's reply: its text, the items to run in order, and the
// call's usage and cost.
type Turn struct {
	Text     string
	Items    []Item
	Response llm.Response
}

// Conversation is one vendor's side of a computer-use loop: it holds the
// conversation in the vendor's wire format, makes each model call and
// reads the reply, and takes back what the loop ran. The loop
// (internal/computer) owns the rest: budgets, the user, the run.
type Conversation interface {
	// Next calls the model with the conversation so far and reads its
	// reply.
	Next(ctx context.Context, m Model) (Turn, error)
	// Result hands back an action item's result item (computer.Execute's
	// Result), with failure, when not empty, saying what went wrong.
	Result(it Item, result json.RawMessage, failure string)
	// Output hands back a function call's output.
	Output(it Item, out string)
	// Helped tells the model that the user helped as it asked (UI-TARS
	// call_user), with what they said and the screen as it is now.
	Helped(ctx context.Context, said string) error
}

// ConversationOptions configure a vendor's conversation.
type ConversationOptions struct {
	Task      string
	Model     string
	MaxTokens int
	RunID     string
	// Tool is the computer tool's declaration (computer.Tool's).
	Tool json.RawMessage
	// Version is the Anthropic tool version (its beta header).
	Version string
	// Functions are acu's tools offered beside it (not by UI-TARS).
	Functions []Function
	// Screenshot takes a PNG of the screen as the model is offered it,
	// for a vendor whose conversation starts with one (UI-TARS).
	Screenshot func(ctx context.Context) ([]byte, error)
}
