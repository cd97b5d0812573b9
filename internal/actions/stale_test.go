package actions_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/actions"
	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
)

// TestPointerOnTheControlNotWhereItWas: an agent reads the element map of
// a real GTK window, the window's buttons move while it thinks, and it
// then sends pointer effects on Alpha's id (a right click, a double click,
// a click with pointer:true). Each lands on Alpha where it is now, never
// on Bravo, which took Alpha's old place, and the result says Alpha moved.
// An Alpha that vanished fails the step as element_stale, and nothing is
// clicked.
func TestPointerOnTheControlNotWhereItWas(t *testing.T) {
	for _, tc := range []struct {
		name  string
		a     api.Action
		sig   syscall.Signal
		stale bool
		want  string // what the app prints; "" nothing
	}{
		{name: "right click, moved", a: api.Action{Kind: api.ActClick, Button: "right"}, sig: syscall.SIGUSR1, want: "alpha right"},
		{name: "pointer click, moved", a: api.Action{Kind: api.ActClick, Pointer: true}, sig: syscall.SIGUSR1, want: "alpha clicked"},
		{name: "double click, moved", a: api.Action{Kind: api.ActClick, Count: 2}, sig: syscall.SIGUSR1, want: "alpha clicked"},
		{name: "right click, vanished", a: api.Action{Kind: api.ActClick, Button: "right"}, sig: syscall.SIGUSR2, stale: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := atspitest.NewDesktop(t)
			app := d.Session.StartApp(t, atspitest.Python(), atspitest.MovingScript(t))
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			if _, err := atspitest.WaitApp(ctx, d.Tree, "acu-moving"); err != nil {
				t.Fatalf("%v; stderr: %s", err, app.Stderr())
			}
			svc, err := actions.New(actions.Options{Hub: d.Hub, DefaultDisplay: d.Display, SessionBus: d.Session.SessionBus})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(svc.Close)

			// The agent's map: Alpha's id.
			alpha := ""
			for ctx.Err() == nil && alpha == "" {
				m, err := svc.Elements(ctx, api.ElementsQuery{})
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range m.Elements {
					if e.Type == "button" && e.Text == "Alpha" && e.Showing {
						alpha = e.ID
					}
				}
				if alpha == "" {
					time.Sleep(100 * time.Millisecond)
				}
			}
			if alpha == "" {
				t.Fatal("no Alpha button in the element map")
			}

			// While it thinks, the window changes under its map.
			if err := syscall.Kill(app.Pid(), tc.sig); err != nil {
				t.Fatal(err)
			}
			for !strings.Contains(app.Stdout(), "moved") {
				if ctx.Err() != nil {
					t.Fatalf("the app did not move its buttons: %s", app.Stderr())
				}
				time.Sleep(20 * time.Millisecond)
			}

			a := tc.a
			a.At = &api.Point{Element: alpha}
			resp, err := svc.Act(ctx, actions.Caller{}, api.ActRequest{Actions: []api.Action{a}})
			if err != nil {
				t.Fatal(err)
			}
			r := resp.Results[0]
			if tc.stale {
				if r.OK || r.Error == nil || r.Error.Code != api.CodeElementStale {
					t.Errorf("result %+v (error %+v): want it failed as %s", r, r.Error, api.CodeElementStale)
				}
			} else {
				if !r.OK || !strings.Contains(r.Moved, "moved") {
					t.Errorf("result %+v (error %+v): want ok at Alpha's new place, with a note that it moved", r, r.Error)
				}
				for !strings.Contains(app.Stdout(), tc.want) && ctx.Err() == nil {
					time.Sleep(20 * time.Millisecond)
				}
			}
			time.Sleep(300 * time.Millisecond) // a click that went astray has time to show
			out := app.Stdout()
			if tc.want != "" && !strings.Contains(out, tc.want) {
				t.Errorf("the app printed %q, want %q: the effect missed Alpha", out, tc.want)
			}
			if strings.Contains(out, "bravo") || tc.stale && strings.Contains(out, "alpha") {
				t.Errorf("the app printed %q: the effect hit what was not asked for", out)
			}
		})
	}
}
