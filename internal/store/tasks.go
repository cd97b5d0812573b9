package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Task is a unit of user intent that runs report progress to.
type Task struct {
	ID        string
	Title     string
	CreatedAt time.Time
}

// TaskEntry is one line of a task's progress log.
type TaskEntry struct {
	ID      int64
	TaskID  string
	At      time.Time
	Message string
	RunID   string
}

// CreateTask records a task, or sets the title of an existing one (a task
// first seen through AppendTaskProgress has an empty title).
func (db *DB) CreateTask(ctx context.Context, t Task) error {
	if t.ID == "" {
		return errors.New("create task: id is required")
	}
	if t.CreatedAt.IsZero() {
		t.CreatedAt = db.now()
	}
	return db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO tasks (id, title, created_at) VALUES (?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET title = excluded.title`, t.ID, t.Title, t.CreatedAt.UnixMilli())
		if err != nil {
			return fmt.Errorf("create task %q: %w", t.ID, err)
		}
		return nil
	})
}

// GetTask returns a task, or ErrNotFound.
func (db *DB) GetTask(ctx context.Context, id string) (Task, error) {
	t := Task{ID: id}
	var created int64
	err := db.r.QueryRowContext(ctx, `SELECT title, created_at FROM tasks WHERE id = ?`, id).Scan(&t.Title, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, fmt.Errorf("get task %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return Task{}, fmt.Errorf("get task %q: %w", id, err)
	}
	t.CreatedAt = time.UnixMilli(created).UTC()
	return t, nil
}

// AppendTaskProgress appends a line to a task's progress log, creating the
// task when it does not exist yet. runID may be empty.
func (db *DB) AppendTaskProgress(ctx context.Context, taskID, runID, message string) error {
	if taskID == "" {
		return errors.New("append task progress: task id is required")
	}
	return db.tx(ctx, func(tx *sql.Tx) error {
		now := db.now().UnixMilli()
		if _, err := tx.ExecContext(ctx, `INSERT INTO tasks (id, created_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING`, taskID, now); err != nil {
			return fmt.Errorf("append progress to task %q: %w", taskID, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO task_progress (task_id, at, message, run_id) VALUES (?, ?, ?, ?)`,
			taskID, now, message, runID); err != nil {
			return fmt.Errorf("append progress to task %q: %w", taskID, err)
		}
		return nil
	})
}

// TaskProgress returns a task's progress log, oldest first; empty for an
// unknown task.
func (db *DB) TaskProgress(ctx context.Context, taskID string) ([]TaskEntry, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, at, message, run_id FROM task_progress WHERE task_id = ? ORDER BY id`, taskID)
	if err != nil {
		return nil, fmt.Errorf("read progress of task %q: %w", taskID, err)
	}
	defer rows.Close()
	var out []TaskEntry
	for rows.Next() {
		e := TaskEntry{TaskID: taskID}
		var at int64
		if err := rows.Scan(&e.ID, &at, &e.Message, &e.RunID); err != nil {
			return nil, fmt.Errorf("read progress of task %q: %w", taskID, err)
		}
		e.At = time.UnixMilli(at).UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read progress of task %q: %w", taskID, err)
	}
	return out, nil
}

// TaskInfo is a task with its status and the size of its progress log.
type TaskInfo struct {
	Task
	Status  string
	Entries int
	Last    time.Time // the newest progress entry (zero for none)
}

// SetTaskStatus sets a task's status, creating the task when needed.
func (db *DB) SetTaskStatus(ctx context.Context, taskID, status string) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO tasks (id, created_at, status) VALUES (?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET status = excluded.status`, taskID, db.now().UnixMilli(), status)
		if err != nil {
			return fmt.Errorf("set status of task %q: %w", taskID, err)
		}
		return nil
	})
}

// Tasks lists tasks, newest first, optionally by status, at most limit.
func (db *DB) Tasks(ctx context.Context, status string, limit int) ([]TaskInfo, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT t.id, t.title, t.created_at, t.status, COUNT(p.id), COALESCE(MAX(p.at), 0)
		FROM tasks t LEFT JOIN task_progress p ON p.task_id = t.id
		WHERE ? = '' OR t.status = ?
		GROUP BY t.id ORDER BY t.created_at DESC, t.id DESC LIMIT ?`, status, status, limit)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	defer rows.Close()
	var out []TaskInfo
	for rows.Next() {
		var t TaskInfo
		var created, last int64
		if err := rows.Scan(&t.ID, &t.Title, &created, &t.Status, &t.Entries, &last); err != nil {
			return nil, fmt.Errorf("list tasks: %w", err)
		}
		t.CreatedAt = time.UnixMilli(created).UTC()
		if last > 0 {
			t.Last = time.UnixMilli(last).UTC()
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// TaskStatus returns a task's status, or ErrNotFound.
func (db *DB) TaskStatus(ctx context.Context, taskID string) (string, error) {
	var s string
	err := db.r.QueryRowContext(ctx, `SELECT status FROM tasks WHERE id = ?`, taskID).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("task %q: %w", taskID, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("task %q: %w", taskID, err)
	}
	return s, nil
}
