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

// Run is one unit of work (a wait job, an agent session, a task): a row of
// the runs table. A run is live while EndedAt is zero.
type Run struct {
	ID         string
	Kind       string
	SessionKey string
	TaskID     string
	Status     string
	StartedAt  time.Time
	EndedAt    time.Time
	Error      string
	Spec       json.RawMessage // the owner's data for resume
	Result     json.RawMessage
	UpdatedAt  time.Time
	// Owner is the id of the owner instance (a process, see Owner) whose
	// lease covers this run while it is live; empty for runs written before
	// ownership existed.
	Owner string
	// Host is the host (ACU_HOST_ID) whose daemon runs it: its display is
	// there. Empty for runs written before fleets.
	Host string
	// Creator is the principal (a token's id) whose request started the
	// run; empty when none did.
	Creator string
}

// Live reports whether the run has not ended.
func (r Run) Live() bool { return r.EndedAt.IsZero() }

// RunFilter selects runs for ListRuns. Zero fields do not filter.
type RunFilter struct {
	Kind   string
	Status string
	TaskID string
	// Live selects live (true) or ended (false) runs when set.
	Live *bool
	// Limit caps the page (default 100, at most 1000).
	Limit int
	// Before is a run id: only runs listed after it are returned. Runs are
	// listed newest first (started_at, then id, descending), so passing the
	// last id of a page fetches the next page.
	Before string
	// Display keeps runs whose spec names this display.
	Display string
	// Host keeps runs of this host.
	Host string
}

// RunEnd is how a run ended.
type RunEnd struct {
	ID      string
	Status  string
	Error   string
	Result  json.RawMessage
	EndedAt time.Time // the clock's now when zero
}

const runCols = `id, kind, session_key, task_id, status, started_at, ended_at, error, spec, result, updated_at, owner, host, creator`

type scanner interface{ Scan(...any) error }

func scanRun(s scanner) (Run, error) {
	var r Run
	var started, ended, updated sql.NullInt64
	var spec, result sql.NullString
	if err := s.Scan(&r.ID, &r.Kind, &r.SessionKey, &r.TaskID, &r.Status, &started, &ended, &r.Error, &spec, &result, &updated, &r.Owner, &r.Host, &r.Creator); err != nil {
		return Run{}, err
	}
	r.StartedAt, r.EndedAt, r.UpdatedAt = fromMS(started), fromMS(ended), fromMS(updated)
	r.Spec, r.Result = fromJSON(spec), fromJSON(result)
	return r, nil
}

// CreateRun inserts a new run. ErrExists when the id is taken. Zero
// StartedAt and UpdatedAt default to the clock's now.
func (db *DB) CreateRun(ctx context.Context, r Run) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		_, err := db.insertRun(ctx, tx, &r)
		return err
	})
}

// CreateRunEvent inserts a new run and its first event (the lifecycle start)
// in one transaction, returning the event with its cursor and seq assigned.
func (db *DB) CreateRunEvent(ctx context.Context, r Run, ev Event) (Event, error) {
	err := db.tx(ctx, func(tx *sql.Tx) error {
		if err := db.eventLock(ctx, tx); err != nil {
			return err
		}
		if _, err := db.insertRun(ctx, tx, &r); err != nil {
			return err
		}
		ev.RunID = r.ID
		return db.insertEvent(ctx, tx, &ev)
	})
	if err != nil {
		return Event{}, err
	}
	return ev, nil
}

func (db *DB) insertRun(ctx context.Context, tx *sql.Tx, r *Run) (Run, error) {
	if r.ID == "" || r.Kind == "" || r.Status == "" {
		return Run{}, fmt.Errorf("create run %q: id, kind and status are required", r.ID)
	}
	now := db.now()
	if r.StartedAt.IsZero() {
		r.StartedAt = now
	}
	if r.UpdatedAt.IsZero() {
		r.UpdatedAt = now
	}
	spec, err := jsonArg("spec", r.Spec)
	if err != nil {
		return Run{}, fmt.Errorf("create run %q: %w", r.ID, err)
	}
	result, err := jsonArg("result", r.Result)
	if err != nil {
		return Run{}, fmt.Errorf("create run %q: %w", r.ID, err)
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO runs (`+runCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO NOTHING`,
		r.ID, r.Kind, r.SessionKey, r.TaskID, r.Status, r.StartedAt.UnixMilli(), ms(r.EndedAt), r.Error, spec, result, r.UpdatedAt.UnixMilli(), r.Owner, r.Host, r.Creator)
	if err != nil {
		return Run{}, fmt.Errorf("create run %q: %w", r.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Run{}, fmt.Errorf("create run %q: %w", r.ID, ErrExists)
	}
	return *r, nil
}

// GetRun returns the run with that id, or ErrNotFound.
func (db *DB) GetRun(ctx context.Context, id string) (Run, error) {
	r, err := scanRun(db.r.QueryRowContext(ctx, `SELECT `+runCols+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, fmt.Errorf("get run %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return Run{}, fmt.Errorf("get run %q: %w", id, err)
	}
	return r, nil
}

// ListRuns returns runs matching f, newest first.
func (db *DB) ListRuns(ctx context.Context, f RunFilter) ([]Run, error) {
	where, args := db.runWhere(f)
	if f.Before != "" {
		var started int64
		err := db.r.QueryRowContext(ctx, `SELECT started_at FROM runs WHERE id = ?`, f.Before).Scan(&started)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("list runs before %q: %w", f.Before, ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("list runs before %q: %w", f.Before, err)
		}
		where = append(where, "(started_at < ? OR (started_at = ? AND id < ?))")
		args = append(args, started, started, f.Before)
	}
	q := `SELECT ` + runCols + ` FROM runs`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY started_at DESC, id DESC LIMIT ?"
	args = append(args, clampLimit(f.Limit, 100, 1000))
	return db.queryRuns(ctx, q, args...)
}

// runWhere is the WHERE clause of f's kind, status, task and live filters.
func (db *DB) runWhere(f RunFilter) (where []string, args []any) {
	if f.Kind != "" {
		where, args = append(where, "kind = ?"), append(args, f.Kind)
	}
	if f.Status != "" {
		where, args = append(where, "status = ?"), append(args, f.Status)
	}
	if f.TaskID != "" {
		where, args = append(where, "task_id = ?"), append(args, f.TaskID)
	}
	if f.Host != "" {
		where, args = append(where, "host = ?"), append(args, f.Host)
	}
	if f.Display != "" {
		where, args = append(where, db.jsonField("spec", "display")+" = ?"), append(args, f.Display)
	}
	if f.Live != nil {
		if *f.Live {
			where = append(where, "ended_at IS NULL")
		} else {
			where = append(where, "ended_at IS NOT NULL")
		}
	}
	return where, args
}

// CountRuns returns how many runs match f's kind, status, task and live
// filters (Limit and Before are ignored): the total behind a page.
func (db *DB) CountRuns(ctx context.Context, f RunFilter) (int, error) {
	where, args := db.runWhere(f)
	q := `SELECT count(*) FROM runs`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	var n int
	if err := db.r.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count runs: %w", err)
	}
	return n, nil
}

// LiveRuns returns every run that has not ended, oldest first.
func (db *DB) LiveRuns(ctx context.Context) ([]Run, error) {
	return db.queryRuns(ctx, `SELECT `+runCols+` FROM runs WHERE ended_at IS NULL ORDER BY started_at, id`)
}

func (db *DB) queryRuns(ctx context.Context, q string, args ...any) ([]Run, error) {
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}

// UpdateRunSpec replaces a live run's spec (a wait job's new criteria or
// deadline). ErrNotFound for an unknown run, ErrEnded for an ended one.
func (db *DB) UpdateRunSpec(ctx context.Context, id string, spec json.RawMessage) error {
	arg, err := jsonArg("spec", spec)
	if err != nil {
		return fmt.Errorf("update spec of run %q: %w", id, err)
	}
	return db.tx(ctx, func(tx *sql.Tx) error {
		if err := db.liveCheck(ctx, tx, id); err != nil {
			return fmt.Errorf("update spec of run %q: %w", id, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET spec = ?, updated_at = ? WHERE id = ?`, arg, db.now().UnixMilli(), id); err != nil {
			return fmt.Errorf("update spec of run %q: %w", id, err)
		}
		return nil
	})
}

// EndRun ends a live run. ErrEnded when it has already ended.
func (db *DB) EndRun(ctx context.Context, id, status, errMsg string, result json.RawMessage, endedAt time.Time) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		_, err := db.endRun(ctx, tx, RunEnd{ID: id, Status: status, Error: errMsg, Result: result, EndedAt: endedAt})
		return err
	})
}

// EndRunEvent ends a live run and appends its final event (the lifecycle
// end or error) in one transaction, so no reader ever sees one without the
// other. It returns the ended run and the event with cursor and seq assigned.
func (db *DB) EndRunEvent(ctx context.Context, end RunEnd, ev Event) (Run, Event, error) {
	var run Run
	err := db.tx(ctx, func(tx *sql.Tx) error {
		if err := db.eventLock(ctx, tx); err != nil {
			return err
		}
		var err error
		if run, err = db.endRun(ctx, tx, end); err != nil {
			return err
		}
		ev.RunID = end.ID
		return db.insertEvent(ctx, tx, &ev)
	})
	if err != nil {
		return Run{}, Event{}, err
	}
	return run, ev, nil
}

func (db *DB) endRun(ctx context.Context, tx *sql.Tx, end RunEnd) (Run, error) {
	if end.Status == "" {
		return Run{}, fmt.Errorf("end run %q: status is required", end.ID)
	}
	result, err := jsonArg("result", end.Result)
	if err != nil {
		return Run{}, fmt.Errorf("end run %q: %w", end.ID, err)
	}
	if err := db.liveCheck(ctx, tx, end.ID); err != nil {
		return Run{}, fmt.Errorf("end run %q: %w", end.ID, err)
	}
	now := db.now()
	if end.EndedAt.IsZero() {
		end.EndedAt = now
	}
	run, err := scanRun(tx.QueryRowContext(ctx, `UPDATE runs SET status = ?, ended_at = ?, error = ?, result = ?, updated_at = ?
		WHERE id = ? RETURNING `+runCols,
		end.Status, end.EndedAt.UnixMilli(), end.Error, result, now.UnixMilli(), end.ID))
	if err != nil {
		return Run{}, fmt.Errorf("end run %q: %w", end.ID, err)
	}
	return run, nil
}

// liveCheck returns ErrNotFound or ErrEnded unless run id is live.
func (db *DB) liveCheck(ctx context.Context, tx *sql.Tx, id string) error {
	var ended sql.NullInt64
	err := tx.StmtContext(ctx, db.stLive).QueryRowContext(ctx, id).Scan(&ended)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	if ended.Valid {
		return ErrEnded
	}
	return nil
}

func clampLimit(n, def, most int) int {
	if n <= 0 {
		return def
	}
	return min(n, most)
}
