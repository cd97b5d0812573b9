-- Run ownership: every acu process that runs work (serve, agent, task,
-- computer) is an owner instance holding a lease it renews by heartbeat.
-- A live run names its owner; another process may resume or end it only
-- once that owner's lease has expired (or, on the same host, once its
-- process is gone). pid_start is the process's start time in clock ticks
-- since boot (/proc/PID/stat field 22), so a reused pid is not mistaken for
-- the owner.
CREATE TABLE owners (
	id           TEXT PRIMARY KEY,
	host         TEXT NOT NULL,
	pid          INTEGER NOT NULL,
	pid_start    INTEGER NOT NULL DEFAULT 0,
	program      TEXT NOT NULL DEFAULT '',
	started_at   INTEGER NOT NULL,
	heartbeat_at INTEGER NOT NULL,
	lease_until  INTEGER NOT NULL,
	stopped_at   INTEGER
);
ALTER TABLE runs ADD COLUMN owner TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_owner_live ON runs (owner) WHERE ended_at IS NULL;

-- The outbox is claimed with a lease: one delivery attempt at a time per
-- message across processes.
ALTER TABLE outbox ADD COLUMN lease_owner TEXT NOT NULL DEFAULT '';
ALTER TABLE outbox ADD COLUMN lease_until INTEGER;
