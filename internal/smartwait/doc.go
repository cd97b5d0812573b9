// Package smartwait is acu's wait engine: an agent hands off a
// natural-language condition and a timeout, and the engine watches a target
// (the screen, a window, a crop, or a tmux pane), asks a judge YES/NO when the
// target changes, and wakes the agent through the durable notification outbox
// the moment the condition holds or the timeout passes.
//
// Where it sits: surfaces (HTTP, CLI, MCP) call Create, Get, List, Update,
// Cancel and Settle. Each wait job is a run of kind "wait" in the run
// registry (internal/runs): its lifecycle starts at Create, every judgement is
// a progress event on stream "verdict", every update one on stream "update",
// and it ends resolved, timeout, cancelled or error. Frames come from the
// capture hub (internal/capture), shared per display; change notifications
// come from its damage-driven Watch; verdicts from a judge backend
// (internal/judge); notifications go through internal/notify's outbox.
//
// When to judge: at once on a change notification for the job's target,
// otherwise at least every poll interval as a backstop. A frame whose exact
// content hash equals the last one this job judged under the same criteria is
// not judged again, and the same (criteria, content hash) is judged once
// across jobs (singleflight plus a small LRU of verdicts). There is no pixel
// threshold: any one-pixel change is a new hash and so a fresh judgement.
//
// Restart: the run's spec holds everything needed to resume (criteria,
// target, display, task id, absolute deadline, poll interval, history).
// Claim, given to runs.Recover, takes back live wait runs; a job whose
// deadline passed while acu was down ends as timed out and is notified.
//
// What it does not do: capture pixels, decide verdicts, deliver
// notifications or serve HTTP; those belong to capture, judge, notify and
// server. Settle is a model-free primitive that waits until a target stops
// changing.
package smartwait
