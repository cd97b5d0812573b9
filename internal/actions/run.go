package actions

import (
	"context"
	"fmt"
	"image"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/gate"
)

// stepRun is one step being carried out: its kind's exec (kinds) does it
// through the gate's hands and writes where it landed and how into r.
type stepRun struct {
	ctx context.Context
	d   *desktop
	h   *gate.Hands
	m   *elements.Map // the element map element targets resolve on
	st  step
	r   *api.ActionResult
	pol gate.Policy
}

// run carries out one step, with its modifier keys held.
func (s *Service) run(ctx context.Context, d *desktop, h *gate.Hands, m *elements.Map, st step, r *api.ActionResult) (err error) {
	k, ok := kinds[st.a.Kind]
	if !ok {
		return fmt.Errorf("action kind %q unknown", st.a.Kind)
	}
	x := &stepRun{ctx: ctx, d: d, h: h, m: m, st: st, r: r, pol: s.opts.Gate.Policy()}
	r.Via = h.Via() // xtest, or virtual on Wayland
	if st.a.Mods != "" {
		if err := h.ModsDown(ctx, st.a.Mods); err != nil {
			return err
		}
		defer func() {
			if uerr := h.ModsUp(context.WithoutCancel(ctx)); uerr != nil && err == nil {
				err = uerr
			}
		}()
	}
	return k.exec(x)
}

// land records where an effect landed in the result.
func (x *stepRun) land(l gate.Landing, err error) error {
	if l.At != nil {
		x.r.At = &[2]int{l.At.X, l.At.Y}
	}
	if l.Window != nil && x.r.Window == "" {
		x.r.Window = l.Window.Title
	}
	return err
}

// px resolves a target to the screen pixel a pointer effect acts at (the
// gate checks the window it lands in when the effect runs); nil for none.
// An element is looked at again first: the map may be older than the
// screen (the model thought while the window changed), so the effect lands
// on the control where it is now, and a control that is gone fails the
// step as stale rather than hitting what took its place.
func (x *stepRun) px(t *target) (*image.Point, error) {
	p, _, err := x.resolve(t, true)
	return p, err
}

// resolve is px, and for an element target also the element (as it is now
// when relocate; else as the map has it).
func (x *stepRun) resolve(t *target, relocate bool) (*image.Point, *elements.Element, error) {
	if t == nil {
		return nil, nil, nil
	}
	if t.el == "" {
		p := *t.px
		return &p, nil, nil
	}
	e, ok := x.m.Get(t.el)
	if !ok {
		return nil, nil, fmt.Errorf("%s: %w", t.el, elements.ErrNoElement)
	}
	if e.Box.Empty() {
		return nil, nil, fmt.Errorf("element %s has no bounds on screen: use another element", e.ID)
	}
	if err := x.pol.CheckElement(e.ID, e.App, e.Window); err != nil {
		return nil, nil, err
	}
	x.r.Element = e.ID
	if relocate && x.d.ex != nil {
		cur, note, err := x.d.ex.Relocate(x.ctx, x.m, e)
		if err != nil {
			return nil, nil, err
		}
		x.r.Moved = note
		e = cur
	}
	p := e.Center()
	return &p, e, nil
}

// onElement reports whether the step targets an element.
func (x *stepRun) onElement() bool { return x.st.at != nil && x.st.at.el != "" }

// focusAt clicks the action's position first, when it has one: type and
// key land in the focused window.
func (x *stepRun) focusAt() error {
	if x.st.at == nil {
		return nil
	}
	p, err := x.px(x.st.at)
	if err != nil {
		return err
	}
	return x.land(x.h.ClickAt(x.ctx, p, gate.ButtonLeft, 1))
}

// element carries the step out on its element through the extractor (an
// AT-SPI action or text, or its pointer fallback), verified when asked.
func (x *stepRun) element(kind, text string) error {
	// An element acted on by the pointer (pointer:true, or one with no
	// accessible action: OCR text) is looked at again now, so the result
	// says where the effect landed; an accessible action needs no place,
	// and its pointer fallback, if it comes to that, looks again itself
	// (Recheck).
	var act bool
	if e, ok := x.m.Get(x.st.at.el); ok {
		act = !x.st.a.Pointer && !e.Ref.IsNull() && len(e.Actions) > 0
	}
	p, e, err := x.resolve(x.st.at, !act) // bounds, the deny-list by application
	if err != nil {
		return err
	}
	m := x.m
	if x.r.Moved != "" {
		m = m.With(*e) // the extractor acts on it where it is now
	}
	w, err := x.h.WindowAt(x.ctx, *p)
	if err != nil {
		return err
	}
	if err := x.land(gate.Landing{At: p, Window: w}, x.pol.CheckWindow(w, x.st.a.Kind)); err != nil {
		return err
	}
	// The extractor's accessibility effects pass the gate (elementEffect);
	// its pointer fallbacks are the gate's hands.
	stp := elements.Step{Kind: kind, Target: x.st.at.el, Text: text, Pointer: x.st.a.Pointer, Recheck: act}
	if x.st.a.Verify {
		res, err := x.d.ex.Execute(x.ctx, m, stp)
		x.r.Via, x.r.Attempts = res.Via, res.Attempts
		if res.After != nil {
			x.d.last = res.After
		}
		return err
	}
	via, err := x.d.ex.Do(x.ctx, m, stp)
	x.r.Via = via
	return err
}

func (x *stepRun) move() error {
	p, err := x.px(x.st.at)
	if err != nil {
		return err
	}
	return x.land(x.h.MoveTo(x.ctx, *p))
}

func (x *stepRun) click() error {
	st := x.st
	if x.onElement() && st.button == gate.ButtonLeft && st.count == 1 && st.a.Mods == "" {
		return x.element(elements.StepClick, "")
	}
	p, err := x.px(st.at)
	if err != nil {
		return err
	}
	return x.land(x.h.ClickAt(x.ctx, p, st.button, st.count))
}

func (x *stepRun) mouseDown() error {
	p, err := x.px(x.st.at)
	if err != nil {
		return err
	}
	return x.land(x.h.ButtonDown(x.ctx, p, x.st.button))
}

func (x *stepRun) mouseUp() error {
	p, err := x.px(x.st.at)
	if err != nil {
		return err
	}
	return x.land(x.h.ButtonUp(x.ctx, p, x.st.button))
}

func (x *stepRun) drag() error {
	path := make([]image.Point, 0, len(x.st.path))
	for i := range x.st.path {
		p, err := x.px(&x.st.path[i])
		if err != nil {
			return err
		}
		path = append(path, *p)
	}
	return x.land(x.h.DragPath(x.ctx, x.st.button, path, x.st.hold))
}

func (x *stepRun) scroll() error {
	p, err := x.px(x.st.at)
	if err != nil {
		return err
	}
	return x.land(x.h.ScrollAt(x.ctx, p, x.st.a.DX, x.st.a.DY))
}

func (x *stepRun) typeText() error {
	if x.onElement() {
		return x.element(elements.StepType, x.st.a.Text)
	}
	if err := x.focusAt(); err != nil {
		return err
	}
	return x.land(x.h.Type(x.ctx, x.st.a.Text))
}

func (x *stepRun) key() error {
	st := x.st
	if x.onElement() && st.hold == 0 && st.repeat == 1 {
		return x.element(elements.StepKey, st.a.Keys)
	}
	if err := x.focusAt(); err != nil {
		return err
	}
	return x.land(x.h.KeyHold(x.ctx, st.a.Keys, st.hold, st.repeat))
}

func (x *stepRun) wait() error {
	x.r.Via = ""
	t := time.NewTimer(time.Duration(x.st.a.Ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-x.ctx.Done():
		return x.ctx.Err()
	case <-t.C:
		return nil
	}
}
