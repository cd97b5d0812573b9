package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// OutboxItem is one notification to deliver through one notifier, at least
// once. Key is the idempotency key: enqueueing an existing key is a no-op.
type OutboxItem struct {
	ID          int64
	Key         string
	Notifier    string
	RunID       string
	Message     string
	Payload     json.RawMessage
	CreatedAt   time.Time
	NextAt      time.Time // when the next attempt is due
	Attempts    int
	DeliveredAt time.Time // zero until delivered
	LastError   string
	DeadAt      time.Time // zero unless dead-lettered: given up on, no longer due
}

// Dead reports whether the item has been dead-lettered.
func (o OutboxItem) Dead() bool { return !o.DeadAt.IsZero() }

// StreamDeadLetter is the run event written when one of its notifications
// is dead-lettered.
const StreamDeadLetter = "dead_letter"

// Delivered reports whether the item has been delivered.
func (o OutboxItem) Delivered() bool { return !o.DeliveredAt.IsZero() }

// OutboxAttempt is one recorded delivery attempt.
type OutboxAttempt struct {
	OutboxID int64
	At       time.Time
	OK       bool
	Error    string
}

// outboxFree is true for an outbox row no lease holds at ?1 (now, unix ms):
// never leased, its lease ran out, or its lease holder is a registered owner
// whose own lease has ended (a dispatcher in a process that died).
const outboxFree = `(lease_until IS NULL OR lease_until <= ?1 OR lease_owner IN
	(SELECT id FROM owners WHERE stopped_at IS NOT NULL OR lease_until <= ?1))`

const outboxCols = `id, key, notifier, run_id, message, payload, created_at, next_at, attempts, delivered_at, last_error, dead_at`

func (db *DB) scanOutbox(s scanner) (OutboxItem, error) {
	var o OutboxItem
	var payload sql.NullString
	var created, next, delivered, dead sql.NullInt64
	if err := s.Scan(&o.ID, &o.Key, &o.Notifier, &o.RunID, &o.Message, &payload, &created, &next, &o.Attempts, &delivered, &o.LastError, &dead); err != nil {
		return OutboxItem{}, err
	}
	o.Payload = fromJSON(payload)
	if db.pg {
		o.Message = unescapeNUL(o.Message)
	}
	o.CreatedAt, o.NextAt, o.DeliveredAt, o.DeadAt = fromMS(created), fromMS(next), fromMS(delivered), fromMS(dead)
	return o, nil
}

// Enqueue adds an item to the outbox unless one with the same Key exists.
// It returns the item's id (the existing one's on a duplicate) and whether
// it was inserted. A zero NextAt means due now.
func (db *DB) Enqueue(ctx context.Context, it OutboxItem) (id int64, inserted bool, err error) {
	if it.Key == "" || it.Notifier == "" {
		return 0, false, errors.New("enqueue notification: key and notifier are required")
	}
	payload, err := jsonArg("payload", it.Payload)
	if err != nil {
		return 0, false, fmt.Errorf("enqueue notification %q: %w", it.Key, err)
	}
	err = db.tx(ctx, func(tx *sql.Tx) error {
		now := db.now()
		if it.CreatedAt.IsZero() {
			it.CreatedAt = now
		}
		if it.NextAt.IsZero() {
			it.NextAt = it.CreatedAt
		}
		err := tx.QueryRowContext(ctx, `INSERT INTO outbox (key, notifier, run_id, message, payload, created_at, next_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING RETURNING id`,
			it.Key, it.Notifier, it.RunID, db.textArg(it.Message), payload, it.CreatedAt.UnixMilli(), it.NextAt.UnixMilli()).Scan(&id)
		if err == nil {
			inserted = true
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT id FROM outbox WHERE key = ?`, it.Key).Scan(&id)
	})
	if err != nil {
		return 0, false, fmt.Errorf("enqueue notification %q: %w", it.Key, err)
	}
	return id, inserted, nil
}

// DueOutbox returns up to limit undelivered, not dead-lettered items whose NextAt is not after
// now and that no dispatcher holds a lease on, earliest due first (then
// oldest first). Reading does not claim: a dispatcher claims each item with
// ClaimOutbox before its attempt.
func (db *DB) DueOutbox(ctx context.Context, now time.Time, limit int) ([]OutboxItem, error) {
	return db.queryOutbox(ctx, `SELECT `+outboxCols+` FROM outbox
		WHERE delivered_at IS NULL AND dead_at IS NULL AND next_at <= ?1 AND `+outboxFree+`
		ORDER BY next_at, id LIMIT ?2`,
		now.UnixMilli(), clampLimit(limit, 100, 10000))
}

// ClaimOutbox leases item id to owner until until, for one delivery
// attempt, if it is still as the caller read it: undelivered, not dead, due
// at now, attempted attempts times, and not leased to anyone (a lease of a
// registered owner whose own lease has ended counts as free). It reports
// whether the claim was won: of several dispatchers (in one process or
// many) reading the same due item, exactly one wins until the lease ends.
// RecordAttempt and DeadLetter release the lease; a dispatcher that dies
// mid-attempt leaves it to expire, after which the item is due again (at
// least once).
func (db *DB) ClaimOutbox(ctx context.Context, id int64, attempts int, owner string, now, until time.Time) (bool, error) {
	var won bool
	err := db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE outbox SET lease_owner = ?2, lease_until = ?3
			WHERE id = ?4 AND attempts = ?5 AND delivered_at IS NULL AND dead_at IS NULL AND next_at <= ?1 AND `+outboxFree,
			now.UnixMilli(), owner, until.UnixMilli(), id, attempts)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		won = n == 1
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("claim notification %d: %w", id, err)
	}
	return won, nil
}

// NextDue returns when the earliest undelivered item is due (or, when it is
// leased, when its lease ends); ok is false when nothing is pending. A
// dispatcher sleeps until then.
func (db *DB) NextDue(ctx context.Context) (at time.Time, ok bool, err error) {
	var next sql.NullInt64
	if err := db.r.QueryRowContext(ctx, `SELECT min(CASE WHEN lease_until > next_at THEN lease_until ELSE next_at END) FROM outbox WHERE delivered_at IS NULL AND dead_at IS NULL`).Scan(&next); err != nil {
		return time.Time{}, false, fmt.Errorf("read next due notification: %w", err)
	}
	return fromMS(next), next.Valid, nil
}

// RecordAttempt records one delivery attempt of item id. ok marks the item
// delivered; otherwise errMsg becomes its LastError and next its NextAt.
func (db *DB) RecordAttempt(ctx context.Context, id int64, ok bool, errMsg string, next time.Time) error {
	err := db.tx(ctx, func(tx *sql.Tx) error {
		now := db.now().UnixMilli()
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM outbox WHERE id = ?`, id).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		} else if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO outbox_attempts (outbox_id, at, ok, error) VALUES (?, ?, ?, ?)`,
			id, now, ok, errMsg); err != nil {
			return err
		}
		var err error
		if ok {
			_, err = tx.ExecContext(ctx, `UPDATE outbox SET attempts = attempts + 1, delivered_at = COALESCE(delivered_at, ?), last_error = '',
				lease_owner = '', lease_until = NULL WHERE id = ?`, now, id)
		} else {
			if next.IsZero() {
				next = time.UnixMilli(now)
			}
			_, err = tx.ExecContext(ctx, `UPDATE outbox SET attempts = attempts + 1, last_error = ?, next_at = ?,
				lease_owner = '', lease_until = NULL WHERE id = ?`, errMsg, next.UnixMilli(), id)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("record delivery attempt of notification %d: %w", id, err)
	}
	return nil
}

// DeadLetter records a last, failed attempt of item id and sets the item
// aside: it is never due again. When the item belongs to a run, a
// StreamDeadLetter event is appended to that run in the same transaction,
// even if the run has ended (a wait's run ends as soon as its notification
// is enqueued, long before delivery gives up): the one exception to "no
// events after the end". It returns the dead item.
func (db *DB) DeadLetter(ctx context.Context, id int64, errMsg string) (OutboxItem, error) {
	var it OutboxItem
	err := db.tx(ctx, func(tx *sql.Tx) error {
		now := db.now().UnixMilli()
		var err error
		it, err = db.scanOutbox(tx.QueryRowContext(ctx, `SELECT `+outboxCols+` FROM outbox WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		} else if err != nil {
			return err
		}
		if it.Delivered() || it.Dead() {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO outbox_attempts (outbox_id, at, ok, error) VALUES (?, ?, 0, ?)`,
			id, now, errMsg); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE outbox SET attempts = attempts + 1, last_error = ?, dead_at = ?,
			lease_owner = '', lease_until = NULL WHERE id = ?`,
			errMsg, now, id); err != nil {
			return err
		}
		it.Attempts++
		it.LastError = errMsg
		it.DeadAt = time.UnixMilli(now).UTC()
		if it.RunID == "" {
			return nil
		}
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM runs WHERE id = ?`, it.RunID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return nil
		} else if err != nil {
			return err
		}
		data, err := json.Marshal(map[string]any{"outboxId": it.ID, "key": it.Key, "notifier": it.Notifier,
			"attempts": it.Attempts, "error": errMsg})
		if err != nil {
			return err
		}
		ev := Event{RunID: it.RunID, Stream: StreamDeadLetter, Data: data}
		if err := db.eventLock(ctx, tx); err != nil {
			return err
		}
		return db.insertValid(ctx, tx, &ev)
	})
	if err != nil {
		return OutboxItem{}, fmt.Errorf("dead-letter notification %d: %w", id, err)
	}
	return it, nil
}

// DeadLetters returns up to limit dead-lettered items, newest first, and
// how many there are in all.
func (db *DB) DeadLetters(ctx context.Context, limit int) (items []OutboxItem, total int, err error) {
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM outbox WHERE dead_at IS NOT NULL`).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count dead letters: %w", err)
	}
	items, err = db.queryOutbox(ctx, `SELECT `+outboxCols+` FROM outbox WHERE dead_at IS NOT NULL
		ORDER BY dead_at DESC, id DESC LIMIT ?`, clampLimit(limit, 100, 10000))
	if err != nil {
		return nil, 0, err
	}
	return items, total, nil
}

// GetOutbox returns one outbox item, or ErrNotFound.
func (db *DB) GetOutbox(ctx context.Context, id int64) (OutboxItem, error) {
	o, err := db.scanOutbox(db.r.QueryRowContext(ctx, `SELECT `+outboxCols+` FROM outbox WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return OutboxItem{}, fmt.Errorf("get notification %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return OutboxItem{}, fmt.Errorf("get notification %d: %w", id, err)
	}
	return o, nil
}

// Outbox returns a run's outbox items, oldest first.
func (db *DB) Outbox(ctx context.Context, runID string) ([]OutboxItem, error) {
	return db.queryOutbox(ctx, `SELECT `+outboxCols+` FROM outbox WHERE run_id = ? ORDER BY id`, runID)
}

// OutboxAttempts returns the recorded attempts of item id, oldest first.
func (db *DB) OutboxAttempts(ctx context.Context, id int64) ([]OutboxAttempt, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT at, ok, error FROM outbox_attempts WHERE outbox_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, fmt.Errorf("read attempts of notification %d: %w", id, err)
	}
	defer rows.Close()
	var out []OutboxAttempt
	for rows.Next() {
		a := OutboxAttempt{OutboxID: id}
		var at int64
		if err := rows.Scan(&at, &a.OK, &a.Error); err != nil {
			return nil, fmt.Errorf("read attempts of notification %d: %w", id, err)
		}
		a.At = time.UnixMilli(at).UTC()
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read attempts of notification %d: %w", id, err)
	}
	return out, nil
}

func (db *DB) queryOutbox(ctx context.Context, q string, args ...any) ([]OutboxItem, error) {
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read outbox: %w", err)
	}
	defer rows.Close()
	var out []OutboxItem
	for rows.Next() {
		o, err := db.scanOutbox(rows)
		if err != nil {
			return nil, fmt.Errorf("read outbox: %w", err)
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read outbox: %w", err)
	}
	return out, nil
}
