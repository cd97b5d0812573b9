// Package store is acu's durable state: one SQLite file (pure-Go driver) in
// WAL mode holding runs, their append-only event stream, tasks with their
// progress log, and the notification outbox with every delivery attempt.
//
// Where it sits: engines (internal/runs, internal/notify, the wait engine)
// call the concrete *DB through small interfaces they declare themselves; the
// server never talks SQL. Screenshots and other large artefacts are files
// referenced by path inside the JSON columns, never blobs.
//
// How it writes: every write is one immediate transaction on a single writer
// connection (the tx helper), so concurrent writers in one process queue in
// Go instead of spinning on SQLITE_BUSY, and busy_timeout covers a second
// process on the same file. Reads use a separate pool of read-only
// connections, which WAL lets run beside the writer. synchronous=NORMAL makes
// every committed transaction survive a crash of the process (not of the
// machine's power), which is the daemon's crash model.
//
// Invariants kept here, not by callers: an event's seq is assigned inside the
// append transaction as the run's previous seq + 1 (strictly increasing per
// run under any number of writers), the global cursor is SQLite's
// AUTOINCREMENT key (never reused), and no event is appended to a run once it
// has ended (ErrEnded). Schema changes are numbered files under migrations/,
// applied in order, one transaction each, recorded in schema_migrations.
//
// Ownership and leases: the owners table holds each process instance that
// runs work, with a lease it renews; runs.owner names a live run's owner and
// TakeRun moves it only from the owner the caller saw (compare-and-set).
// Outbox rows are claimed for one attempt with ClaimOutbox, a lease that
// also ends when its holder's owner lease ends.
//
// What it does not do: publish events to subscribers, decide lifecycle
// phases, or deliver notifications; internal/runs and internal/notify do.
// Timestamps are stored as UTC unix milliseconds, so times read back are
// truncated to the millisecond.
package store
