// Package relay is acu's feed and sense relay, compatible with the seed's
// hud-relay (001): a feed of text messages (ring of 100: transcripts from a
// bridge, advice from an assistant, the loop's own hud lines), a buffer of
// screen events from sense clients (ring of 30), an analysis loop that turns
// both into a short hud line and a rich digest with a cheap model, and a HUD
// page that shows the feed live.
//
// Where it sits: a feature. It reads nothing from the environment; cmd/acu
// builds Options from config (ACU_RELAY_*, AGENT_*) and either `acu serve`
// starts it beside the daemon or `acu relay` runs it alone. It uses
// internal/guard for the Host and Origin checks and for the HUD page's
// login (a one-time link's code swapped for a session header; no cookie);
// every other route needs Options.Token, which is required (Options.Open,
// ACU_RELAY_AUTH=none, lets the seed's routes answer without it, on a
// loopback listener only). internal/llm for
// the model (any OpenAI-compatible endpoint), and internal/store to keep
// analysis results across restarts. The sense client that feeds it is
// internal/sense.
//
// The loop (loop.go): every AGENT_INTERVAL_MS, or AGENT_DEBOUNCE_MS after
// new input, it builds the seed's context window (context.go), skips when
// no event arrived since the last tick (monotonic version counters, so a
// full ring still shows new events) or the window is empty, asks the model
// (then each fallback) with the seed's prompt, parses {hud, digest}
// (markdown fences stripped, raw text as the fallback), stores the entry,
// pushes "[🧠] <hud>" to the feed unless it repeats or is Idle, and updates
// the digest and the counters /health shows. Ticks never overlap; a model
// error is logged and counted, never fatal.
//
// What it does not do: capture the screen (internal/sense does), run the
// desktop agent (internal/agent), or think about the digest: the assistant
// polling /agent/digest does that.
package relay
