package runs

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// TestCancel: a run is cancelled through its kind's engine when there is
// one and it runs the run; in the store, with the reason as its result,
// when there is none or the engine answers ErrNotFound (another process's
// run); an engine's other error is the answer.
func TestCancel(t *testing.T) {
	e := newEnv(t, Options{})
	ctx := t.Context()
	reasonOf := func(r Run) string {
		var res map[string]string
		_ = json.Unmarshal(r.Result, &res)
		return res["reason"]
	}

	run := e.start(t, "task")
	got, err := e.reg.Cancel(ctx, run.ID, "", nil)
	if err != nil || got.Status != StatusCancelled || reasonOf(got) != CancelReason {
		t.Errorf("Cancel without an engine = %+v, %v; want cancelled for %q", got, err, CancelReason)
	}

	run = e.start(t, "wait")
	var called []string
	engine := func(ctx context.Context, id, reason string) error {
		called = append(called, id+": "+reason)
		_, err := e.reg.End(ctx, id, StatusCancelled, "", map[string]string{"reason": "engine: " + reason})
		return err
	}
	got, err = e.reg.Cancel(ctx, run.ID, "enough", engine)
	if err != nil || len(called) != 1 || called[0] != run.ID+": enough" || reasonOf(got) != "engine: enough" {
		t.Errorf("Cancel through the engine = %+v, %v, engine called %q; want the engine's end", got, err, called)
	}

	run = e.start(t, "task")
	got, err = e.reg.Cancel(ctx, run.ID, "elsewhere", func(context.Context, string, string) error { return ErrNotFound })
	if err != nil || got.Status != StatusCancelled || reasonOf(got) != "elsewhere" {
		t.Errorf("Cancel of a run the engine does not run = %+v, %v; want ended in the store", got, err)
	}

	run = e.start(t, "task")
	boom := errors.New("engine stuck")
	if _, err := e.reg.Cancel(ctx, run.ID, "", func(context.Context, string, string) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("Cancel with a failing engine = %v, want its error", err)
	}
	if r, _ := e.reg.Get(ctx, run.ID); !r.Live() {
		t.Errorf("a run whose engine failed to cancel it was ended: %+v", r)
	}
}
