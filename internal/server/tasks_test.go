package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// taskServer serves the task routes over a real orchestrator on an Xvfb
// (OCR-only element maps) with scripted models; the routes are mounted the
// way routes.go mounts them, through Extra until Options.Tasks exists.
func taskServer(t *testing.T, fast llmtest.Handler, tasks bool) (*httptest.Server, *runs.Registry) {
	t.Helper()
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
	m := llmtest.NewOpenAI(t, fast)
	verifier := llmtest.NewOpenAI(t, llmtest.Text(`{"done":true,"reason":"nothing to do"}`))
	orch, err := orchestrator.New(orchestrator.Options{Elements: x, Fast: m.Client(t, nil), Planner: m.Client(t, nil),
		Verifier: verifier.Client(t, nil), Runs: reg, Progress: db})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(orch.Close)
	var tk Tasks
	if tasks {
		tk = orch
	}
	s := New(Options{Token: testToken, MaxBody: 4096, Runs: reg, Tasks: tk,
		Cancellers: map[string]func(ctx context.Context, id, reason string) error{orchestrator.Kind: orch.Cancel}})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv, reg
}

func call(t *testing.T, srv *httptest.Server, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func TestCreateTask(t *testing.T) {
	hold := make(chan struct{})
	srv, reg := taskServer(t, func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.Text(), "cancel me") {
			<-hold // the fast agent thinks until the task is cancelled
		}
		return llmtest.Reply{Text: `{"thought":"nothing to do","steps":[],"complete":true,"summary":"done"}`}
	}, true)
	t.Cleanup(func() { close(hold) })

	code, b := call(t, srv, "POST", "/v1/tasks", `{"task":"look at the screen","taskId":"t1","maxIterations":3}`)
	if code != http.StatusAccepted {
		t.Fatalf("POST /v1/tasks = %d %s, want 202", code, b)
	}
	var run api.Run
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	if run.Kind != "task" || run.TaskID != "t1" || run.Status != runs.StatusRunning {
		t.Errorf("run = %+v, want a running task run of task t1", run)
	}
	res, err := reg.Wait(t.Context(), run.ID, time.Minute)
	if err != nil || res.Status != runs.StatusCompleted {
		t.Fatalf("Wait = %+v, %v; want completed", res, err)
	}
	code, b = call(t, srv, "GET", "/v1/tasks/"+run.ID, "")
	if code != http.StatusOK || !strings.Contains(string(b), `"status":"completed"`) || !strings.Contains(string(b), `"summary":"done"`) {
		t.Errorf("GET /v1/tasks/%s = %d %s", run.ID, code, b)
	}
	code, b = call(t, srv, "GET", "/v1/tasks", "")
	if code != http.StatusOK || !strings.Contains(string(b), run.ID) {
		t.Errorf("GET /v1/tasks = %d %s", code, b)
	}

	// Busy while a task runs; cancelled through the runs route.
	code, b = call(t, srv, "POST", "/v1/tasks", `{"task":"cancel me"}`)
	if code != http.StatusAccepted {
		t.Fatalf("POST /v1/tasks = %d %s", code, b)
	}
	_ = json.Unmarshal(b, &run)
	if code, b := call(t, srv, "POST", "/v1/tasks", `{"task":"another"}`); code != http.StatusConflict || errorOf(t, b).Code != api.CodeConflict {
		t.Errorf("POST while busy = %d %s, want 409 conflict", code, b)
	}
	if code, b := call(t, srv, "POST", "/v1/runs/"+run.ID+"/cancel", `{"reason":"test"}`); code != http.StatusOK {
		t.Errorf("cancel = %d %s", code, b)
	}
	res, err = reg.Wait(t.Context(), run.ID, time.Minute)
	if err != nil || res.Status != runs.StatusCancelled {
		t.Errorf("Wait = %+v, %v; want cancelled", res, err)
	}

	for _, tc := range []struct{ body, field string }{
		{`{"task":""}`, "task"},
		{`{"task":"x","maxIterations":-1}`, "maxIterations"},
		{`{"task":"x","unknown":1}`, "unknown"},
	} {
		code, b := call(t, srv, "POST", "/v1/tasks", tc.body)
		if e := errorOf(t, b); code != http.StatusBadRequest || e.Field != tc.field {
			t.Errorf("POST %s = %d %s, want 400 on field %q", tc.body, code, b, tc.field)
		}
	}
	if code, _ := call(t, srv, "GET", "/v1/tasks/nope", ""); code != http.StatusNotFound {
		t.Errorf("GET unknown task = %d, want 404", code)
	}
}

func TestCreateTaskUnavailable(t *testing.T) {
	srv, _ := taskServer(t, nil, false)
	code, b := call(t, srv, "POST", "/v1/tasks", `{"task":"x"}`)
	if code != http.StatusServiceUnavailable || !strings.Contains(string(b), "ACU_TASK_") {
		t.Errorf("POST without an orchestrator = %d %s, want 503 naming ACU_TASK_*", code, b)
	}
}
