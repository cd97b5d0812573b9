package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// pruneBatch bounds how many rows one prune transaction deletes, so the
// writer is never held for long.
const pruneBatch = 5000

// PruneEvents deletes the progress events (every stream but lifecycle) of
// runs that ended before before, in batches, and returns how many it
// deleted; the judged frames of those runs go too (and the frames no run
// refers to any more). Runs, their lifecycle events, task logs and the
// outbox stay: a
// pruned run still has its start, its end and its result. A subscriber that
// resumes from an old cursor gets what is left.
func (db *DB) PruneEvents(ctx context.Context, before time.Time) (int64, error) {
	var total int64
	for {
		var n int64
		err := db.tx(ctx, func(tx *sql.Tx) error {
			res, err := tx.ExecContext(ctx, `DELETE FROM events WHERE cursor IN (
				SELECT e.cursor FROM events e JOIN runs r ON r.id = e.run_id
				WHERE e.stream <> 'lifecycle' AND r.ended_at IS NOT NULL AND r.ended_at < ?
				LIMIT ?)`, ms(before), pruneBatch)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		if err != nil {
			return total, fmt.Errorf("prune events of runs ended before %s: %w", before.UTC().Format(time.RFC3339), err)
		}
		total += n
		if n < pruneBatch {
			// The judged frames go with the events: retention as for them.
			_, err := db.pruneFrames(ctx, before)
			return total, err
		}
	}
}
