package actions

import (
	"context"
	"image"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/gate"
)

// MaxOrderTimeout is the longest order_timeout_ms a request may ask for.
const MaxOrderTimeout = 10 * time.Second

func orderTimeout(req api.ActRequest) time.Duration {
	if req.OrderTimeoutMs > 0 {
		return time.Duration(req.OrderTimeoutMs) * time.Millisecond
	}
	return gate.DefaultOrderTimeout
}

// orderState is what a request's actions so far leave for the next: the
// mechanism that carried the last effect, where it landed and when it
// began. Input by one mechanism can overtake input by another on its way
// into the application (typed keys wait in its X queue while an AT-SPI
// click arrives on D-Bus), so before an action by another mechanism the
// request waits until the application has handled the earlier input
// (gate.Hands.Order) and says so in the action's result.
type orderState struct {
	mech  string
	at    *image.Point
	began time.Time
}

// mechanism is how st will be carried out: by an AT-SPI action or text
// when it targets an element the service hands to the accessibility tree,
// by XTest otherwise, by nothing for a wait.
func mechanism(st step) string {
	a := st.a
	onElement := st.at != nil && st.at.el != ""
	switch {
	case a.Kind == api.ActWait:
		return gate.MechNone
	case a.Kind == api.ActClick && onElement && st.button == gate.ButtonLeft && st.count == 1 && a.Mods == "":
		return gate.MechAction
	case a.Kind == api.ActType && onElement:
		return gate.MechText
	case a.Kind == api.ActKey && onElement && st.hold == 0 && st.repeat == 1:
		return gate.MechAction
	}
	return gate.MechXTest
}

// mechanismOf is the mechanism a result's Via reports.
func mechanismOf(via string) string {
	switch {
	case via == "":
		return gate.MechNone
	case strings.HasPrefix(via, "action"):
		return gate.MechAction
	case via == "editable_text":
		return gate.MechText
	}
	return gate.MechXTest // the device: "xtest", "virtual" (Wayland), "pointer"
}

// before waits for the earlier input when st changes mechanism, and
// records the outcome in r.
func (o *orderState) before(ctx context.Context, h *gate.Hands, st step, r *api.ActionResult, timeout time.Duration) {
	next := mechanism(st)
	if o.mech == gate.MechNone || next == gate.MechNone || next == o.mech {
		return
	}
	res := h.Order(ctx, o.at, o.began, timeout)
	proved := res.Proved
	r.Ordered, r.OrderNote, r.OrderMs = &proved, res.Note, ms(res.Took)
}

// after records how st was carried out, from its result.
func (o *orderState) after(st step, r *api.ActionResult, began time.Time) {
	m := mechanismOf(r.Via)
	if st.a.Kind == api.ActWait || m == gate.MechNone {
		return
	}
	o.mech, o.began, o.at = m, began, nil
	if r.At != nil {
		o.at = &image.Point{X: r.At[0], Y: r.At[1]}
	}
}
