package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Frame is a stored frame a run saw: a judgement's JPEG (or an agent
// turn's annotated PNG) kept once per content hash.
type Frame struct {
	Hash          string
	JPEG          []byte // the encoded image: JPEG, or PNG
	Width, Height int
	CreatedAt     time.Time
}

// RunFrame says that a run saw the frame of Hash, first at At.
type RunFrame struct {
	Hash string
	At   time.Time
}

// PutRunFrame records that runID saw frame f: the JPEG is stored once per
// hash (a frame already there is not written again), the run's link once
// per hash with the first time it was seen.
func (db *DB) PutRunFrame(ctx context.Context, runID string, f Frame, at time.Time) error {
	err := db.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO frames(hash, jpeg, width, height, created_at) VALUES(?,?,?,?,?)
			ON CONFLICT(hash) DO NOTHING`, f.Hash, f.JPEG, f.Width, f.Height, ms(db.now())); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO run_frames(run_id, hash, at) VALUES(?,?,?)
			ON CONFLICT(run_id, hash) DO NOTHING`, runID, f.Hash, ms(at))
		return err
	})
	if err != nil {
		return fmt.Errorf("store frame %s of run %s: %w", f.Hash, runID, err)
	}
	return nil
}

// GetFrame returns the frame of hash, or ErrNotFound.
func (db *DB) GetFrame(ctx context.Context, hash string) (Frame, error) {
	var f Frame
	var created sql.NullInt64
	err := db.r.QueryRowContext(ctx, `SELECT hash, jpeg, width, height, created_at FROM frames WHERE hash = ?`, hash).
		Scan(&f.Hash, &f.JPEG, &f.Width, &f.Height, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return Frame{}, ErrNotFound
	}
	if err != nil {
		return Frame{}, fmt.Errorf("read frame %s: %w", hash, err)
	}
	f.CreatedAt = fromMS(created)
	return f, nil
}

// RunFrames lists the frames runID saw, oldest first.
func (db *DB) RunFrames(ctx context.Context, runID string) ([]RunFrame, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT hash, at FROM run_frames WHERE run_id = ? ORDER BY at, hash`, runID)
	if err != nil {
		return nil, fmt.Errorf("list frames of run %s: %w", runID, err)
	}
	defer rows.Close()
	var out []RunFrame
	for rows.Next() {
		var rf RunFrame
		var at sql.NullInt64
		if err := rows.Scan(&rf.Hash, &at); err != nil {
			return nil, fmt.Errorf("list frames of run %s: %w", runID, err)
		}
		rf.At = fromMS(at)
		out = append(out, rf)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list frames of run %s: %w", runID, err)
	}
	return out, nil
}

// pruneFrames deletes the frame links of runs that ended before before,
// then the frames no run refers to any more, in batches.
func (db *DB) pruneFrames(ctx context.Context, before time.Time) (int64, error) {
	var total int64
	for _, q := range []string{
		`DELETE FROM run_frames WHERE (run_id, hash) IN (SELECT f.run_id, f.hash FROM run_frames f JOIN runs r ON r.id = f.run_id
			WHERE r.ended_at IS NOT NULL AND r.ended_at < ? LIMIT ?)`,
		// A frame and its first link are written in one transaction, so an
		// unlinked frame is never one a run is about to use.
		`DELETE FROM frames WHERE hash IN (SELECT hash FROM frames
			WHERE NOT EXISTS (SELECT 1 FROM run_frames rf WHERE rf.hash = frames.hash) LIMIT ?)`,
	} {
		for {
			var n int64
			err := db.tx(ctx, func(tx *sql.Tx) error {
				args := []any{ms(before), pruneBatch}
				if strings.Count(q, "?") == 1 {
					args = args[1:]
				}
				res, err := tx.ExecContext(ctx, q, args...)
				if err != nil {
					return err
				}
				n, err = res.RowsAffected()
				return err
			})
			if err != nil {
				return total, fmt.Errorf("prune frames of runs ended before %s: %w", before.UTC().Format(time.RFC3339), err)
			}
			total += n
			if n < pruneBatch {
				break
			}
		}
	}
	return total, nil
}
