// Package computer runs computer-use models on acu. Execute takes one
// action item as a vendor's model sent it (an Anthropic tool_use block, an
// OpenAI computer_call, a UI-TARS output), translates it with the dialect
// packages, runs it on a dialect.Desktop (the action service) and answers
// the vendor's result item: the engine behind POST /v1/computer/{vendor}
// and the MCP computer tools. Loop (loop.go) is `acu computer`'s vendor
// loop: screenshot, model, action item, Execute, result, until the model
// is done or a budget runs out, recorded as a run of kind "computer".
// It does no input itself and holds no vendor's wire format beyond what
// its loop sends.
package computer
