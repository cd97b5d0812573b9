package mcpserver

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/ocr"
	"github.com/acu-dev/acu/internal/orchestrator"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/store"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// localTasks is the TaskBackend of a daemon, in process: the real
// orchestrator and run registry, converted to the API's run form the way
// the HTTP routes do.
type localTasks struct {
	o   *orchestrator.Orchestrator
	reg *runs.Registry
}

func apiRun(r runs.Run) api.Run {
	out := api.Run{ID: r.ID, Kind: r.Kind, TaskID: r.TaskID, Status: r.Status, StartedAt: r.StartedAt, Error: r.Error, Spec: r.Spec, Result: r.Result}
	if !r.EndedAt.IsZero() {
		t := r.EndedAt
		out.EndedAt = &t
	}
	return out
}

func (l localTasks) CreateTask(ctx context.Context, task, taskID string, max int) (api.Run, error) {
	r, err := l.o.Start(ctx, orchestrator.Spec{Task: task, TaskID: taskID, MaxIterations: max})
	return apiRun(r), err
}

func (l localTasks) Run(ctx context.Context, id string) (api.Run, error) {
	r, err := l.reg.Get(ctx, id)
	return apiRun(r), err
}

func (l localTasks) WaitRun(ctx context.Context, id string, d time.Duration) (api.WaitResult, error) {
	r, err := l.reg.Wait(ctx, id, d)
	return api.WaitResult{RunID: r.RunID, Status: r.Status}, err
}

func TestRunTask(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{})
	hub, err := capture.NewHub(capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hub.Close() })
	eng, err := ocr.New(ocr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := elements.New(elements.Options{Display: dpy, Capture: hub, OCR: eng})
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "acu.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reg := runs.New(db, runs.Options{})
	hold := make(chan struct{})
	fast := llmtest.NewOpenAI(t, func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.Text(), "slow task") {
			<-hold
		}
		return llmtest.Reply{Text: `{"thought":"the screen is empty","steps":[],"complete":true,"summary":"nothing to do"}`}
	})
	verifier := llmtest.NewOpenAI(t, llmtest.Text(`{"done":true,"reason":"empty screen"}`))
	o, err := orchestrator.New(orchestrator.Options{Elements: x, Fast: fast.Client(t, nil), Verifier: verifier.Client(t, nil), Runs: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Close)
	t.Cleanup(func() { close(hold) })

	s := mcp.NewServer(&mcp.Implementation{Name: "acu"}, nil)
	AddTaskTools(s, localTasks{o, reg}, Options{})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	callTool := func(name string, args map[string]any) (TaskInfo, string) {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if res.IsError {
			return TaskInfo{}, text
		}
		var info TaskInfo
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &info); err != nil {
			t.Fatal(err)
		}
		return info, text
	}

	info, text := callTool("run_task", map[string]any{"task": "look at the screen", "block_seconds": 50})
	if info.Status != runs.StatusCompleted || info.Summary != "nothing to do" || info.Iterations != 1 || info.RunID == "" {
		t.Errorf("run_task blocking = %+v (%s), want completed after 1 iteration", info, text)
	}
	again, _ := callTool("task_status", map[string]any{"id": info.RunID})
	if again.Status != runs.StatusCompleted || again.Task != "look at the screen" {
		t.Errorf("task_status = %+v", again)
	}

	info, text = callTool("run_task", map[string]any{"task": "slow task"})
	if info.Status != runs.StatusRunning || !strings.Contains(text, "is running") {
		t.Errorf("run_task = %+v (%s), want running at once", info, text)
	}
	st2, _ := callTool("task_status", map[string]any{"id": info.RunID, "block_seconds": 0.2})
	if st2.Status != runs.StatusRunning {
		t.Errorf("task_status while held = %+v, want running", st2)
	}
	if err := o.Cancel(t.Context(), info.RunID, "test over"); err != nil {
		t.Fatal(err)
	}
	end, _ := callTool("task_status", map[string]any{"id": info.RunID, "block_seconds": 50})
	if end.Status != runs.StatusCancelled || end.EndedAt == nil {
		t.Errorf("task_status after cancel = %+v, want cancelled", end)
	}
	if _, text := callTool("run_task", map[string]any{"task": " "}); !strings.Contains(text, "task is required") {
		t.Errorf("run_task without a task: %s", text)
	}
}
