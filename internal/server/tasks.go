package server

import (
	"context"
	"net/http"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/orchestrator"
	"github.com/acu-dev/acu/internal/runs"
)

// Tasks is what the server needs from the task orchestrator
// (*orchestrator.Orchestrator): start a task in the background and return
// its run. Cancelling goes through POST /v1/runs/{id}/cancel with the
// orchestrator's Cancel as the "task" canceller; waiting through
// /v1/runs/{id}/wait; progress through /v1/events?run=ID.
type Tasks interface {
	Start(ctx context.Context, s orchestrator.Spec) (runs.Run, error)
}

// CreateTaskRequest is the body of POST /v1/tasks.
type CreateTaskRequest struct {
	// Host runs the task on another daemon of a fleet (its ACU_HOST_ID):
	// stored for that daemon to claim and run on its display.
	Host          string `json:"host,omitempty"`
	Task          string `json:"task"`
	TaskID        string `json:"taskId,omitempty"`
	MaxIterations int    `json:"maxIterations,omitempty"`
}

// maxTaskIterations bounds a request's maxIterations.
const maxTaskIterations = 1000

// handleCreateTask returns the POST /v1/tasks handler over t (nil: the
// route answers 503). It answers 202 with the task's run, which is live
// until the task ends (completed, failed or cancelled).
func (s *Server) handleCreateTask(t Tasks) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if t == nil && s.opts.Fleet == nil {
			return newErr(http.StatusServiceUnavailable, api.CodeUnavailable, "",
				"the task orchestrator is not running in this daemon: configure ACU_TASK_* (a model key and a display) and restart it")
		}
		var req CreateTaskRequest
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		if req.Task == "" {
			return errInvalid("task", "task is required: say what to do on the desktop, e.g. \"fill the name field with Ada and press OK\"")
		}
		if req.MaxIterations < 0 || req.MaxIterations > maxTaskIterations {
			return errInvalid("maxIterations", "maxIterations must be 0 (the default) to %d, got %d", maxTaskIterations, req.MaxIterations)
		}
		spec := orchestrator.Spec{Task: req.Task, TaskID: req.TaskID, MaxIterations: req.MaxIterations}
		remote, err := s.elsewhere(r.Context(), req.Host, "host")
		if err != nil {
			return err
		}
		var run runs.Run
		switch {
		case remote:
			run, err = s.opts.Fleet.Start(r.Context(), runs.StartOptions{Kind: orchestrator.Kind, TaskID: req.TaskID, Spec: spec, Host: req.Host})
		case t == nil:
			return newErr(http.StatusServiceUnavailable, api.CodeUnavailable, "",
				"the task orchestrator is not running in this daemon: configure ACU_TASK_* (a model key and a display) and restart it, or send the task to a host that runs one")
		default:
			run, err = t.Start(r.Context(), spec)
		}
		if err != nil {
			return err
		}
		w.Header().Set("Location", "/v1/tasks/"+run.ID)
		writeJSON(w, http.StatusAccepted, toAPIRun(run))
		return nil
	}
}

// handleListTasks lists task runs, newest first (GET /v1/tasks, with the
// filters of GET /v1/runs but the kind fixed).
func (s *Server) handleListTasks(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	q.Set("kind", orchestrator.Kind)
	r.URL.RawQuery = q.Encode()
	return s.handleListRuns(w, r)
}

// handleGetTask returns a task's run with its result (GET /v1/tasks/{id}).
func (s *Server) handleGetTask(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	run, err := s.opts.Runs.Get(r.Context(), id)
	if err != nil {
		return about(aboutRun, id, err)
	}
	if run.Kind != orchestrator.Kind {
		return errNotFound("run %q is a %s run, not a task: see GET /v1/runs/%s", id, run.Kind, id)
	}
	writeJSON(w, http.StatusOK, toAPIRun(run))
	return nil
}
