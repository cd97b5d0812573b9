-- acu's first schema: runs and their append-only event stream, tasks with a
-- progress log, and the durable notification outbox. Timestamps are UTC unix
-- milliseconds; NULL means "not yet" (a live run has no ended_at). JSON
-- columns hold UTF-8 JSON text.

CREATE TABLE runs (
	id          TEXT PRIMARY KEY,
	kind        TEXT NOT NULL,
	session_key TEXT NOT NULL DEFAULT '',
	task_id     TEXT NOT NULL DEFAULT '',
	status      TEXT NOT NULL,
	started_at  INTEGER NOT NULL,
	ended_at    INTEGER,
	error       TEXT NOT NULL DEFAULT '',
	spec        TEXT,
	result      TEXT,
	updated_at  INTEGER NOT NULL
);
CREATE INDEX runs_started ON runs (started_at DESC, id DESC);
CREATE INDEX runs_live ON runs (started_at) WHERE ended_at IS NULL;
CREATE INDEX runs_task ON runs (task_id, started_at) WHERE task_id <> '';

-- cursor is the global, strictly increasing position in the stream that
-- subscribers resume from; AUTOINCREMENT never reuses a value.
CREATE TABLE events (
	cursor INTEGER PRIMARY KEY AUTOINCREMENT,
	run_id TEXT NOT NULL REFERENCES runs (id),
	seq    INTEGER NOT NULL,
	stream TEXT NOT NULL,
	at     INTEGER NOT NULL,
	data   TEXT,
	UNIQUE (run_id, seq)
);
CREATE INDEX events_run_cursor ON events (run_id, cursor);

CREATE TABLE tasks (
	id         TEXT PRIMARY KEY,
	title      TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL
);

CREATE TABLE task_progress (
	id      INTEGER PRIMARY KEY AUTOINCREMENT,
	task_id TEXT NOT NULL REFERENCES tasks (id),
	at      INTEGER NOT NULL,
	message TEXT NOT NULL,
	run_id  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX task_progress_task ON task_progress (task_id, id);

CREATE TABLE outbox (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	key          TEXT NOT NULL UNIQUE,
	notifier     TEXT NOT NULL,
	run_id       TEXT NOT NULL DEFAULT '',
	message      TEXT NOT NULL,
	payload      TEXT,
	created_at   INTEGER NOT NULL,
	next_at      INTEGER NOT NULL,
	attempts     INTEGER NOT NULL DEFAULT 0,
	delivered_at INTEGER,
	last_error   TEXT NOT NULL DEFAULT ''
);
CREATE INDEX outbox_due ON outbox (next_at, id) WHERE delivered_at IS NULL;
CREATE INDEX outbox_run ON outbox (run_id, id);

CREATE TABLE outbox_attempts (
	id        INTEGER PRIMARY KEY AUTOINCREMENT,
	outbox_id INTEGER NOT NULL REFERENCES outbox (id),
	at        INTEGER NOT NULL,
	ok        INTEGER NOT NULL,
	error     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX outbox_attempts_item ON outbox_attempts (outbox_id, id);
