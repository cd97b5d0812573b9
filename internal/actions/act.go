package actions

import (
	"context"
	"errors"
	"fmt"
	"image"
	"slices"
	"strings"
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

// checkAction validates a's syntax; field is "actions[i]".
func checkAction(a api.Action, field string, def frameSpec) error {
	kind := a.Kind
	if !slices.Contains(api.ActionKinds, kind) {
		if kind == "" {
			return invalid(field+".kind", "%s.kind is missing: use one of %s", field, strings.Join(api.ActionKinds, ", "))
		}
		return invalid(field+".kind", "%s.kind %q is unknown: use one of %s", field, kind, strings.Join(api.ActionKinds, ", "))
	}
	// Fields a kind does not use are mistakes worth naming.
	unused := func(name string, set bool) error {
		if set {
			return invalid(field+"."+name, "%s.%s does not apply to %s", field, name, kind)
		}
		return nil
	}
	uses := map[string][]string{
		api.ActMove: {"at", "mods"}, api.ActClick: {"at", "button", "count", "verify", "pointer", "mods"},
		api.ActMouseDown: {"at", "button", "mods"}, api.ActMouseUp: {"at", "button", "mods"},
		api.ActDrag: {"path", "button", "hold_ms", "mods"}, api.ActScroll: {"at", "dx", "dy", "mods"},
		api.ActType: {"at", "text", "verify", "pointer"}, api.ActKey: {"at", "keys", "hold_ms", "repeat", "verify", "pointer"},
		api.ActWait: {"ms"},
	}[kind]
	for _, f := range []struct {
		name string
		set  bool
	}{{"at", a.At != nil}, {"path", a.Path != nil}, {"button", a.Button != ""}, {"count", a.Count != 0},
		{"dx", a.DX != 0}, {"dy", a.DY != 0}, {"text", a.Text != ""}, {"keys", a.Keys != ""}, {"hold_ms", a.HoldMs != 0},
		{"repeat", a.Repeat != 0}, {"ms", a.Ms != 0}, {"verify", a.Verify}, {"pointer", a.Pointer}, {"mods", a.Mods != ""}} {
		if !slices.Contains(uses, f.name) {
			if err := unused(f.name, f.set); err != nil {
				return err
			}
		}
	}
	if a.Mods != "" {
		if err := gate.CheckMods(a.Mods); err != nil {
			return invalid(field+".mods", "%s.mods: %v", field, err)
		}
	}
	if _, ok := buttons[a.Button]; !ok {
		return invalid(field+".button", "%s.button %q: use left, right, middle, back or forward", field, a.Button)
	}
	if a.At != nil {
		if err := checkPoint(a.At, field+".at", def); err != nil {
			return err
		}
	}
	if (a.Verify || a.Pointer) && (a.At == nil || a.At.Element == "") {
		return invalid(field+".verify", "%s: verify and pointer apply to element targets only (at.element)", field)
	}
	switch kind {
	case api.ActMove:
		if a.At == nil {
			return invalid(field+".at", "%s: move needs at", field)
		}
	case api.ActClick:
		if a.Count < 0 || a.Count > gate.MaxClickCount {
			return invalid(field+".count", "%s.count %d: use 1 (default) to %d", field, a.Count, gate.MaxClickCount)
		}
	case api.ActDrag:
		if len(a.Path) < 2 || len(a.Path) > gate.MaxPathPoints {
			return invalid(field+".path", "%s.path has %d points: give 2 to %d", field, len(a.Path), gate.MaxPathPoints)
		}
		for i := range a.Path {
			if err := checkPoint(&a.Path[i], fmt.Sprintf("%s.path[%d]", field, i), def); err != nil {
				return err
			}
		}
		if a.HoldMs < 0 || time.Duration(a.HoldMs)*time.Millisecond > gate.MaxHold {
			return invalid(field+".hold_ms", "%s.hold_ms %d: use 0 to %d", field, a.HoldMs, gate.MaxHold.Milliseconds())
		}
	case api.ActScroll:
		if a.DX == 0 && a.DY == 0 {
			return invalid(field+".dy", "%s: scroll needs dy (positive scrolls down) or dx (positive scrolls right)", field)
		}
		if abs(a.DX) > gate.MaxScroll || abs(a.DY) > gate.MaxScroll {
			return invalid(field+".dy", "%s: scroll by dx=%d dy=%d: at most %d wheel clicks each", field, a.DX, a.DY, gate.MaxScroll)
		}
	case api.ActType:
		if a.Text == "" {
			return invalid(field+".text", "%s: type needs text", field)
		}
	case api.ActKey:
		if strings.TrimSpace(a.Keys) == "" {
			return invalid(field+".keys", "%s: key needs keys, such as ctrl+l, alt+Tab or Return", field)
		}
		if err := gate.CheckKeys(a.Keys); err != nil {
			return invalid(field+".keys", "%s.keys: %v", field, err)
		}
		if a.HoldMs < 0 || time.Duration(a.HoldMs)*time.Millisecond > gate.MaxHold {
			return invalid(field+".hold_ms", "%s.hold_ms %d: use 0 to %d", field, a.HoldMs, gate.MaxHold.Milliseconds())
		}
		if a.Repeat < 0 || a.Repeat > gate.MaxRepeat {
			return invalid(field+".repeat", "%s.repeat %d: use 1 (default) to %d", field, a.Repeat, gate.MaxRepeat)
		}
	case api.ActWait:
		if a.Ms <= 0 || time.Duration(a.Ms)*time.Millisecond > MaxWait {
			return invalid(field+".ms", "%s.ms %d: wait 1 to %d milliseconds", field, a.Ms, MaxWait.Milliseconds())
		}
	}
	return nil
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

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
	start := time.Now()
	if who.Client == "" {
		who.Client = "api"
	}
	dpy := s.display(req.Display)
	resp := api.ActResponse{Display: dpy, Results: []api.ActionResult{}}
	audit := AuditEvent{Client: who.Client, Token: who.Token, Remote: who.Remote, Display: dpy}
	finish := func(err error) (api.ActResponse, error) {
		resp.Ms = ms(time.Since(start))
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
		if dpy != "" && !(ae != nil && ae.Code == api.CodeInvalid && audit.Ran == 0 && len(audit.Actions) == 0) {
			id, rerr := s.sess.record(context.WithoutCancel(ctx), who.Client, dpy, audit)
			if rerr != nil {
				s.log.Warn("record action request", "display", dpy, "client", who.Client, "err", rerr)
			}
			resp.SessionRun = id
		}
		return resp, err
	}
	if dpy == "" {
		return finish(invalid("display", "display: no display given and the daemon has no default (DISPLAY): name one, as :99"))
	}
	if len(req.Actions) == 0 || len(req.Actions) > MaxActions {
		return finish(invalid("actions", "actions: give 1 to %d actions, got %d", MaxActions, len(req.Actions)))
	}
	def := frameSpec{window: req.Window, shot: req.Shot, image: req.Image}
	if def.shot != "" && def.image != "" {
		return finish(invalid("shot", "give shot (a screenshot id) or image (a screenshot size), not both"))
	}
	for i, a := range req.Actions {
		if err := checkAction(a, fmt.Sprintf("actions[%d]", i), def); err != nil {
			return finish(err)
		}
	}
	if err := s.checkAfter(req); err != nil {
		return finish(err)
	}
	for _, a := range req.Actions {
		aa := AuditAction{Kind: a.Kind, Keys: a.Keys, TextLen: len([]rune(a.Text))}
		if a.At != nil {
			aa.Element = a.At.Element
		}
		audit.Actions = append(audit.Actions, aa)
	}
	d, err := s.desktop(ctx, dpy)
	if err != nil {
		return finish(fromGate(err))
	}
	hands, err := d.acting()
	if err != nil {
		return finish(fromGate(err))
	}
	d.mu.Lock()
	defer d.mu.Unlock()

	// Resolve every position and check every text before acting.
	var m *elements.Map
	mapFn := func() (*elements.Map, error) {
		if m != nil {
			return m, nil
		}
		if d.last != nil {
			m = d.last
			return m, nil
		}
		var err error
		m, err = d.extract(ctx)
		return m, err
	}
	steps := make([]step, len(req.Actions))
	for i, a := range req.Actions {
		field := fmt.Sprintf("actions[%d]", i)
		st := step{a: a, button: buttons[a.Button], count: max(a.Count, 1), repeat: max(a.Repeat, 1),
			hold: time.Duration(a.HoldMs) * time.Millisecond}
		resolve := func(p *api.Point, f string) (target, error) {
			t, err := s.resolvePoint(ctx, d, p, f, def, mapFn)
			var ae *Error
			if errors.As(err, &ae) && ae.Suggestions != nil && d.last == m && m != nil {
				// The id may be newer than the map acu kept: read a fresh one.
				d.last, m = nil, nil
				t, err = s.resolvePoint(ctx, d, p, f, def, mapFn)
			}
			return t, err
		}
		if a.At != nil {
			t, err := resolve(a.At, field+".at")
			if err != nil {
				return finish(err)
			}
			st.at = &t
		}
		for j := range a.Path {
			t, err := resolve(&a.Path[j], fmt.Sprintf("%s.path[%d]", field, j))
			if err != nil {
				return finish(err)
			}
			st.path = append(st.path, t)
		}
		if a.Kind == api.ActType {
			if err := hands.CheckText(a.Text); err != nil {
				return finish(invalid(field+".text", "%s.text: %v", field, err))
			}
		}
		steps[i] = st
	}
	// Refused as a whole while the user is active; the gate checks again
	// before every effect.
	if err := hands.UserActive(ctx); err != nil {
		return finish(fromGate(err))
	}
	var before *elements.Map
	if req.Diff {
		if before, err = d.extract(ctx); err != nil {
			return finish(err)
		}
		m = before
	}

	resp.OK = true
	var prev orderState
	for i, st := range steps {
		t0 := time.Now()
		r := api.ActionResult{Index: i, Kind: st.a.Kind}
		prev.before(ctx, hands, st, &r, orderTimeout(req))
		{
			var cur *elements.Map
			if needsMap(st) {
				if cur, err = mapFn(); err != nil {
					return finish(err)
				}
			}
			err := fromGate(s.run(ctx, d, hands, cur, st, &r))
			if d.last != nil && m != nil && d.last != m {
				m = d.last // a verified step read a newer map: act on it next
			}
			if err != nil && !refusal(err, &r) {
				r.Error = &api.ErrorDetail{Code: api.CodeActionFailed, Message: err.Error()}
				if errors.Is(err, elements.ErrNoElement) {
					r.Error.Code = api.CodeElementMissing
				}
			}
		}
		prev.after(st, &r, t0)
		r.Ms = ms(time.Since(t0))
		r.OK = r.Error == nil
		aa := &audit.Actions[i]
		aa.At, aa.Window, aa.Via, aa.OK = r.At, r.Window, r.Via, r.OK
		if r.Error != nil {
			aa.Error = r.Error.Message
		}
		if r.OK {
			audit.Ran++
		}
		resp.Results = append(resp.Results, r)
		if !r.OK {
			resp.OK = false
			if i == 0 && (r.Error.Code == api.CodeWindowDenied || r.Error.Code == api.CodeUserActive) {
				// Refused before anything ran: answer as a refusal.
				return finish(&Error{Code: r.Error.Code, Message: r.Error.Message, ActiveFor: msDur(r.Error.ActiveMs), RetryAfter: msDur(r.Error.RetryAfterMs)})
			}
			for j := i + 1; j < len(steps); j++ {
				resp.Results = append(resp.Results, api.ActionResult{Index: j, Kind: steps[j].a.Kind, Skipped: true})
			}
			break
		}
	}
	if err := s.after(ctx, d, req, before, &resp); err != nil {
		return finish(err)
	}
	return finish(nil)
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

// run carries out one step.
func (s *Service) run(ctx context.Context, d *desktop, h *gate.Hands, m *elements.Map, st step, r *api.ActionResult) (err error) {
	a := st.a
	pol := s.opts.Gate.Policy()
	// land records where an effect landed in the result.
	land := func(l gate.Landing, err error) error {
		if l.At != nil {
			r.At = &[2]int{l.At.X, l.At.Y}
		}
		if l.Window != nil && r.Window == "" {
			r.Window = l.Window.Title
		}
		return err
	}
	// px resolves a target to a screen pixel (the gate checks the window
	// it lands in when the effect runs).
	px := func(t *target) (*image.Point, error) {
		if t == nil {
			return nil, nil
		}
		if t.el == "" {
			p := *t.px
			return &p, nil
		}
		e, ok := m.Get(t.el)
		if !ok {
			return nil, fmt.Errorf("%s: %w", t.el, elements.ErrNoElement)
		}
		if e.Box.Empty() {
			return nil, fmt.Errorf("element %s has no bounds on screen: use another element", e.ID)
		}
		if err := pol.CheckElement(e.ID, e.App, e.Window); err != nil {
			return nil, err
		}
		p := e.Center()
		r.Element = e.ID
		return &p, nil
	}
	// focusAt clicks the action's position first, when it has one: type
	// and key land in the focused window.
	focusAt := func() error {
		if st.at == nil {
			return nil
		}
		p, err := px(st.at)
		if err != nil {
			return err
		}
		return land(h.ClickAt(ctx, p, gate.ButtonLeft, 1))
	}
	elementStep := func(kind, text string) error {
		p, err := px(st.at) // bounds, and the deny-list by application
		if err != nil {
			return err
		}
		w, err := gate.WindowAt(ctx, d.conn, *p)
		if err != nil {
			return err
		}
		if err := land(gate.Landing{At: p, Window: w}, pol.CheckWindow(w, a.Kind)); err != nil {
			return err
		}
		// The extractor's accessibility effects pass the gate
		// (elementEffect); its pointer fallbacks are the gate's hands.
		stp := elements.Step{Kind: kind, Target: st.at.el, Text: text, Pointer: a.Pointer}
		if a.Verify {
			res, err := d.ex.Execute(ctx, m, stp)
			r.Via, r.Attempts = res.Via, res.Attempts
			if res.After != nil {
				d.last = res.After
			}
			return err
		}
		via, err := d.ex.Do(ctx, m, stp)
		r.Via = via
		return err
	}
	onElement := st.at != nil && st.at.el != ""
	r.Via = "xtest"
	if a.Mods != "" {
		if err := h.ModsDown(ctx, a.Mods); err != nil {
			return err
		}
		defer func() {
			if uerr := h.ModsUp(context.WithoutCancel(ctx)); uerr != nil && err == nil {
				err = uerr
			}
		}()
	}
	switch a.Kind {
	case api.ActMove:
		p, err := px(st.at)
		if err != nil {
			return err
		}
		return land(h.MoveTo(ctx, *p))
	case api.ActClick:
		if onElement && st.button == gate.ButtonLeft && st.count == 1 && a.Mods == "" {
			return elementStep(elements.StepClick, "")
		}
		p, err := px(st.at)
		if err != nil {
			return err
		}
		return land(h.ClickAt(ctx, p, st.button, st.count))
	case api.ActMouseDown, api.ActMouseUp:
		p, err := px(st.at)
		if err != nil {
			return err
		}
		if a.Kind == api.ActMouseDown {
			return land(h.ButtonDown(ctx, p, st.button))
		}
		return land(h.ButtonUp(ctx, p, st.button))
	case api.ActDrag:
		path := make([]image.Point, 0, len(st.path))
		for i := range st.path {
			p, err := px(&st.path[i])
			if err != nil {
				return err
			}
			path = append(path, *p)
		}
		return land(h.DragPath(ctx, st.button, path, st.hold))
	case api.ActScroll:
		p, err := px(st.at)
		if err != nil {
			return err
		}
		return land(h.ScrollAt(ctx, p, a.DX, a.DY))
	case api.ActType:
		if onElement {
			return elementStep(elements.StepType, a.Text)
		}
		if err := focusAt(); err != nil {
			return err
		}
		return land(h.Type(ctx, a.Text))
	case api.ActKey:
		if onElement && st.hold == 0 && st.repeat == 1 {
			return elementStep(elements.StepKey, a.Keys)
		}
		if err := focusAt(); err != nil {
			return err
		}
		return land(h.KeyHold(ctx, a.Keys, st.hold, st.repeat))
	case api.ActWait:
		r.Via = ""
		t := time.NewTimer(time.Duration(a.Ms) * time.Millisecond)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		}
	}
	return fmt.Errorf("action kind %q unknown", a.Kind)
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
