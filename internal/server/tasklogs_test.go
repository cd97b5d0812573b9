package server

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/store"
	"github.com/acu-dev/acu/internal/tasklog"
)

// TestTaskLogs: a task log is registered with its plan as its first lines
// (an id made when none is given), appended to with messages and status
// changes, read and listed; bad input names its field, an unknown task is
// a 404, and a daemon without task logs answers 503.
func TestTaskLogs(t *testing.T) {
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "tasks.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f := newFixture(t, func(o *Options) { o.TaskLogs = tasklog.New(db) })
	c := api.NewClient(f.srv.URL, testToken)
	ctx := t.Context()
	refused := func(name string, err error, status int, field, msg string) {
		t.Helper()
		se, ok := err.(*api.StatusError)
		if !ok || se.Status != status || se.Field != field || !strings.Contains(se.Message, msg) {
			t.Errorf("%s = %v, want %d naming field %q and %q", name, err, status, field, msg)
		}
	}

	tl, err := c.CreateTaskLog(ctx, api.CreateTaskLog{Name: "  Export the report  ", Plan: []string{"open the menu", "press Export"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tl.ID, "task_") || len(tl.ID) != len("task_")+12 || tl.Name != "Export the report" || tl.Status != "active" || tl.Count != 2 ||
		tl.Entries[0].Message != "plan 1: open the menu" || tl.Entries[1].Message != "plan 2: press Export" {
		t.Errorf("created %+v, want a made id, the trimmed name, active, the plan as its first lines", tl)
	}
	resp, _ := f.do("POST", "/v1/tasklogs", `{"task_id":"report.v2","name":"Export v2"}`, nil)
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("Location") != "/v1/tasklogs/report.v2" {
		t.Errorf("create with an id = %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}

	for _, tc := range []struct {
		name      string
		req       api.CreateTaskLog
		field, in string
	}{
		{"no name", api.CreateTaskLog{Name: "  "}, "name", "name is required"},
		{"control character", api.CreateTaskLog{Name: "a\x07b"}, "name", "control character"},
		{"long plan", api.CreateTaskLog{Name: "n", Plan: make([]string, 101)}, "plan", "at most 100"},
		{"bad plan item", api.CreateTaskLog{Name: "n", Plan: []string{"a\x00"}}, "plan", "control character"},
		{"bad id", api.CreateTaskLog{Name: "n", ID: "no spaces"}, "task_id", "letters, digits"},
	} {
		_, err := c.CreateTaskLog(ctx, tc.req)
		refused("create with "+tc.name, err, http.StatusBadRequest, tc.field, tc.in)
	}

	if tl, err = c.AppendTaskLog(ctx, "report.v2", api.AppendTaskLog{Message: "exported", Status: "completed"}); err != nil {
		t.Fatal(err)
	}
	if tl.Status != "completed" || tl.Count != 2 || tl.Entries[0].Message != "exported" || tl.Entries[1].Message != "status: completed" {
		t.Errorf("after append = %+v, want the message, then the status line, completed", tl)
	}
	_, err = c.AppendTaskLog(ctx, "task_nope", api.AppendTaskLog{Message: "x"})
	refused("append to an unknown task", err, http.StatusNotFound, "", "register it first")
	_, err = c.AppendTaskLog(ctx, "report.v2", api.AppendTaskLog{})
	refused("an empty append", err, http.StatusBadRequest, "message", "send a message, a status, or both")
	_, err = c.AppendTaskLog(ctx, "report.v2", api.AppendTaskLog{Status: "done"})
	refused("an unknown status", err, http.StatusBadRequest, "status", "use one of active")

	if got, err := c.TaskLog(ctx, "report.v2"); err != nil || got.Name != "Export v2" || got.Count != 2 {
		t.Errorf("read = %+v, %v", got, err)
	}
	_, err = c.TaskLog(ctx, "task_nope")
	refused("read of an unknown task", err, http.StatusNotFound, "", "list them with GET /v1/tasklogs")
	list, err := c.TaskLogs(ctx, "completed", 10)
	if err != nil || len(list.Tasks) != 1 || list.Tasks[0].ID != "report.v2" {
		t.Errorf("completed tasks = %+v, %v, want report.v2", list, err)
	}
	if list, err = c.TaskLogs(ctx, "all", 10); err != nil || len(list.Tasks) != 2 {
		t.Errorf("all tasks = %+v, %v, want 2", list, err)
	}
	_, err = c.TaskLogs(ctx, "done", 10)
	refused("list by an unknown status", err, http.StatusBadRequest, "status", "use all or one of")

	off := api.NewClient(newFixture(t).srv.URL, testToken)
	_, err = off.CreateTaskLog(ctx, api.CreateTaskLog{Name: "n"})
	refused("create without task logs", err, http.StatusServiceUnavailable, "", "not available")
}
