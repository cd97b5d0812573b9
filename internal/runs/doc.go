// Package runs is acu's one run model: the registry of live runs and the
// lifecycle stream every kind of work shares (wait jobs, agent sessions,
// orchestrated tasks).
//
// Where it sits: engines call Start, Emit and End; surfaces (HTTP, CLI, MCP)
// call Wait, Subscribe, Get and List. Everything is persisted through a small
// Store interface (satisfied by *store.DB) before anyone sees it.
//
// The contract (seed 004, adapted in issue 2):
//   - A run has one lifecycle on the "lifecycle" stream: phase "start" (seq 1)
//     when it starts, then exactly one "end" (or "error" when its status is
//     "error"). The final event and the run row's end are one transaction.
//   - Every event has a seq, strictly increasing per run, and a global cursor.
//     Both are assigned by the store inside the append transaction, and the
//     store refuses events for an ended run, so "no delta after the final"
//     holds even with many writers: late events are dropped, counted
//     (Dropped) and answered with ErrEnded.
//   - Wait resolves only on the lifecycle end or error; it has its own
//     timeout (ErrWaitTimeout) distinct from the run's outcome.
//   - Subscribe replays persisted events after a cursor, then follows live
//     ones, with no gap and no duplicate. Writers publish in cursor order
//     (one mutex covers commit and publication) into bounded per-subscriber
//     queues and never block: a subscriber whose queue overflows is dropped
//     from live delivery and its own goroutine catches up from the store,
//     where every event already is, before it rejoins. No event is lost and
//     no writer waits on a slow reader.
//   - Emit uses group commit: concurrent Emits queue while one writer
//     commits the previous batch, and the next batch is one transaction.
//     Each Emit still returns only after its own event is committed and
//     published; once queued it no longer watches its context.
//   - Every run has an owner: the process instance whose registry started it
//     (Own registers it with a heartbeat lease). Recover, at the daemon's
//     start and then periodically (Sweep), takes over only runs no lease
//     covers (the owner stopped, its lease ran out, or its pid on this host
//     is gone), with a compare-and-set so one process wins, offers each to
//     claim (a wait resumes) and ends the rest with phase "error" and
//     RestartMessage or OwnerLostMessage: a run never silently vanishes, and
//     a live process's runs are never touched.
//   - Events other processes write reach this registry's subscribers and
//     waiters from the store (tail.go), in one gap-free cursor order with
//     its own.
//
// Run ids are the run's kind (when it is a short lower-case word, else
// "run"), an underscore, and 12 random base32 characters (60 bits), for
// example "wait_k3v9q2m7x1ab". Callers may supply their own id.
//
// What it does not do: decide when a run ends (its owner does), deliver
// notifications (internal/notify), or speak HTTP (internal/server).
package runs
