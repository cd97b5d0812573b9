// Package computer runs computer-use models on acu. Execute takes one
// action item as a vendor's model sent it (an Anthropic tool_use block, an
// OpenAI computer_call, a UI-TARS output), translates it with the dialect
// packages, runs it on a dialect.Desktop (the action service) and answers
// the vendor's result item: the engine behind POST /v1/computer/{vendor}
// and the MCP computer tools. Run (loop.go) is `acu computer`'s loop, one
// for every vendor: the vendor's dialect.Conversation makes the model call
// and reads its items, the loop runs each item through Execute on the
// daemon, hands the result back, and keeps what every loop keeps in the
// session harness (internal/session): the step and cost budgets, the user
// (a pause while they use the display, a hand-over when the model asks for
// them), and the run of kind "computer" with a turn event per model call.
// It does no input itself and holds no vendor's wire format.
package computer
