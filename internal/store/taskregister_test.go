package store

import (
	"testing"
)

// TestRegisterAndAppendTaskLog: a task log registered with its plan and
// then appended to, on the engine under test (SQLite, or PostgreSQL with
// ACU_TEST_ENGINE=postgres): the title, the status and the lines in order.
func TestRegisterAndAppendTaskLog(t *testing.T) {
	ctx := t.Context()
	db, _ := openTest(t)
	if err := db.RegisterTask(ctx, Task{ID: "log1", Title: "Ship it"}, "active", []string{"plan: build", "plan: test"}); err != nil {
		t.Fatal(err)
	}
	if err := db.AppendTaskLog(ctx, "log1", "built", "paused"); err != nil {
		t.Fatal(err)
	}
	if err := db.AppendTaskLog(ctx, "log1", "", ""); err != nil {
		t.Fatal(err)
	}
	task, err := db.GetTask(ctx, "log1")
	if err != nil || task.Title != "Ship it" {
		t.Fatalf("GetTask = %+v, %v; want the title", task, err)
	}
	if st, err := db.TaskStatus(ctx, "log1"); err != nil || st != "paused" {
		t.Errorf("TaskStatus = %q, %v; want paused", st, err)
	}
	p, err := db.TaskProgress(ctx, "log1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range p {
		got = append(got, e.Message)
	}
	want := []string{"plan: build", "plan: test", "built", "status: paused"}
	if len(got) != len(want) {
		t.Fatalf("lines = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("lines = %q, want %q", got, want)
		}
	}
	if err := db.AppendTaskLog(ctx, "", "x", ""); err == nil {
		t.Error("AppendTaskLog without an id succeeded")
	}
}
