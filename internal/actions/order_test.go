package actions_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/actions"
	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
)

// orderRig is an action service on a desktop with a form of one toolkit.
type orderRig struct {
	svc           *actions.Service
	form          *atspitest.Form
	entry, submit string
}

func newOrderRig(t *testing.T, toolkit string) *orderRig {
	t.Helper()
	d := atspitest.NewDesktop(t)
	form := d.Form(t, toolkit, "Acu Order")
	svc, err := actions.New(actions.Options{Hub: d.Hub, DefaultDisplay: d.Display, SessionBus: d.Session.SessionBus})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	r := &orderRig{svc: svc, form: form}
	var m api.ElementMap
	for range 50 { // the form may still be laying out
		var err error
		m, err = svc.Elements(t.Context(), api.ElementsQuery{})
		if err != nil {
			t.Fatal(err)
		}
		r.entry, r.submit = "", ""
		for _, e := range m.Elements {
			if e.Editable && e.Showing && e.Text == "Value" || e.Editable && e.Showing && r.entry == "" {
				r.entry = e.ID
			}
			if e.Type == "button" && e.Text == "Submit" {
				r.submit = e.ID
			}
		}
		if r.entry != "" && r.submit != "" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r.entry == "" || r.submit == "" {
		t.Fatalf("the %s form has no entry or Submit button in its element map:\n%s", toolkit, m.Text)
	}
	// The pointer over the entry and a click into it: typed keys go there.
	if _, err := svc.Act(t.Context(), actions.Caller{}, api.ActRequest{Actions: []api.Action{
		{Kind: api.ActClick, At: &api.Point{Element: r.entry}, Pointer: true}}}); err != nil {
		t.Fatal(err)
	}
	return r
}

// typeThenSubmit types text by XTest and clicks Submit by its element id
// (an AT-SPI action) in one request, and returns the line the application
// printed.
func (r *orderRig) typeThenSubmit(t testing.TB, text string, lines int) (api.ActResponse, string) {
	t.Helper()
	resp, err := r.svc.Act(t.Context(), actions.Caller{}, api.ActRequest{Actions: []api.Action{
		{Kind: api.ActType, Text: text}, {Kind: api.ActClick, At: &api.Point{Element: r.submit}}}})
	if err != nil || !resp.OK {
		t.Fatalf("act = %+v, %v", resp, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	got, err := r.form.WaitGot(ctx, lines+1)
	if err != nil {
		t.Fatalf("the form reported %q for %d requests: %v (stderr %s)", got, lines+1, err, r.form.Stderr())
	}
	return resp, got[lines]
}

// TestTypeThenClickByIDInOrder: text typed by XTest and a click on an
// element id (an AT-SPI action) in one request reach the application in
// the order sent, on GTK and on Qt: the Submit handler reads the whole
// typed value, every time, and the click's result says the order was
// proved.
func TestTypeThenClickByIDInOrder(t *testing.T) {
	for _, tk := range []string{atspitest.GTK, atspitest.Qt} {
		t.Run(tk, func(t *testing.T) {
			r := newOrderRig(t, tk)
			for i := range 12 {
				want := fmt.Sprintf("order-%d-the-whole-value", i)
				resp, got := r.typeThenSubmit(t, want, i)
				if got != want {
					t.Errorf("request %d: the application got %q, want %q (results %+v)", i, got, want, resp.Results)
				}
				if c := resp.Results[1]; c.Ordered == nil || !*c.Ordered {
					t.Errorf("request %d: the click's ordered = %v (%s), want true", i, c.Ordered, c.OrderNote)
				}
			}
		})
	}
}
