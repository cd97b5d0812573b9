package computer_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/computer"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/store"
)

// TestAskAndResume: the two halves of the hand-over to the user, both
// here: AskThroughRun writes needs_user and waits; Resume, from anyone
// holding the store, answers it, and the waiting loop gets the answer. A
// second resume finds the run no longer waiting.
func TestAskAndResume(t *testing.T) {
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "acu.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reg := runs.New(db, runs.Options{})
	run, err := reg.Start(t.Context(), runs.StartOptions{Kind: computer.Kind})
	if err != nil {
		t.Fatal(err)
	}
	asked := make(chan computer.Ask, 1)
	ask := computer.AskThroughRun(reg, run.ID, time.Minute, func(q computer.Ask) { asked <- q })
	type reply struct {
		ans computer.Answer
		err error
	}
	got := make(chan reply, 1)
	go func() {
		a, err := ask(t.Context(), computer.Ask{Reason: computer.AskCallUser, Message: "log in for me"})
		got <- reply{a, err}
	}()
	<-asked
	_, ev, err := computer.Resume(t.Context(), reg, run.ID, computer.Answer{Message: "done"}, computer.Answerer{By: "ada"})
	if err != nil {
		t.Fatalf("Resume = %v", err)
	}
	select {
	case r := <-got:
		if r.err != nil || r.ans.Message != "done" || r.ans.By != "ada" {
			t.Errorf("the loop got %+v, %v, want the answer by ada", r.ans, r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the loop did not get the answer")
	}
	if ev.RunID != run.ID {
		t.Errorf("resume event %+v, want on run %s", ev, run.ID)
	}
	var re *computer.ResumeError
	if _, _, err := computer.Resume(t.Context(), reg, run.ID, computer.Answer{}, computer.Answerer{}); !errors.As(err, &re) || re.Kind != computer.ResumeConflict {
		t.Errorf("a second Resume = %v, want a conflict: the run no longer waits", err)
	}
	if _, _, err := computer.Resume(context.Background(), reg, "run_nope", computer.Answer{}, computer.Answerer{}); !errors.Is(err, runs.ErrNotFound) {
		t.Errorf("Resume of an unknown run = %v, want runs.ErrNotFound", err)
	}
}
