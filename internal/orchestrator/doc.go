// Package orchestrator is acu's task loop (`acu run "<task>"`, POST
// /v1/tasks, the MCP tool run_task): the seed 003's dual-agent system on an
// X11 desktop. A fast agent acts every iteration on the element map
// (internal/elements); a planning agent gives strategy in the background;
// a verifier checks completion claims. Each role has its own model client.
//
// One iteration: check for user input (Watcher; input acu did not make
// pauses the run until it stops, recorded), adopt a finished background
// plan (its toGuidanceText form becomes the pinned first message and part
// of the enhanced task), extract the map, feed the stagnation Tracker (a
// layout seen 3 times in the last 10 is noted; a map unchanged 4 times in a
// row and for Options.RecoverAfter gets a recovery action: dismiss, scroll,
// back in turn, where dismiss never presses Escape on a window the task is
// about), then the five
// interaction points under their seed conditions:
//
//  1. iteration 1: initial planning starts in the background; the fast
//     agent does not wait;
//  2. every 3 iterations without completion the fast model checks progress;
//     without progress, recovery planning starts in the background;
//  3. 3+ step failures since the last plan, 3+ iterations after the last
//     consult: recovery planning in the background;
//  4. a completion claim the verifier rejects as the wrong task adds 3 to
//     the failure counter (so 3 triggers on the next failure);
//  5. in the final 5 iterations with failures since the last plan: one
//     blocking planning call.
//
// The fast agent's call carries the rules, the enhanced task (guidance,
// same-element loop diagnosis, the last 3 failures), the map and its diff;
// its conversation is the pinned task message plus the last 12 messages.
// Its steps run through Elements.Execute, which verifies each by
// re-extracting and retries once. Each task is a run of kind "task": every
// iteration, plan, check, verification, recovery and intervention is an
// event with its prompt, reply, latency and cost; the run ends completed,
// failed (max iterations, 50 by default) or cancelled, and a line per event
// goes to the task's progress log.
//
// What it does not do: build element maps or move the pointer itself
// (internal/elements, internal/input), pick models or read configuration
// (cmd/acu builds Options), or speak HTTP/MCP (internal/server,
// internal/mcpserver).
package orchestrator
