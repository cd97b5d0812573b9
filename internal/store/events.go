package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Event is one entry of the append-only event stream.
type Event struct {
	Cursor int64 // global position, assigned on append
	RunID  string
	Seq    int64 // per-run position, assigned on append: the run's previous seq + 1
	Stream string
	At     time.Time // the clock's now when zero
	Data   json.RawMessage
}

// EventFilter selects events for EventsAfter. Zero fields do not filter.
type EventFilter struct {
	RunID   string
	Streams []string
	// Limit caps the page (default 1000, at most 10000).
	Limit int
}

// AppendEvent appends ev to its run's stream, assigning Seq and Cursor.
// ErrNotFound when the run does not exist, ErrEnded when it has ended (the
// event is not stored).
func (db *DB) AppendEvent(ctx context.Context, ev Event) (Event, error) {
	err := db.tx(ctx, func(tx *sql.Tx) error {
		if err := db.eventLock(ctx, tx); err != nil {
			return err
		}
		if err := db.liveCheck(ctx, tx, ev.RunID); err != nil {
			return fmt.Errorf("append %s event to run %q: %w", ev.Stream, ev.RunID, err)
		}
		return db.insertEvent(ctx, tx, &ev)
	})
	if err != nil {
		return Event{}, err
	}
	return ev, nil
}

// AppendEvents appends a batch of events in one transaction (group
// commit), assigning each its Seq and Cursor in slice order. An event whose
// run is unknown or ended, or whose fields are invalid, is not stored and
// its entry in errs says why (ErrNotFound, ErrEnded); the others are. err
// reports a failure of the whole transaction, in which case nothing is
// stored.
func (db *DB) AppendEvents(ctx context.Context, evs []Event) (errs []error, err error) {
	errs = make([]error, len(evs))
	err = db.tx(ctx, func(tx *sql.Tx) error {
		clear(errs)
		if err := db.eventLock(ctx, tx); err != nil {
			return err
		}
		live := make(map[string]error, 4)
		for i := range evs {
			ev := &evs[i]
			lerr, seen := live[ev.RunID]
			if !seen {
				lerr = db.liveCheck(ctx, tx, ev.RunID)
				if lerr != nil && !errors.Is(lerr, ErrNotFound) && !errors.Is(lerr, ErrEnded) {
					return lerr
				}
				live[ev.RunID] = lerr
			}
			if lerr != nil {
				errs[i] = fmt.Errorf("append %s event to run %q: %w", ev.Stream, ev.RunID, lerr)
				continue
			}
			if err := validEvent(ev); err != nil {
				errs[i] = err
				continue
			}
			// Any SQL failure here fails the whole batch: after some errors
			// SQLite has already rolled the transaction back.
			if err := db.insertValid(ctx, tx, ev); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("append %d events: %w", len(evs), err)
	}
	return errs, nil
}

func validEvent(ev *Event) error {
	if ev.Stream == "" {
		return fmt.Errorf("append event to run %q: stream is required", ev.RunID)
	}
	if len(ev.Data) > 0 && !json.Valid(ev.Data) {
		return fmt.Errorf("append %s event to run %q: data: invalid JSON", ev.Stream, ev.RunID)
	}
	return nil
}

func (db *DB) insertEvent(ctx context.Context, tx *sql.Tx, ev *Event) error {
	if err := validEvent(ev); err != nil {
		return err
	}
	return db.insertValid(ctx, tx, ev)
}

// insertValid inserts an event validEvent accepted.
func (db *DB) insertValid(ctx context.Context, tx *sql.Tx, ev *Event) error {
	var data any
	if len(ev.Data) > 0 {
		data = string(ev.Data)
	}
	if ev.At.IsZero() {
		ev.At = db.now()
	} else {
		ev.At = ev.At.UTC().Truncate(time.Millisecond)
	}
	err := tx.StmtContext(ctx, db.stInsertEvent).QueryRowContext(ctx,
		ev.RunID, ev.Stream, ev.At.UnixMilli(), data).Scan(&ev.Cursor, &ev.Seq)
	if err != nil {
		return fmt.Errorf("append %s event to run %q: %w", ev.Stream, ev.RunID, err)
	}
	return nil
}

// EventsAfter returns events with a cursor greater than cursor, matching f,
// in cursor order.
func (db *DB) EventsAfter(ctx context.Context, cursor int64, f EventFilter) ([]Event, error) {
	var b strings.Builder
	b.WriteString(`SELECT cursor, run_id, seq, stream, at, data FROM events WHERE cursor > ?`)
	args := make([]any, 1, 3+len(f.Streams))
	args[0] = cursor
	if f.RunID != "" {
		b.WriteString(` AND run_id = ?`)
		args = append(args, f.RunID)
	}
	if len(f.Streams) > 0 {
		b.WriteString(` AND stream IN (?`)
		b.WriteString(strings.Repeat(`, ?`, len(f.Streams)-1))
		b.WriteString(`)`)
		for _, s := range f.Streams {
			args = append(args, s)
		}
	}
	b.WriteString(` ORDER BY cursor LIMIT ?`)
	limit := clampLimit(f.Limit, 1000, 10000)
	args = append(args, limit)
	rows, err := db.r.QueryContext(ctx, b.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("read events after %d: %w", cursor, err)
	}
	defer rows.Close()
	out := make([]Event, 0, min(limit, 64))
	for rows.Next() {
		var ev Event
		var at int64
		var data sql.NullString
		if err := rows.Scan(&ev.Cursor, &ev.RunID, &ev.Seq, &ev.Stream, &at, &data); err != nil {
			return nil, fmt.Errorf("read events after %d: %w", cursor, err)
		}
		ev.At = time.UnixMilli(at).UTC()
		ev.Data = fromJSON(data)
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read events after %d: %w", cursor, err)
	}
	return out, nil
}

// LastCursor returns the cursor of the newest event, 0 when there is none.
func (db *DB) LastCursor(ctx context.Context) (int64, error) {
	var c int64
	if err := db.r.QueryRowContext(ctx, `SELECT COALESCE(max(cursor), 0) FROM events`).Scan(&c); err != nil {
		return 0, fmt.Errorf("read last event cursor: %w", err)
	}
	return c, nil
}
