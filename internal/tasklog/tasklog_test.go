package tasklog_test

import (
	"database/sql"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/store"
	"github.com/acu-dev/acu/internal/tasklog"

	_ "modernc.org/sqlite"
)

// open is a task-log service on a fresh SQLite file whose clock moves a
// second at each reading, so tasks registered one after another have
// distinct creation times.
func open(t *testing.T) (*tasklog.Service, *store.DB) {
	t.Helper()
	s, db, _ := openAt(t)
	return s, db
}

func openAt(t *testing.T) (*tasklog.Service, *store.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "acu.db")
	var mu sync.Mutex
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	db, err := store.Open(t.Context(), path, store.Options{Clock: func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Second)
		return now
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return tasklog.New(db), db, path
}

// refusal checks that err is a *tasklog.Error of kind and field, and that
// its message mentions each of says.
func refusal(t *testing.T, err error, kind tasklog.Kind, field string, says ...string) {
	t.Helper()
	te, ok := errors.AsType[*tasklog.Error](err)
	if !ok {
		t.Fatalf("err = %v (%T), want a *tasklog.Error", err, err)
	}
	if te.Kind != kind || te.Field != field {
		t.Errorf("err = kind %d field %q (%q), want kind %d field %q", te.Kind, te.Field, te.Message, kind, field)
	}
	for _, s := range says {
		if !strings.Contains(te.Message, s) {
			t.Errorf("message %q does not say %q", te.Message, s)
		}
	}
}

func TestRegisterRefuses(t *testing.T) {
	s, _ := open(t)
	tests := []struct {
		name  string
		req   api.CreateTaskLog
		field string
		says  []string
	}{
		{"no name", api.CreateTaskLog{}, "name", []string{"name is required"}},
		{"a blank name", api.CreateTaskLog{Name: " \t\n "}, "name", []string{"name is required"}},
		{"a long name", api.CreateTaskLog{Name: strings.Repeat("n", 501)}, "name", []string{"501 bytes", "at most 500"}},
		{"a control character in the name", api.CreateTaskLog{Name: "a\x1bb"}, "name", []string{"control character", "U+001B"}},
		{"too many plan items", api.CreateTaskLog{Name: "n", Plan: make([]string, 101)}, "plan", []string{"101 items", "at most 100"}},
		{"a long plan item", api.CreateTaskLog{Name: "n", Plan: []string{"ok", strings.Repeat("p", 2001)}}, "plan", []string{"2001 bytes", "at most 2000"}},
		{"a control character in the plan", api.CreateTaskLog{Name: "n", Plan: []string{"a\rb"}}, "plan", []string{"control character"}},
		{"an id with a space", api.CreateTaskLog{ID: "my task", Name: "n"}, "task_id", []string{`"my task"`, "1 to 64"}},
		{"an id with a slash", api.CreateTaskLog{ID: "a/b", Name: "n"}, "task_id", []string{"1 to 64"}},
		{"a long id", api.CreateTaskLog{ID: strings.Repeat("i", 65), Name: "n"}, "task_id", []string{"1 to 64"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Register(t.Context(), tc.req)
			refusal(t, err, tasklog.Invalid, tc.field, tc.says...)
		})
	}
	list, err := s.List(t.Context(), "", 100)
	if err != nil || len(list.Tasks) != 0 {
		t.Errorf("List after refusals = %+v, %v, want no task stored", list, err)
	}
}

func TestRegister(t *testing.T) {
	s, db := open(t)
	got, err := s.Register(t.Context(), api.CreateTaskLog{Name: "  export the report  ", Plan: []string{"open it", "print\tto PDF\nand save"}})
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^task_[0-9a-f]{12}$`).MatchString(got.ID) {
		t.Errorf("made id %q, want task_ and 12 hex digits", got.ID)
	}
	if got.Name != "export the report" || got.Status != "active" || got.Count != 2 || got.CreatedAt.IsZero() {
		t.Errorf("Register = %+v, want the trimmed name, active, 2 lines", got)
	}
	var lines []string
	for _, e := range got.Entries {
		lines = append(lines, e.Message)
	}
	if diff := cmp.Diff([]string{"plan 1: open it", "plan 2: print\tto PDF\nand save"}, lines); diff != "" {
		t.Errorf("plan lines (-want +got):\n%s", diff)
	}
	again, err := s.Get(t.Context(), got.ID)
	if err != nil || !cmp.Equal(again, got) {
		t.Errorf("Get(%q) = %+v, %v, want what Register returned %+v", got.ID, again, err, got)
	}
	other, err := s.Register(t.Context(), api.CreateTaskLog{Name: "n"})
	if err != nil || other.ID == got.ID {
		t.Errorf("a second made id = %q, %v, want one other than %q", other.ID, err, got.ID)
	}

	// A wait's outcome reaches a task id before the agent registers it
	// (the store creates the task, untitled); registering takes it over
	// with its lines kept first.
	if err := db.AppendTaskProgress(t.Context(), "deploy-1", "run_1", "wait done: dialog shown"); err != nil {
		t.Fatal(err)
	}
	reg, err := s.Register(t.Context(), api.CreateTaskLog{ID: "deploy-1", Name: "deploy", Plan: []string{"check"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []api.TaskLogEntry{{Message: "wait done: dialog shown", RunID: "run_1"}, {Message: "plan 1: check"}}
	if reg.Name != "deploy" || reg.Status != "active" || !cmp.Equal(want, reg.Entries, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".At" }, cmp.Ignore())) {
		t.Errorf("Register over a wait's task = %+v, want deploy, active, lines %+v", reg, want)
	}
}

func TestAppend(t *testing.T) {
	s, _ := open(t)
	reg, err := s.Register(t.Context(), api.CreateTaskLog{ID: "t1", Name: "n"})
	if err != nil {
		t.Fatal(err)
	}
	refusals := []struct {
		name  string
		id    string
		req   api.AppendTaskLog
		kind  tasklog.Kind
		field string
		says  []string
	}{
		{"nothing", "t1", api.AppendTaskLog{}, tasklog.Invalid, "message", []string{"a message, a status, or both"}},
		{"a control character", "t1", api.AppendTaskLog{Message: "a\x00b"}, tasklog.Invalid, "message", []string{"control character"}},
		{"a long message", "t1", api.AppendTaskLog{Message: strings.Repeat("m", 16<<10+1)}, tasklog.Invalid, "message", []string{"at most 16384"}},
		{"an unknown status", "t1", api.AppendTaskLog{Status: "done"}, tasklog.Invalid, "status", []string{`"done"`, "completed"}},
		{"an unknown task", "nope", api.AppendTaskLog{Message: "m"}, tasklog.NotFound, "", []string{`"nope"`, "register it first"}},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Append(t.Context(), tc.id, tc.req)
			refusal(t, err, tc.kind, tc.field, tc.says...)
		})
	}
	if _, err := s.Get(t.Context(), "nope"); err == nil {
		t.Error("Append to an unknown task created it")
	}

	got, err := s.Append(t.Context(), "t1", api.AppendTaskLog{Message: "opened the file"})
	if err != nil || got.Status != "active" || got.Count != 1 {
		t.Fatalf("Append(message) = %+v, %v, want active with 1 line", got, err)
	}
	got, err = s.Append(t.Context(), "t1", api.AppendTaskLog{Message: "saved", Status: "completed"})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range got.Entries {
		lines = append(lines, e.Message)
	}
	if got.Status != "completed" || !cmp.Equal(lines, []string{"opened the file", "saved", "status: completed"}) || !got.CreatedAt.Equal(reg.CreatedAt) {
		t.Errorf("Append(message, status) = %+v, want completed with lines opened, saved, status", got)
	}
}

func TestGetUnknown(t *testing.T) {
	s, _ := open(t)
	_, err := s.Get(t.Context(), "missing")
	refusal(t, err, tasklog.NotFound, "", `"missing"`, "GET /v1/tasklogs")
}

func TestList(t *testing.T) {
	s, _ := open(t)
	for _, id := range []string{"a", "b", "c", "d"} {
		if _, err := s.Register(t.Context(), api.CreateTaskLog{ID: id, Name: "task " + id, Plan: []string{"x"}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range []struct{ id, status string }{{"b", "completed"}, {"d", "failed"}, {"a", "completed"}} {
		if _, err := s.Append(t.Context(), a.id, api.AppendTaskLog{Status: a.status}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		status string
		limit  int
		want   []string
	}{
		{"", 10, []string{"d", "c", "b", "a"}},
		{"all", 10, []string{"d", "c", "b", "a"}},
		{"", 2, []string{"d", "c"}},
		{"completed", 10, []string{"b", "a"}},
		{"completed", 1, []string{"b"}},
		{"active", 10, []string{"c"}},
		{"paused", 10, nil},
	}
	for _, tc := range tests {
		list, err := s.List(t.Context(), tc.status, tc.limit)
		if err != nil {
			t.Fatalf("List(%q, %d): %v", tc.status, tc.limit, err)
		}
		if list.Tasks == nil {
			t.Errorf("List(%q, %d).Tasks = nil, want an empty list (JSON [])", tc.status, tc.limit)
		}
		var ids []string
		for _, tl := range list.Tasks {
			ids = append(ids, tl.ID)
			if tl.Entries != nil || tl.Name != "task "+tl.ID {
				t.Errorf("List item %+v, want its name and no lines", tl)
			}
		}
		if !cmp.Equal(ids, tc.want) {
			t.Errorf("List(%q, %d) = %v, want %v", tc.status, tc.limit, ids, tc.want)
		}
	}
	c, err := s.List(t.Context(), "completed", 1)
	if err != nil || len(c.Tasks) != 1 || c.Tasks[0].Status != "completed" || c.Tasks[0].Count != 2 {
		t.Errorf("List(completed, 1) = %+v, %v, want b completed with its 2 lines counted", c, err)
	}
	_, err = s.List(t.Context(), "done", 10)
	refusal(t, err, tasklog.Invalid, "status", `"done"`, "all or one of")
}

// TestRegisterIsAtomic: when a plan line cannot be stored (a trigger on
// the real database refuses the second), Register fails and leaves no
// task, no status and no first plan line behind.
func TestRegisterIsAtomic(t *testing.T) {
	s, _, path := openAt(t)
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(t.Context(), `CREATE TRIGGER refuse_boom BEFORE INSERT ON task_progress
		WHEN NEW.message LIKE '%boom%' BEGIN SELECT RAISE(ABORT, 'boom refused'); END`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Register(t.Context(), api.CreateTaskLog{ID: "half", Name: "n", Plan: []string{"fine", "boom"}}); err == nil || !strings.Contains(err.Error(), "boom refused") {
		t.Fatalf("Register with a refused plan line = %v, want the store's error", err)
	}
	if got, err := s.Get(t.Context(), "half"); err == nil {
		t.Errorf("after a failed Register, Get = %+v, want no such task", got)
	}
}

// TestAppendIsAtomic: when the status line cannot be stored (a trigger on
// the real database refuses it), Append fails and leaves neither the
// message nor the new status behind.
func TestAppendIsAtomic(t *testing.T) {
	s, _, path := openAt(t)
	if _, err := s.Register(t.Context(), api.CreateTaskLog{ID: "whole", Name: "n", Plan: []string{"step one"}}); err != nil {
		t.Fatal(err)
	}
	before, err := s.Get(t.Context(), "whole")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(t.Context(), `CREATE TRIGGER refuse_status BEFORE INSERT ON task_progress
		WHEN NEW.message LIKE 'status:%' BEGIN SELECT RAISE(ABORT, 'status line refused'); END`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(t.Context(), "whole", api.AppendTaskLog{Message: "half done", Status: api.TaskLogStatuses[len(api.TaskLogStatuses)-1]}); err == nil || !strings.Contains(err.Error(), "status line refused") {
		t.Fatalf("Append with a refused status line = %v, want the store's error", err)
	}
	after, err := s.Get(t.Context(), "whole")
	if err != nil {
		t.Fatal(err)
	}
	if after.Status != before.Status || after.Count != before.Count {
		t.Errorf("after a failed Append: status %q, %d lines; want %q and %d lines as before", after.Status, after.Count, before.Status, before.Count)
	}
}
