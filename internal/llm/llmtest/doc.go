// Package llmtest provides httptest servers that speak each model provider's
// exact wire format (OpenAI-compatible chat completions, Anthropic Messages,
// Google Gemini generateContent), for tests of anything that calls models.
//
// A test supplies a Handler that receives the decoded, provider-neutral
// request (system prompt, messages, text, images decoded to image.Image from
// the JPEG or PNG actually sent) and returns a Reply. The server checks the
// request's wire format strictly (path, method, headers, auth, body layout,
// image encoding) and fails the test on any violation; it answers in the
// provider's response format, including usage; with Reply.CostUSD set the
// OpenAI-compatible server answers as OpenRouter does with usage accounting
// (usage.cost in credits, which are US dollars), and Request.UsageInclude
// says whether the client asked for it ("usage":{"include":true}). Faults can be queued: hang,
// error statuses (429 with Retry-After, 500, 401, ...), malformed JSON, empty
// choices, a slow byte stream, or any raw body.
//
//	srv := llmtest.NewOpenAI(t, func(r llmtest.Request) llmtest.Reply {
//		return llmtest.Reply{Text: "YES: the build finished"}
//	})
//	c := srv.Client(t, nil) // or llm.New(srv.Options()) with your changes
//	srv.Fail(llmtest.Fault{Kind: llmtest.RateLimit, RetryAfter: "1"})
//	resp, err := c.Chat(ctx, req) // retried after 1 s, then YES
//	last := srv.Last()            // last.Text(), last.Images()[0].Image, last.Header
//
// Text and Script are ready-made handlers.
//
// Where it sits: test-only, below every consumer of internal/llm (judge,
// smart wait, relay, agent, orchestrator). It does not stream, and it models
// only the endpoints acu calls.
package llmtest
