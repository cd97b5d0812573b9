-- A fleet shares one database: each run names the host whose daemon runs
-- it (its displays are there). A run created on one daemon for another
-- host waits, unowned, until that host's daemon claims it; a run whose
-- host died is marked orphaned (status 'orphaned', still live) until that
-- host comes back. '' is the host of runs written before fleets: whoever
-- opens the database.
ALTER TABLE runs ADD COLUMN host TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_host_live ON runs (host) WHERE ended_at IS NULL;
