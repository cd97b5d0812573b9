package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/api"
)

// TaskBackend is what run_task and task_status need from acu: POST
// /v1/tasks, GET /v1/runs/{id} and the run wait (*api.Client, with
// CreateTask).
type TaskBackend interface {
	CreateTask(ctx context.Context, task, taskID string, maxIterations int) (api.Run, error)
	Run(ctx context.Context, id string) (api.Run, error)
	WaitRun(ctx context.Context, id string, timeout time.Duration) (api.WaitResult, error)
}

// AddTaskTools adds run_task and task_status to s. New calls it when its
// Backend is also a TaskBackend.
func AddTaskTools(s *mcp.Server, b TaskBackend, opts Options) {
	if opts.MaxBlock <= 0 {
		opts.MaxBlock = 55 * time.Second
	}
	if opts.ProgressEvery <= 0 {
		opts.ProgressEvery = 2 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	t := &taskTools{b: b, opts: opts}
	addTool(s, &mcp.Tool{Name: "run_task", Description: runTaskDesc, Annotations: destructive}, t.runTask)
	addTool(s, &mcp.Tool{Name: "task_status", Description: taskStatusDesc, Annotations: readOnly}, t.taskStatus)
}

const runTaskDesc = `Hand a whole desktop task to acu's own agents, e.g. "open the Files dialog and pick report.txt" or "fill the name field with Ada and press OK".
acu runs it with a fast agent that acts on an element map of the screen (accessibility tree + OCR), a planning agent and a completion verifier, for at most max_iterations (default 50).
Returns the run id at once (status "running"); the task ends completed, failed or cancelled. Set block_seconds (up to 55) to wait here, with progress notifications, or call task_status with block_seconds later. Cancel with the runs API (POST /v1/runs/{id}/cancel). One task runs at a time on a display.`

const taskStatusDesc = `Get a run_task run's status and, once it ended, its outcome (summary or error, iterations, cost). Set block_seconds (up to 55) to wait for it to end first.`

// TaskArgs are run_task's arguments.
type TaskArgs struct {
	Task          string  `json:"task" jsonschema:"what to do on the desktop, in plain language"`
	TaskID        string  `json:"task_id,omitempty" jsonschema:"task whose progress log gets the run's progress (default: the run id)"`
	MaxIterations int     `json:"max_iterations,omitempty" jsonschema:"iterations before the task fails (default 50)"`
	BlockSeconds  float64 `json:"block_seconds,omitempty" jsonschema:"wait here up to this many seconds (max 55) before returning; 0 returns at once"`
}

// TaskStatusArgs are task_status's arguments.
type TaskStatusArgs struct {
	ID           string  `json:"id" jsonschema:"the run id run_task returned"`
	BlockSeconds float64 `json:"block_seconds,omitempty" jsonschema:"wait up to this many seconds (max 55) for the task to end"`
}

// TaskInfo is run_task's and task_status's structured result.
type TaskInfo struct {
	RunID      string  `json:"run_id"`
	Status     string  `json:"status"` // running, completed, failed, cancelled
	Task       string  `json:"task,omitempty"`
	Summary    string  `json:"summary,omitempty"`
	Error      string  `json:"error,omitempty"`
	Iterations int     `json:"iterations,omitempty"`
	CostUSD    float64 `json:"cost_usd,omitempty"`
	// CostUnknown: some model call's cost is unknown (no provider figure,
	// no price); CostUSD is only the known part.
	CostUnknown bool       `json:"cost_unknown,omitempty"`
	StartedAt   time.Time  `json:"started_at"`
	EndedAt     *time.Time `json:"ended_at,omitempty"`
}

type taskTools struct {
	b    TaskBackend
	opts Options
}

func (t *taskTools) runTask(ctx context.Context, req *mcp.CallToolRequest, in TaskArgs) (*mcp.CallToolResult, TaskInfo, error) {
	block, err := blockDuration(in.BlockSeconds, t.opts.MaxBlock)
	if err != nil {
		return nil, TaskInfo{}, err
	}
	if strings.TrimSpace(in.Task) == "" {
		return nil, TaskInfo{}, fmt.Errorf("task is required: say what to do on the desktop")
	}
	run, err := t.b.CreateTask(ctx, in.Task, in.TaskID, in.MaxIterations)
	if err != nil {
		return nil, TaskInfo{}, err
	}
	if block > 0 {
		run, err = t.blockOn(ctx, req, run, block)
	}
	info := taskInfo(run)
	return textResult(describeTask(info)), info, err
}

func (t *taskTools) taskStatus(ctx context.Context, req *mcp.CallToolRequest, in TaskStatusArgs) (*mcp.CallToolResult, TaskInfo, error) {
	block, err := blockDuration(in.BlockSeconds, t.opts.MaxBlock)
	if err != nil {
		return nil, TaskInfo{}, err
	}
	run, err := t.b.Run(ctx, in.ID)
	if err != nil {
		return nil, TaskInfo{}, err
	}
	if run.Kind != "task" {
		return nil, TaskInfo{}, fmt.Errorf("run %s is a %s run, not a task", run.ID, run.Kind)
	}
	if block > 0 && run.EndedAt == nil {
		run, err = t.blockOn(ctx, req, run, block)
	}
	info := taskInfo(run)
	return textResult(describeTask(info)), info, err
}

// blockOn waits up to d for the run's lifecycle end, sending progress
// notifications when the client asked for them.
func (t *taskTools) blockOn(ctx context.Context, req *mcp.CallToolRequest, run api.Run, d time.Duration) (api.Run, error) {
	err := waitForRun(ctx, t.b, req, run.ID, d, t.opts.ProgressEvery, func() (string, bool) {
		return fmt.Sprintf("task %s running for %s", run.ID, time.Since(run.StartedAt).Truncate(time.Second)), true
	})
	if err != nil {
		return run, err
	}
	return t.b.Run(ctx, run.ID)
}

func taskInfo(r api.Run) TaskInfo {
	info := TaskInfo{RunID: r.ID, Status: r.Status, StartedAt: r.StartedAt, EndedAt: r.EndedAt, Error: r.Error}
	var spec struct {
		Task string `json:"task"`
	}
	_ = json.Unmarshal(r.Spec, &spec)
	info.Task = spec.Task
	var res struct {
		Summary     string  `json:"summary"`
		Error       string  `json:"error"`
		Iterations  int     `json:"iterations"`
		CostUSD     float64 `json:"costUsd"`
		CostUnknown bool    `json:"costUnknown"`
	}
	if len(r.Result) > 0 && json.Unmarshal(r.Result, &res) == nil {
		info.Summary, info.Iterations, info.CostUSD, info.CostUnknown = res.Summary, res.Iterations, res.CostUSD, res.CostUnknown
		if info.Error == "" {
			info.Error = res.Error
		}
	}
	return info
}

func describeTask(i TaskInfo) string {
	switch i.Status {
	case "running":
		return fmt.Sprintf("Task %s is running: %s. task_status with block_seconds waits for its end.", i.RunID, i.Task)
	case "completed":
		return fmt.Sprintf("Task %s completed after %d iterations: %s", i.RunID, i.Iterations, i.Summary)
	}
	return fmt.Sprintf("Task %s ended %s after %d iterations. %s", i.RunID, i.Status, i.Iterations, firstNonEmpty(i.Error, i.Summary))
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
