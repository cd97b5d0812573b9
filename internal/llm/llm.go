package llm

import (
	"context"
	"time"
)

// Provider names a wire format.
type Provider string

const (
	OpenAI    Provider = "openai"    // OpenAI-compatible chat completions: OpenRouter, vLLM, Ollama, OpenAI
	Anthropic Provider = "anthropic" // Anthropic Messages
	Gemini    Provider = "gemini"    // Google Gemini generateContent
)

// Image is an encoded image sent with a message.
type Image struct {
	MIME string // "image/jpeg" or "image/png"; sniffed from Data when empty
	Data []byte
	// Base64, when set, is Data's standard base64, shared by the caller
	// between calls that send the same image (frame.JPEGBase64): the request
	// body then points at it instead of holding a copy of its own.
	Base64 []byte
}

// Message is one turn of a conversation. Role is "user" or "assistant"
// ("" means "user").
type Message struct {
	Role   string
	Text   string
	Images []Image
}

// Request is one provider-neutral chat call.
type Request struct {
	Model       string // empty: the client's default model
	System      string
	Messages    []Message
	MaxTokens   int
	Temperature float64 // always sent (0 is greedy); Anthropic drops it when TopP is set
	TopP        float64 // 0: not sent
	JSON        bool    // ask for a JSON object reply where the provider supports it (not Anthropic)
	RunID       string  // optional: cost is also accounted to this run

	usageAccounting bool // ask for the provider's own cost (Options.UsageAccounting)
}

// Usage is what the provider reported for one call.
type Usage struct {
	InputTokens  int
	OutputTokens int
}

// Response is a completed call.
type Response struct {
	Text      string // the reply text (empty when the provider sent null content)
	Reasoning string // reasoning / reasoning_content / thinking, when present
	Refusal   string // the provider's refusal message, when it refused instead of answering
	// FinishReason is the provider's own stop reason as sent ("stop",
	// "length", "end_turn", "max_tokens", "STOP", "MAX_TOKENS", ...).
	FinishReason string
	Model        string // the model that answered, as reported
	Usage        Usage
	// CostUSD is the call's cost in US dollars: the provider's own figure
	// when it reports one (OpenRouter's usage accounting), else the price
	// table's, else 0 for a local model server. CostKnown is false when
	// none applies: the cost is unknown, not zero, and CostUSD is 0.
	CostUSD    float64
	CostKnown  bool
	CostSource CostSource
	// ProviderCost is the cost the provider reported, when it did.
	ProviderCost *float64
	Latency      time.Duration // wall time of the successful attempt
	Attempts     int
}

// CostSource says where a call's cost came from.
type CostSource string

const (
	CostUnknown  CostSource = ""         // no provider figure, no price: unknown
	CostProvider CostSource = "provider" // the provider's own report (OpenRouter usage.cost)
	CostTable    CostSource = "table"    // tokens times the PriceTable's price
	CostLocal    CostSource = "local"    // a local model server (loopback, no key): free
)

// Chatter is the one call every consumer needs. Consumers declare their own
// narrower interface; this one documents the shape *Client satisfies.
type Chatter interface {
	Chat(ctx context.Context, req Request) (Response, error)
}
