package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// relayResultsKept bounds the relay_results table: older rows are deleted
// as new ones arrive.
const relayResultsKept = 1000

// RelayResult is one stored analysis result of the relay.
type RelayResult struct {
	ID     int64
	At     time.Time
	Entry  json.RawMessage // the relay's entry as served by /agent/last
	Digest json.RawMessage // the digest made with it; may be empty
}

// AppendRelayResult stores a result (replacing one with the same id) and
// trims the table to the newest 1000.
func (db *DB) AppendRelayResult(ctx context.Context, r RelayResult) error {
	if r.ID <= 0 {
		return errors.New("append relay result: id must be positive")
	}
	entry, err := jsonArg("append relay result: entry", r.Entry)
	if err != nil {
		return err
	}
	if entry == nil {
		return errors.New("append relay result: entry is required")
	}
	digest, err := jsonArg("append relay result: digest", r.Digest)
	if err != nil {
		return err
	}
	if r.At.IsZero() {
		r.At = db.now()
	}
	return db.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO relay_results (id, at, entry, digest) VALUES (?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET at = excluded.at, entry = excluded.entry, digest = excluded.digest`,
			r.ID, r.At.UnixMilli(), entry, digest); err != nil {
			return fmt.Errorf("append relay result %d: %w", r.ID, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM relay_results WHERE id <= ?`, r.ID-relayResultsKept); err != nil {
			return fmt.Errorf("trim relay results: %w", err)
		}
		return nil
	})
}

// RelayResults returns the newest limit results, newest first.
func (db *DB) RelayResults(ctx context.Context, limit int) ([]RelayResult, error) {
	limit = clampLimit(limit, 50, relayResultsKept)
	rows, err := db.r.QueryContext(ctx, `SELECT id, at, entry, digest FROM relay_results ORDER BY id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("read relay results: %w", err)
	}
	defer rows.Close()
	var out []RelayResult
	for rows.Next() {
		var r RelayResult
		var at int64
		var entry string
		var digest sql.NullString
		if err := rows.Scan(&r.ID, &at, &entry, &digest); err != nil {
			return nil, fmt.Errorf("read relay results: %w", err)
		}
		r.At = time.UnixMilli(at).UTC()
		r.Entry = json.RawMessage(entry)
		r.Digest = fromJSON(digest)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read relay results: %w", err)
	}
	return out, nil
}
