package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// RegisterTask records task t with status and appends lines to its
// progress log, in one transaction: a failure leaves no task half
// registered. An existing task (one a wait's outcome created first, or one
// registered again) takes t's title and status and gets the lines after
// its own.
func (db *DB) RegisterTask(ctx context.Context, t Task, status string, lines []string) error {
	if t.ID == "" {
		return errors.New("register task: id is required")
	}
	now := db.now()
	if t.CreatedAt.IsZero() {
		t.CreatedAt = now
	}
	return db.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO tasks (id, title, created_at, status) VALUES (?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET title = excluded.title, status = excluded.status`,
			t.ID, t.Title, t.CreatedAt.UnixMilli(), status); err != nil {
			return fmt.Errorf("register task %q: %w", t.ID, err)
		}
		for _, l := range lines {
			if _, err := tx.ExecContext(ctx, `INSERT INTO task_progress (task_id, at, message, run_id) VALUES (?, ?, ?, '')`,
				t.ID, now.UnixMilli(), l); err != nil {
				return fmt.Errorf("register task %q: %w", t.ID, err)
			}
		}
		return nil
	})
}

// AppendTaskLog adds message (if any) to task id's progress log and sets
// its status (if any, with a "status: …" line after the message), in one
// transaction: a failure leaves neither. The task must exist (the caller
// checks); status "" and message "" change nothing.
func (db *DB) AppendTaskLog(ctx context.Context, id, message, status string) error {
	if id == "" {
		return errors.New("append to task log: id is required")
	}
	now := db.now().UnixMilli()
	return db.tx(ctx, func(tx *sql.Tx) error {
		var lines []string
		if message != "" {
			lines = append(lines, message)
		}
		if status != "" {
			if _, err := tx.ExecContext(ctx, `UPDATE tasks SET status = ? WHERE id = ?`, status, id); err != nil {
				return fmt.Errorf("set status of task %q: %w", id, err)
			}
			lines = append(lines, "status: "+status)
		}
		for _, l := range lines {
			if _, err := tx.ExecContext(ctx, `INSERT INTO task_progress (task_id, at, message, run_id) VALUES (?, ?, ?, '')`,
				id, now, l); err != nil {
				return fmt.Errorf("append to task log %q: %w", id, err)
			}
		}
		return nil
	})
}
