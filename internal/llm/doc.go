// Package llm is acu's provider-neutral model client: one Chat call over
// OpenAI-compatible chat completions, Anthropic Messages and Google Gemini,
// with per-attempt timeouts, retries with jittered backoff, a circuit breaker,
// and usage and cost accounting.
//
// Where it sits: a leaf. The judge, the relay's analysis loop, the desktop
// agent and the orchestrator each hold a *Client per role (judge, relay,
// agent, planner), built by cmd/acu from config. A Client talks to one base
// URL in one wire format; each adapter (openai.go, anthropic.go, gemini.go)
// is a small hand-written encoder and tolerant decoder on net/http.
//
// What a call does: check the breaker, encode the request once, then up to
// 1+MaxRetries attempts, each under its own timeout and the caller's ctx.
// Network errors, attempt timeouts, 408/425/429 and 5xx are retried with
// jittered exponential backoff (github.com/cenkalti/backoff/v5); a 429's
// Retry-After (seconds or HTTP date) is honoured, capped. Other 4xx are not
// retried. The outcome feeds the breaker, the Ledger (cost per call, per run
// and in total) and the Prometheus Metrics.
//
// A call's cost is the provider's own figure when it reports one
// (OpenRouter's usage accounting: usage.cost, asked for with
// "usage":{"include":true}, on by itself for openrouter.ai), else the
// PriceTable's price times the tokens, else zero for a local model server
// (a loopback URL called without a key: Ollama, vLLM, LM Studio). Otherwise
// it is unknown, never a silent zero: Response.CostKnown is false and the
// Ledger counts the call as unpriced. CheckPriced tells a cost limit before
// the first call whether it can be kept.
//
// What it does not do: streaming, tools/function calls, or parsing of domain
// replies (YES/NO verdicts, agent actions): that belongs to the callers.
// ExtractJSON is the one provider-neutral helper for JSON-ish replies.
//
// Keys are secret.String: they reach only the request header, and provider
// messages that echo a key are scrubbed before they enter an error or a log.
//
// Package llmtest holds httptest servers speaking each provider's exact wire
// format, with fault injection, for every consumer's tests.
package llm
