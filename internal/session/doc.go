// Package session is the harness every agent loop of acu runs in: `acu
// agent` (internal/agent), the task orchestrator (internal/orchestrator)
// and `acu computer` (internal/computer). It owns what the loops share and
// must not drift apart on:
//
//   - the budget: turns, model cost, and the refusal of a cost budget that
//     cannot be kept (a model without a price, before the first call; a
//     call that comes back with no cost, during the run) (Budget, Meter);
//   - the pause for a human: waiting while someone holds the display or
//     has touched it, until they let go or have been still long enough,
//     with the loop's own controls still heard (Hold); or, for a loop that
//     learns of the human only from the gate's refusal (a client of the
//     action API), until the refusal's quiet period has passed, then the
//     same effect again (UserFirst);
//   - the run's lifecycle: its events per turn, intervention and error,
//     and its end, recorded on the run registry (Run);
//   - a timeout for every model call that says which limit ran out (Call);
//   - the attribution of every effect to the loop and its run in the
//     gate's audit (Run.Acting): the loops act only through the gate.
//
// A loop keeps only what is its own: its prompt, its model's parsing and
// its turn's work. The package does no input and makes no model call of
// its own.
package session
