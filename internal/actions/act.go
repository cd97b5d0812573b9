package actions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/smartwait"
)

// Limits of a request.
const (
	MaxActions = 100
	MaxWait    = 60 * time.Second
)

// Defaults of the settle after actions.
const (
	DefaultSettleQuiet   = 100 * time.Millisecond
	DefaultSettleTimeout = 5 * time.Second
)

// step is a validated action with its positions resolved.
type step struct {
	a      api.Action
	at     *target
	path   []target
	button int
	count  int
	hold   time.Duration
	repeat int
}

var buttons = map[string]int{"": gate.ButtonLeft, "left": gate.ButtonLeft, "middle": gate.ButtonMiddle, "right": gate.ButtonRight,
	"back": gate.ButtonBack, "forward": gate.ButtonForward}

// Caller says who sent a request, for the audit.
type Caller struct {
	Client string // the client's name (X-Acu-Client), default "api"
	Token  string // the credential it authenticated with, for the audit
	Remote string // its address
}

// Act runs req's actions on its display. Validation errors, refusals before
// any action ran and an active user are returned as *Error; a failure or
// refusal after some actions ran ends the request with OK false and the
// reason in that action's result.
func (s *Service) Act(ctx context.Context, who Caller, req api.ActRequest) (api.ActResponse, error) {
	if who.Client == "" {
		who.Client = "api"
	}
	dpy := s.display(req.Display)
	q := &request{s: s, ctx: ctx, who: who, start: time.Now(), resp: api.ActResponse{Display: dpy, Results: []api.ActionResult{}},
		audit: AuditEvent{Client: who.Client, Token: who.Token, Remote: who.Remote, Display: dpy}}
	def, err := s.checkRequest(req, dpy)
	if err != nil {
		return q.finish(err)
	}
	for _, a := range req.Actions {
		q.audit.Actions = append(q.audit.Actions, auditAction(a))
	}
	d, err := s.desktop(ctx, dpy)
	if err != nil {
		return q.finish(fromGate(err))
	}
	hands, err := d.acting()
	if err != nil {
		return q.finish(fromGate(err))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	p := &plan{s: s, ctx: ctx, d: d, def: def}
	steps, err := p.resolve(req.Actions, hands)
	if err != nil {
		return q.finish(err)
	}
	// Refused as a whole while the user is active; the gate checks again
	// before every effect.
	if err := hands.UserActive(ctx); err != nil {
		return q.finish(fromGate(err))
	}
	var before *elements.Map
	if req.Diff {
		if before, err = d.extract(ctx); err != nil {
			return q.finish(err)
		}
		p.m = before
	}
	if err := q.runSteps(p, hands, steps, orderTimeout(req)); err != nil {
		return q.finish(err)
	}
	if err := s.after(ctx, d, req, before, &q.resp); err != nil {
		return q.finish(err)
	}
	return q.finish(nil)
}

// checkRequest validates req before anything is opened: its display, the
// number of actions, the default frame and every action, and what comes
// after them.
func (s *Service) checkRequest(req api.ActRequest, dpy string) (frameSpec, error) {
	def := frameSpec{window: req.Window, shot: req.Shot, image: req.Image}
	if dpy == "" {
		return def, invalid("display", "display: no display given and the daemon has no default (DISPLAY): name one, as :99")
	}
	if len(req.Actions) == 0 || len(req.Actions) > MaxActions {
		return def, invalid("actions", "actions: give 1 to %d actions, got %d", MaxActions, len(req.Actions))
	}
	if def.shot != "" && def.image != "" {
		return def, invalid("shot", "give shot (a screenshot id) or image (a screenshot size), not both")
	}
	for i, a := range req.Actions {
		if err := checkAction(a, fmt.Sprintf("actions[%d]", i), def); err != nil {
			return def, err
		}
	}
	return def, s.checkAfter(req)
}

// auditAction is what the audit records of an action before it runs
// (typed text by length only).
func auditAction(a api.Action) AuditAction {
	aa := AuditAction{Kind: a.Kind, Keys: a.Keys, TextLen: len([]rune(a.Text))}
	if a.At != nil {
		aa.Element = a.At.Element
	}
	return aa
}

// request is one Act call's answer and audit as they are built.
type request struct {
	s     *Service
	ctx   context.Context
	who   Caller
	start time.Time
	resp  api.ActResponse
	audit AuditEvent
}

// finish ends the request: its time, its audit (recorded on the client's
// session run unless it was malformed) and its answer.
func (q *request) finish(err error) (api.ActResponse, error) {
	resp, audit := &q.resp, &q.audit
	resp.Ms = ms(time.Since(q.start))
	audit.Ms = resp.Ms
	audit.OK = err == nil && resp.OK
	var ae *Error
	switch {
	case errors.As(err, &ae):
		audit.Error, audit.Code = ae.Message, ae.Code
	case err != nil:
		audit.Error = err.Error()
	case !resp.OK:
		for _, r := range resp.Results {
			if r.Error != nil {
				audit.Error, audit.Code = r.Error.Message, r.Error.Code
			}
		}
	}
	if resp.Display != "" && !(ae != nil && ae.Code == api.CodeInvalid && audit.Ran == 0 && len(audit.Actions) == 0) {
		id, rerr := q.s.sess.record(context.WithoutCancel(q.ctx), q.who.Client, resp.Display, *audit)
		if rerr != nil {
			q.s.log.Warn("record action request", "display", resp.Display, "client", q.who.Client, "err", rerr)
		}
		resp.SessionRun = id
	}
	return *resp, err
}

// plan resolves a request's positions against one element map, read on
// first need and refreshed when a step reads a newer one.
type plan struct {
	s   *Service
	ctx context.Context
	d   *desktop
	def frameSpec
	m   *elements.Map
}

// elements returns the map element targets resolve on.
func (p *plan) elements() (*elements.Map, error) {
	if p.m != nil {
		return p.m, nil
	}
	if p.d.last != nil {
		p.m = p.d.last
		return p.m, nil
	}
	var err error
	p.m, err = p.d.extract(p.ctx)
	return p.m, err
}

// point resolves one position; an unknown element id on the map acu kept
// is looked up again on a fresh one (the id may be newer).
func (p *plan) point(pt *api.Point, field string) (target, error) {
	t, err := p.s.resolvePoint(p.ctx, p.d, pt, field, p.def, p.elements)
	var ae *Error
	if errors.As(err, &ae) && ae.Suggestions != nil && p.d.last == p.m && p.m != nil {
		p.d.last, p.m = nil, nil
		t, err = p.s.resolvePoint(p.ctx, p.d, pt, field, p.def, p.elements)
	}
	return t, err
}

// resolve resolves every position and checks every text before acting.
func (p *plan) resolve(as []api.Action, hands *gate.Hands) ([]step, error) {
	steps := make([]step, len(as))
	for i, a := range as {
		field := fmt.Sprintf("actions[%d]", i)
		st := step{a: a, button: buttons[a.Button], count: max(a.Count, 1), repeat: max(a.Repeat, 1),
			hold: time.Duration(a.HoldMs) * time.Millisecond}
		if a.At != nil {
			t, err := p.point(a.At, field+".at")
			if err != nil {
				return nil, err
			}
			st.at = &t
		}
		for j := range a.Path {
			t, err := p.point(&a.Path[j], fmt.Sprintf("%s.path[%d]", field, j))
			if err != nil {
				return nil, err
			}
			st.path = append(st.path, t)
		}
		if a.Kind == api.ActType {
			if err := hands.CheckText(a.Text); err != nil {
				return nil, invalid(field+".text", "%s.text: %v", field, err)
			}
		}
		steps[i] = st
	}
	return steps, nil
}

// runSteps runs the steps in order, each result into the answer and the
// audit, until one fails (the rest are skipped). The error ends the
// request: a map that cannot be read, or a refusal of the first step.
func (q *request) runSteps(p *plan, hands *gate.Hands, steps []step, orderWait time.Duration) error {
	q.resp.OK = true
	var prev orderState
	for i, st := range steps {
		r, err := q.runStep(p, hands, &prev, i, st, orderWait)
		if err != nil {
			return err
		}
		aa := &q.audit.Actions[i]
		aa.At, aa.Window, aa.Via, aa.OK = r.At, r.Window, r.Via, r.OK
		if r.Error != nil {
			aa.Error = r.Error.Message
		}
		if r.OK {
			q.audit.Ran++
		}
		q.resp.Results = append(q.resp.Results, r)
		if r.OK {
			continue
		}
		q.resp.OK = false
		if i == 0 && (r.Error.Code == api.CodeWindowDenied || r.Error.Code == api.CodeUserActive) {
			// Refused before anything ran: answer as a refusal.
			return &Error{Code: r.Error.Code, Message: r.Error.Message, ActiveFor: msDur(r.Error.ActiveMs), RetryAfter: msDur(r.Error.RetryAfterMs)}
		}
		for j := i + 1; j < len(steps); j++ {
			q.resp.Results = append(q.resp.Results, api.ActionResult{Index: j, Kind: steps[j].a.Kind, Skipped: true})
		}
		return nil
	}
	return nil
}

// runStep runs step i, after waiting for the order when it changes
// mechanism, and returns its result.
func (q *request) runStep(p *plan, hands *gate.Hands, prev *orderState, i int, st step, orderWait time.Duration) (api.ActionResult, error) {
	t0 := time.Now()
	r := api.ActionResult{Index: i, Kind: st.a.Kind}
	prev.before(q.ctx, hands, st, &r, orderWait)
	var cur *elements.Map
	if needsMap(st) {
		var err error
		if cur, err = p.elements(); err != nil {
			return r, err
		}
	}
	err := fromGate(q.s.run(q.ctx, p.d, hands, cur, st, &r))
	if p.d.last != nil && p.m != nil && p.d.last != p.m {
		p.m = p.d.last // a verified step read a newer map: act on it next
	}
	if err != nil && !refusal(err, &r) {
		r.Error = &api.ErrorDetail{Code: api.CodeActionFailed, Message: err.Error()}
		switch {
		case errors.Is(err, elements.ErrNoElement):
			r.Error.Code = api.CodeElementMissing
		case errors.Is(err, elements.ErrStale):
			r.Error.Code = api.CodeElementStale
		}
	}
	prev.after(st, &r, t0)
	r.Ms = ms(time.Since(t0))
	r.OK = r.Error == nil
	return r, nil
}

func msDur(v int64) time.Duration { return time.Duration(v) * time.Millisecond }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// refusal puts a refusal (deny-list, user active) into r; false for other
// errors.
func refusal(err error, r *api.ActionResult) bool {
	var ae *Error
	if errors.As(err, &ae) && (ae.Code == api.CodeWindowDenied || ae.Code == api.CodeUserActive) {
		d := ae.Detail()
		r.Error = &d
		return true
	}
	return false
}

func needsMap(st step) bool {
	if st.at != nil && st.at.el != "" {
		return true
	}
	for _, t := range st.path {
		if t.el != "" {
			return true
		}
	}
	return false
}

// fromGate turns the gate's policy refusals into the service's errors,
// leaving others as they are.
func fromGate(err error) error {
	if r, ok := gate.IsRefused(err); ok {
		return &Error{Code: r.Code, Field: r.Field, Message: r.Message, ActiveFor: r.ActiveFor, RetryAfter: r.RetryAfter}
	}
	return err
}

// checkAfter validates what the request asks for after the actions.
func (s *Service) checkAfter(req api.ActRequest) error {
	if req.OrderTimeoutMs < 0 || time.Duration(req.OrderTimeoutMs)*time.Millisecond > MaxOrderTimeout {
		return invalid("order_timeout_ms", "order_timeout_ms %d: use 0 (default %d) to %d", req.OrderTimeoutMs,
			gate.DefaultOrderTimeout.Milliseconds(), MaxOrderTimeout.Milliseconds())
	}
	if st := req.Settle; st != nil {
		if st.QuietMs < 0 || st.TimeoutMs < 0 || st.TimeoutMs > 60000 {
			return invalid("settle", "settle: quiet_ms and timeout_ms must be 0 (default) or positive, timeout_ms at most 60000")
		}
		q, t := settleDurations(st)
		if q < 10*time.Millisecond || q >= t {
			return invalid("settle.quiet_ms", "settle.quiet_ms must be at least 10 and less than timeout_ms (%d)", t.Milliseconds())
		}
		if s.opts.Settle == nil {
			return &Error{Code: api.CodeUnavailable, Message: "settle is not available in this daemon"}
		}
	}
	if o := req.Screenshot; o != nil {
		if err := checkShot(*o, "screenshot"); err != nil {
			return err
		}
	}
	return nil
}

func settleDurations(st *api.SettleOptions) (quiet, timeout time.Duration) {
	quiet, timeout = DefaultSettleQuiet, DefaultSettleTimeout
	if st.QuietMs > 0 {
		quiet = time.Duration(st.QuietMs) * time.Millisecond
	}
	if st.TimeoutMs > 0 {
		timeout = time.Duration(st.TimeoutMs) * time.Millisecond
	}
	return quiet, timeout
}

// after settles, takes the screenshot and diffs the map, as req asks.
func (s *Service) after(ctx context.Context, d *desktop, req api.ActRequest, before *elements.Map, resp *api.ActResponse) error {
	if st := req.Settle; st != nil {
		q, t := settleDurations(st)
		res, err := s.opts.Settle.Settle(ctx, smartwait.SettleSpec{Display: d.name, Target: st.Target, Quiet: q, Timeout: t})
		if err != nil {
			var ve *smartwait.ValidationError
			if errors.As(err, &ve) {
				return invalid("settle."+ve.Field, "settle.%s: %s", ve.Field, ve.Message)
			}
			return err
		}
		resp.Settle = &api.SettleInfo{Settled: res.Settled, WaitedMs: ms(res.Waited), Changes: res.Changes}
	}
	var after *elements.Map
	if req.Diff {
		var err error
		if after, err = d.extract(ctx); err != nil {
			return err
		}
		df := elements.Compare(before, after)
		resp.Diff = toAPIDiff(df)
	}
	if o := req.Screenshot; o != nil {
		var marks *elements.Map
		if o.Labels {
			marks = after
			if marks == nil {
				var err error
				if marks, err = d.extract(ctx); err != nil {
					return err
				}
			}
		}
		shot, err := s.shoot(ctx, d.name, *o, marks)
		if err != nil {
			return err
		}
		resp.Screenshot = shot
	}
	return nil
}

func toAPIDiff(df elements.Diff) *api.ElementDiff {
	out := &api.ElementDiff{Text: df.String()}
	for i := range df.Added {
		out.Added = append(out.Added, ToAPIElement(&df.Added[i]))
	}
	for i := range df.Removed {
		out.Removed = append(out.Removed, ToAPIElement(&df.Removed[i]))
	}
	for _, c := range df.Changed {
		out.Changed = append(out.Changed, api.ElementChange{ID: c.ID, What: c.What, Before: ToAPIElement(&c.Before), After: ToAPIElement(&c.After)})
	}
	return out
}

// ToAPIElement converts an element to its wire form.
func ToAPIElement(e *elements.Element) api.Element {
	c := e.Center()
	return api.Element{ID: e.ID, Type: e.Type, Text: e.Text, Value: e.Value, Desc: e.Desc, Role: e.Role,
		Box: [4]int{e.Box.Min.X, e.Box.Min.Y, e.Box.Dx(), e.Box.Dy()}, Center: [2]int{c.X, c.Y}, App: e.App, Window: e.Window,
		Clickable: e.Clickable, Editable: e.Editable, Focused: e.Focused, Enabled: e.Enabled, Checked: e.Checked,
		Showing: e.Showing, Active: e.Active, Actions: e.Actions, Source: e.Source.String()}
}
