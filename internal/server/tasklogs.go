package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/store"
)

// TaskLogs is what the task-log routes need (*store.DB): an agent's tasks
// and their progress logs, the ones waits link to with task_id.
type TaskLogs interface {
	CreateTask(ctx context.Context, t store.Task) error
	GetTask(ctx context.Context, id string) (store.Task, error)
	AppendTaskProgress(ctx context.Context, taskID, runID, message string) error
	TaskProgress(ctx context.Context, taskID string) ([]store.TaskEntry, error)
	SetTaskStatus(ctx context.Context, taskID, status string) error
	TaskStatus(ctx context.Context, taskID string) (string, error)
	Tasks(ctx context.Context, status string, limit int) ([]store.TaskInfo, error)
}

// taskIDPattern is compiled on first use, not at every acu start-up.
var taskIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`) })

func (s *Server) taskLogs() (TaskLogs, error) {
	if s.opts.TaskLogs == nil {
		return nil, newErr(http.StatusServiceUnavailable, api.CodeUnavailable, "", "task logs are not available in this daemon")
	}
	return s.opts.TaskLogs, nil
}

// plainText refuses control characters other than tab and newline, and
// more than max bytes.
func plainText(field, v string, max int) error {
	if len(v) > max {
		return errInvalid(field, "%s is %d bytes: at most %d", field, len(v), max)
	}
	for _, r := range v {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return errInvalid(field, "%s has a control character (%U): send plain text", field, r)
		}
	}
	return nil
}

func (s *Server) handleCreateTaskLog(w http.ResponseWriter, r *http.Request) error {
	tl, err := s.taskLogs()
	if err != nil {
		return err
	}
	var req api.CreateTaskLog
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	req.Name = strings.TrimSpace(req.Name)
	if req.Name == "" {
		return errInvalid("name", "name is required: what the task is, e.g. \"export the report as PDF\"")
	}
	if err := plainText("name", req.Name, 500); err != nil {
		return err
	}
	if len(req.Plan) > 100 {
		return errInvalid("plan", "plan has %d items: at most 100", len(req.Plan))
	}
	for _, p := range req.Plan {
		if err := plainText("plan", p, 2000); err != nil {
			return err
		}
	}
	if req.ID == "" {
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		req.ID = "task_" + hex.EncodeToString(b)
	} else if !taskIDPattern().MatchString(req.ID) {
		return errInvalid("task_id", "task_id %q: use 1 to 64 letters, digits, _ . : or -", req.ID)
	}
	ctx := r.Context()
	if err := tl.CreateTask(ctx, store.Task{ID: req.ID, Title: req.Name}); err != nil {
		return err
	}
	if err := tl.SetTaskStatus(ctx, req.ID, "active"); err != nil {
		return err
	}
	for i, p := range req.Plan {
		if err := tl.AppendTaskProgress(ctx, req.ID, "", "plan "+strconv.Itoa(i+1)+": "+p); err != nil {
			return err
		}
	}
	out, err := s.readTaskLog(ctx, tl, req.ID)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/v1/tasklogs/"+req.ID)
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) handleAppendTaskLog(w http.ResponseWriter, r *http.Request) error {
	tl, err := s.taskLogs()
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	var req api.AppendTaskLog
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	if req.Message == "" && req.Status == "" {
		return errInvalid("message", "send a message, a status, or both")
	}
	if err := plainText("message", req.Message, 16<<10); err != nil {
		return err
	}
	if req.Status != "" && !slices.Contains(api.TaskLogStatuses, req.Status) {
		return errInvalid("status", "status %q: use one of %s", req.Status, strings.Join(api.TaskLogStatuses, ", "))
	}
	ctx := r.Context()
	if _, err := tl.GetTask(ctx, id); errors.Is(err, store.ErrNotFound) {
		return errNotFound("no task %q: register it first (POST /v1/tasklogs, MCP task_register)", id)
	} else if err != nil {
		return err
	}
	if req.Message != "" {
		if err := tl.AppendTaskProgress(ctx, id, "", req.Message); err != nil {
			return err
		}
	}
	if req.Status != "" {
		if err := tl.SetTaskStatus(ctx, id, req.Status); err != nil {
			return err
		}
		if err := tl.AppendTaskProgress(ctx, id, "", "status: "+req.Status); err != nil {
			return err
		}
	}
	out, err := s.readTaskLog(ctx, tl, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) handleGetTaskLog(w http.ResponseWriter, r *http.Request) error {
	tl, err := s.taskLogs()
	if err != nil {
		return err
	}
	out, err := s.readTaskLog(r.Context(), tl, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) handleListTaskLogs(w http.ResponseWriter, r *http.Request) error {
	tl, err := s.taskLogs()
	if err != nil {
		return err
	}
	q := r.URL.Query()
	status := q.Get("status")
	if status == "all" {
		status = ""
	}
	if status != "" && !slices.Contains(api.TaskLogStatuses, status) {
		return errInvalid("status", "status %q: use all or one of %s", status, strings.Join(api.TaskLogStatuses, ", "))
	}
	limit, err := intParam(q.Get("limit"), "limit", 50, 1, 1000)
	if err != nil {
		return err
	}
	ts, err := tl.Tasks(r.Context(), status, limit)
	if err != nil {
		return err
	}
	out := api.TaskLogList{Tasks: []api.TaskLog{}}
	for _, t := range ts {
		out.Tasks = append(out.Tasks, api.TaskLog{ID: t.ID, Name: t.Title, Status: t.Status, CreatedAt: t.CreatedAt, Count: t.Entries})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) readTaskLog(ctx context.Context, tl TaskLogs, id string) (api.TaskLog, error) {
	t, err := tl.GetTask(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return api.TaskLog{}, errNotFound("no task %q: list them with GET /v1/tasklogs", id)
	}
	if err != nil {
		return api.TaskLog{}, err
	}
	status, err := tl.TaskStatus(ctx, id)
	if err != nil {
		return api.TaskLog{}, err
	}
	es, err := tl.TaskProgress(ctx, id)
	if err != nil {
		return api.TaskLog{}, err
	}
	out := api.TaskLog{ID: t.ID, Name: t.Title, Status: status, CreatedAt: t.CreatedAt, Count: len(es)}
	for _, e := range es {
		out.Entries = append(out.Entries, api.TaskLogEntry{At: e.At, Message: e.Message, RunID: e.RunID})
	}
	return out, nil
}
