package server_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/actions"
	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/handoff"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/server"
	"github.com/acu-dev/acu/internal/smartwait"
	"github.com/acu-dev/acu/internal/store"
)

// An action request for another host: refused for a host with no live
// process, naming the live ones; for a live host whose daemon never claims
// it, answered 504 after the timeout, the run ended saying so.
func TestActionForAnotherHost(t *testing.T) {
	d := atspitest.NewDesktop(t)
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "acu.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reg := runs.New(db, runs.Options{})
	release, err := reg.Own(t.Context(), runs.Self("serve", "a"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	// Host b has a live process (its lease holds) that will never answer.
	if err := db.RegisterOwner(t.Context(), store.Owner{ID: "b:1:x", Host: "b", PID: 1, Program: "serve", LeaseUntil: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	eng := smartwait.New(smartwait.Options{Runs: reg, Capture: d.Hub, Store: db, DefaultDisplay: d.Display})
	svc, err := actions.New(actions.Options{Hub: d.Hub, Runs: reg, Settle: eng, DefaultDisplay: d.Display,
		SessionBus: d.Session.SessionBus, SessionIdle: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = svc.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	fleet := handoff.New(handoff.Options{Runs: reg, Timeout: time.Second})
	srv := httptest.NewServer(server.New(server.Options{Token: actToken, Runs: reg, Actions: svc, Fleet: reg, Handoff: fleet}))
	t.Cleanup(srv.Close)
	c := api.NewClient(srv.URL, actToken)
	move := []api.Action{{Kind: "move", At: api.Pt(10, 10)}}

	_, err = c.Act(t.Context(), api.ActRequest{Host: "zz", Actions: move})
	var se *api.StatusError
	if !errors.As(err, &se) || se.Status != http.StatusBadRequest || se.Field != "host" || !strings.Contains(se.Message, "a, b") {
		t.Errorf("action for an unknown host: %v, want 400 on host naming a, b", err)
	}

	_, err = c.Act(t.Context(), api.ActRequest{Host: "b", Actions: move})
	if !errors.As(err, &se) || se.Status != http.StatusGatewayTimeout || !strings.Contains(se.Message, `host "b" did not answer`) {
		t.Fatalf("action for a host that never answers: %v, want 504", err)
	}
	l, err := reg.List(t.Context(), runs.ListFilter{Kind: handoff.Kind})
	if err != nil || len(l) != 1 || l[0].Live() || l[0].Host != "b" || !strings.Contains(l[0].Error, "no answer from host b") {
		t.Errorf("action runs = %+v, %v; want one, for b, ended for want of an answer", l, err)
	}
}
