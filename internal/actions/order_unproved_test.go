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

// TestOrderNotProvedIsSaid: when the application cannot show within the
// request's order_timeout_ms that it handled the earlier input (a GTK form
// busy for 3 s), the next action by another mechanism still runs, and its
// result says the order was not proved and why, instead of claiming it.
func TestOrderNotProvedIsSaid(t *testing.T) {
	r := newOrderRig(t, atspitest.GTK)
	const want = "late"
	resp, err := r.svc.Act(t.Context(), actions.Caller{}, api.ActRequest{OrderTimeoutMs: 300, Actions: []api.Action{
		{Kind: api.ActKey, Keys: "F5"}, // the form stalls for 3 s
		{Kind: api.ActType, Text: want},
		{Kind: api.ActClick, At: &api.Point{Element: r.submit}}}})
	if err != nil {
		t.Fatal(err)
	}
	c := resp.Results[2]
	if c.Ordered == nil || *c.Ordered || c.OrderNote == "" {
		ordered := "absent"
		if c.Ordered != nil {
			ordered = fmt.Sprint(*c.Ordered)
		}
		t.Fatalf("the click after input the busy form had not handled: ordered %s, note %q; want ordered false with a note (results %+v)",
			ordered, c.OrderNote, resp.Results)
	}
	if c.OrderMs <= 0 {
		t.Errorf("the click's order_ms = %v, want the time its proof took", c.OrderMs)
	}
	t.Logf("ordered %v after %v ms: %s; results %+v", *c.Ordered, c.OrderMs, c.OrderNote, resp.Results)
	// The form comes back and handles what it was sent.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if _, err := r.form.WaitGot(ctx, 1); err != nil {
		t.Fatalf("the form reported nothing after its stall: %v (stderr %s)", err, r.form.Stderr())
	}
}
