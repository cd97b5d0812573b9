-- Dead letters: an outbox row that failed its last allowed attempt (or failed
-- in a way no retry can fix) is set aside with dead_at, no longer due, and
-- listed by `acu doctor`.
ALTER TABLE outbox ADD COLUMN dead_at INTEGER;
DROP INDEX outbox_due;
CREATE INDEX outbox_due ON outbox (next_at, id) WHERE delivered_at IS NULL AND dead_at IS NULL;
CREATE INDEX outbox_dead ON outbox (dead_at, id) WHERE dead_at IS NOT NULL;
