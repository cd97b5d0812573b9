// Package tasklog is the service of agents' task logs: a task an agent
// registers (a name and a plan), the progress lines it and acu's runs
// append (waits with its task_id add their outcomes), and its status. It
// validates what a caller sends, makes a task's id when none is given and
// keeps the log in the store; the HTTP routes and MCP tools only decode,
// call it and encode. It sits among the engines, on the store.
package tasklog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/store"
)

// Store keeps the tasks and their progress logs (*store.DB).
type Store interface {
	RegisterTask(ctx context.Context, t store.Task, status string, lines []string) error
	GetTask(ctx context.Context, id string) (store.Task, error)
	AppendTaskLog(ctx context.Context, id, message, status string) error
	TaskProgress(ctx context.Context, taskID string) ([]store.TaskEntry, error)
	TaskStatus(ctx context.Context, taskID string) (string, error)
	Tasks(ctx context.Context, status string, limit int) ([]store.TaskInfo, error)
}

// Service registers, appends to, reads and lists task logs.
type Service struct{ db Store }

// New is the service of the task logs db keeps.
func New(db Store) *Service { return &Service{db: db} }

// Kind says why a request was refused.
type Kind uint8

// Refusals.
const (
	Invalid  Kind = iota + 1 // the request is wrong (Field says where)
	NotFound                 // no such task
)

// Error is a refused request; Message says what to do.
type Error struct {
	Kind    Kind
	Field   string
	Message string
}

func (e *Error) Error() string { return e.Message }

func invalid(field, format string, args ...any) *Error {
	return &Error{Kind: Invalid, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Limits of what a task log takes.
const (
	maxName    = 500
	maxPlan    = 100
	maxStep    = 2000
	maxMessage = 16 << 10
)

// idPattern is compiled on first use, not at every acu start-up.
var idPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`) })

// Register records a task log: its name, status active, and its plan as
// its first lines ("plan 1: ..."). Without an id one is made (task_ and 12
// hex digits). It returns the log as stored.
func (s *Service) Register(ctx context.Context, req api.CreateTaskLog) (api.TaskLog, error) {
	req.Name = strings.TrimSpace(req.Name)
	if req.Name == "" {
		return api.TaskLog{}, invalid("name", "name is required: what the task is, e.g. \"export the report as PDF\"")
	}
	if err := plainText("name", req.Name, maxName); err != nil {
		return api.TaskLog{}, err
	}
	if len(req.Plan) > maxPlan {
		return api.TaskLog{}, invalid("plan", "plan has %d items: at most %d", len(req.Plan), maxPlan)
	}
	for _, p := range req.Plan {
		if err := plainText("plan", p, maxStep); err != nil {
			return api.TaskLog{}, err
		}
	}
	if req.ID == "" {
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		req.ID = "task_" + hex.EncodeToString(b)
	} else if !idPattern().MatchString(req.ID) {
		return api.TaskLog{}, invalid("task_id", "task_id %q: use 1 to 64 letters, digits, _ . : or -", req.ID)
	}
	lines := make([]string, len(req.Plan))
	for i, p := range req.Plan {
		lines[i] = "plan " + strconv.Itoa(i+1) + ": " + p
	}
	// One transaction: a task is never left without its status or part
	// of its plan.
	if err := s.db.RegisterTask(ctx, store.Task{ID: req.ID, Title: req.Name}, "active", lines); err != nil {
		return api.TaskLog{}, err
	}
	return s.Get(ctx, req.ID)
}

// Append adds a progress line, a new status (and a line saying so), or
// both, to a registered task log, and returns the log.
func (s *Service) Append(ctx context.Context, id string, req api.AppendTaskLog) (api.TaskLog, error) {
	if req.Message == "" && req.Status == "" {
		return api.TaskLog{}, invalid("message", "send a message, a status, or both")
	}
	if err := plainText("message", req.Message, maxMessage); err != nil {
		return api.TaskLog{}, err
	}
	if req.Status != "" && !slices.Contains(api.TaskLogStatuses, req.Status) {
		return api.TaskLog{}, invalid("status", "status %q: use one of %s", req.Status, strings.Join(api.TaskLogStatuses, ", "))
	}
	if _, err := s.db.GetTask(ctx, id); errors.Is(err, store.ErrNotFound) {
		return api.TaskLog{}, &Error{Kind: NotFound, Message: fmt.Sprintf("no task %q: register it first (POST /v1/tasklogs, MCP task_register)", id)}
	} else if err != nil {
		return api.TaskLog{}, err
	}
	if err := s.db.AppendTaskLog(ctx, id, req.Message, req.Status); err != nil {
		return api.TaskLog{}, err
	}
	return s.Get(ctx, id)
}

// Get returns a task log with its lines.
func (s *Service) Get(ctx context.Context, id string) (api.TaskLog, error) {
	t, err := s.db.GetTask(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return api.TaskLog{}, &Error{Kind: NotFound, Message: fmt.Sprintf("no task %q: list them with GET /v1/tasklogs", id)}
	}
	if err != nil {
		return api.TaskLog{}, err
	}
	status, err := s.db.TaskStatus(ctx, id)
	if err != nil {
		return api.TaskLog{}, err
	}
	es, err := s.db.TaskProgress(ctx, id)
	if err != nil {
		return api.TaskLog{}, err
	}
	out := api.TaskLog{ID: t.ID, Name: t.Title, Status: status, CreatedAt: t.CreatedAt, Count: len(es)}
	for _, e := range es {
		out.Entries = append(out.Entries, api.TaskLogEntry{At: e.At, Message: e.Message, RunID: e.RunID})
	}
	return out, nil
}

// List returns up to limit task logs, newest first, without their lines:
// those of status, or all for "" or "all".
func (s *Service) List(ctx context.Context, status string, limit int) (api.TaskLogList, error) {
	if status == "all" {
		status = ""
	}
	if status != "" && !slices.Contains(api.TaskLogStatuses, status) {
		return api.TaskLogList{}, invalid("status", "status %q: use all or one of %s", status, strings.Join(api.TaskLogStatuses, ", "))
	}
	ts, err := s.db.Tasks(ctx, status, limit)
	if err != nil {
		return api.TaskLogList{}, err
	}
	out := api.TaskLogList{Tasks: []api.TaskLog{}}
	for _, t := range ts {
		out.Tasks = append(out.Tasks, api.TaskLog{ID: t.ID, Name: t.Title, Status: t.Status, CreatedAt: t.CreatedAt, Count: t.Entries})
	}
	return out, nil
}

// plainText refuses control characters other than tab and newline, and
// more than max bytes.
func plainText(field, v string, max int) error {
	if len(v) > max {
		return invalid(field, "%s is %d bytes: at most %d", field, len(v), max)
	}
	for _, r := range v {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return invalid(field, "%s has a control character (%U): send plain text", field, r)
		}
	}
	return nil
}
