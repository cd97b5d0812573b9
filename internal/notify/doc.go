// Package notify wakes the agent: it delivers notifications from the durable
// outbox in internal/store through the exec and webhook notifiers, at least
// once, retrying with backoff and recording every attempt.
//
// Where it sits: a feature (the wait engine) calls Dispatcher.Notify (or the
// Enqueue function) when a job resolves or times out. That writes one outbox
// row per configured notifier, keyed "<notification key>:<notifier>", and
// returns once the rows are durable; it never waits for a delivery. The
// Dispatcher's Run loop, woken at once by Kick and otherwise every poll
// interval, reads due rows and delivers each through the notifier its row
// names, concurrently with a bound per notifier, so a hung endpoint only holds
// its own slots until its per-attempt timeout. Each attempt is recorded in the
// outbox (delivered, or failed with the reason and the next due time from a
// jittered exponential backoff that depends only on the stored attempt
// count). Because all state lives in the outbox, a restarted daemon delivers
// whatever was pending; a delivery cut short by shutdown is recorded as
// interrupted and due at once.
//
// Notifiers:
//   - Exec runs a program with the message as one argument, never through a
//     shell. Its default command line is "<openclaw> system event --text
//     <message> --mode now"; a template split by SplitCommand (shell-like
//     quoting, no expansion) replaces it. Success is exit status 0.
//   - Webhook POSTs JSON (a default wake body or a text/template) with an
//     Idempotency-Key, an HMAC-SHA256 signature of the body and an optional
//     bearer token. Success is a 2xx status.
//
// What it does not do: it does not decide what to say (the caller builds the
// message), does not read configuration (cmd/acu passes Options, Build turns
// the configured names into notifiers), and does not deduplicate deliveries at
// the receiver: at-least-once means a receiver may see a retry of a message it
// already accepted, with the same Idempotency-Key.
package notify
