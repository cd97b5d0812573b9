package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/runs"
)

// TestResumeRun: POST /v1/runs/{id}/resume answers a run whose last
// control event is needs_user with a resume event; a run that is not
// waiting, has ended or is unknown is refused; safety checks need
// acknowledge, and acknowledging needs an admin token.
func TestResumeRun(t *testing.T) {
	const actToken = "act-token-0123456789"
	f := newFixture(t, func(o *Options) {
		o.LookupToken = func(_ context.Context, secret string) (Principal, bool) {
			return Principal{ID: "actor", Scope: api.ScopeAct}, secret == actToken
		}
	})
	admin, act := api.NewClient(f.srv.URL, testToken), api.NewClient(f.srv.URL, actToken)
	ctx := t.Context()
	start := func() string {
		r, err := f.reg.Start(ctx, runs.StartOptions{Kind: "computer"})
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	ask := func(id, reason string) {
		if _, err := f.reg.Emit(ctx, id, api.StreamControl, api.ControlEvent{Action: api.ControlNeedsUser, Reason: reason, Message: "checks: cu_sc_1"}); err != nil {
			t.Fatal(err)
		}
	}
	refused := func(name string, err error, status int, code, field, msg string) {
		t.Helper()
		se, ok := err.(*api.StatusError)
		if !ok || se.Status != status || (code != "" && se.Code != code) || se.Field != field || !strings.Contains(se.Message, msg) {
			t.Errorf("%s = %v, want %d %s naming field %q and %q", name, err, status, code, field, msg)
		}
	}

	id := start()
	_, err := act.ResumeRun(ctx, id, api.ResumeRequest{})
	refused("resume of a run not waiting", err, http.StatusConflict, api.CodeConflict, "", "is not waiting for the user")

	ask(id, api.NeedsCallUser)
	_, err = act.ResumeRun(ctx, id, api.ResumeRequest{Message: "bad\x01text"})
	refused("resume with a control character", err, http.StatusBadRequest, api.CodeInvalid, "message", "control characters")
	rr, err := act.ResumeRun(ctx, id, api.ResumeRequest{Message: "I typed the password"})
	if err != nil {
		t.Fatalf("resume of a call_user = %v", err)
	}
	var ce api.ControlEvent
	if err := json.Unmarshal(rr.Event.Data, &ce); err != nil || rr.Event.Stream != api.StreamControl || ce.Action != api.ControlResume ||
		ce.Reason != api.NeedsCallUser || ce.Message != "I typed the password" || ce.By != "actor" || rr.Run.ID != id || rr.Run.Status != runs.StatusRunning {
		t.Errorf("resume = %+v (%+v, %v), want the resume event by actor on the live run", rr, ce, err)
	}
	_, err = act.ResumeRun(ctx, id, api.ResumeRequest{})
	refused("a second resume", err, http.StatusConflict, api.CodeConflict, "", "is not waiting for the user")

	sc := start()
	ask(sc, api.NeedsSafetyCheck)
	_, err = admin.ResumeRun(ctx, sc, api.ResumeRequest{})
	refused("resume of safety checks without acknowledge", err, http.StatusBadRequest, api.CodeInvalid, "acknowledge", "cu_sc_1")
	_, err = act.ResumeRun(ctx, sc, api.ResumeRequest{Acknowledge: true})
	refused("an act token acknowledging", err, http.StatusForbidden, api.CodeScope, "acknowledge", "admin token")
	if rr, err = admin.ResumeRun(ctx, sc, api.ResumeRequest{Acknowledge: true}); err != nil || json.Unmarshal(rr.Event.Data, &ce) != nil || !ce.Acknowledge {
		t.Errorf("an admin acknowledging = %+v, %v, want the resume acknowledging", rr, err)
	}

	ended := start()
	ask(ended, api.NeedsCallUser)
	if _, err := f.reg.End(ctx, ended, runs.StatusCancelled, "", nil); err != nil {
		t.Fatal(err)
	}
	_, err = act.ResumeRun(ctx, ended, api.ResumeRequest{})
	refused("resume of an ended run", err, http.StatusConflict, api.CodeConflict, "", "has already ended (cancelled)")
	_, err = act.ResumeRun(ctx, "run_nope", api.ResumeRequest{})
	refused("resume of an unknown run", err, http.StatusNotFound, api.CodeNotFound, "", "run_nope")
}
