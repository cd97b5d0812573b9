package server

import (
	"context"
	"net/http"

	"github.com/acu-dev/acu/internal/api"
)

// TaskLogs is the task-log service (*tasklog.Service): an agent's tasks
// and their progress logs, the ones waits link to with task_id.
type TaskLogs interface {
	Register(ctx context.Context, req api.CreateTaskLog) (api.TaskLog, error)
	Append(ctx context.Context, id string, req api.AppendTaskLog) (api.TaskLog, error)
	Get(ctx context.Context, id string) (api.TaskLog, error)
	List(ctx context.Context, status string, limit int) (api.TaskLogList, error)
}

func (s *Server) taskLogs() (TaskLogs, error) {
	if s.opts.TaskLogs == nil {
		return nil, newErr(http.StatusServiceUnavailable, api.CodeUnavailable, "", "task logs are not available in this daemon")
	}
	return s.opts.TaskLogs, nil
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
	out, err := tl.Register(r.Context(), req)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/v1/tasklogs/"+out.ID)
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) handleAppendTaskLog(w http.ResponseWriter, r *http.Request) error {
	tl, err := s.taskLogs()
	if err != nil {
		return err
	}
	var req api.AppendTaskLog
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	out, err := tl.Append(r.Context(), r.PathValue("id"), req)
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
	out, err := tl.Get(r.Context(), r.PathValue("id"))
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
	limit, err := intParam(r.URL.Query().Get("limit"), "limit", 50, 1, 1000)
	if err != nil {
		return err
	}
	out, err := tl.List(r.Context(), r.URL.Query().Get("status"), limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
