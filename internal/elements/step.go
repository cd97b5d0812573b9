package elements

import (
	"context"
	"errors"
	"fmt"
	"image"
	"strings"

	"github.com/acu-dev/acu/internal/gate"
)

// Device is the pointer and keyboard fallback of steps: *input.Device.
type Device interface {
	Do(ctx context.Context, a gate.Action) error
	Area() gate.Area
}

// Step kinds.
const (
	StepClick = "click" // activate: the element's AT-SPI action, else a pointer click at its centre
	StepType  = "type"  // replace the text of an editable element
	StepKey   = "key"   // focus the element (when given), then press keys ("Return", "ctrl+a")
	// Pointer steps: XTest at the element's centre (the working area's
	// centre when a scroll names no element).
	StepDoubleClick = "double_click"
	StepRightClick  = "right_click"
	StepScroll      = "scroll" // Text: up, down (default), left or right; Amount wheel clicks (default 5)
	StepDrag        = "drag"   // from Target to the element To
)

// A scroll step's wheel clicks when it names none, and the most it may ask.
const (
	DefaultScrollAmount = 5
	MaxScrollAmount     = 20
)

// Step is one semantic step on an element of a map.
type Step struct {
	Kind   string // StepClick, StepType, StepKey, StepDoubleClick, StepRightClick, StepScroll, StepDrag
	Target string // element id; optional for StepKey and StepScroll
	Text   string // the text (StepType), keys (StepKey) or direction (StepScroll)
	To     string // StepDrag: the element dropped on
	Amount int    // StepScroll: wheel clicks (default DefaultScrollAmount)
	// Pointer uses XTest even when the element offers an AT-SPI way.
	Pointer bool
}

func (s Step) String() string {
	switch s.Kind {
	case StepType:
		return fmt.Sprintf("type %q into %s", s.Text, s.Target)
	case StepKey:
		if s.Target == "" {
			return "press " + s.Text
		}
		return fmt.Sprintf("press %s in %s", s.Text, s.Target)
	case StepScroll:
		where := s.Target
		if where == "" {
			where = "the screen"
		}
		return fmt.Sprintf("scroll %s %d in %s", firstOr(s.Text, "down"), s.amount(), where)
	case StepDrag:
		return fmt.Sprintf("drag %s to %s", s.Target, s.To)
	}
	return s.Kind + " " + s.Target
}

// Via values of a Result: how a step was carried out.
const (
	ViaAction       = "action"        // AT-SPI Action interface ("action:Click")
	ViaEditableText = "editable_text" // AT-SPI EditableText
	ViaPointer      = "pointer"       // XTest
)

// Errors of Execute; the returned errors wrap them.
var (
	ErrNoElement = errors.New("element not in the map")
	ErrNoEffect  = errors.New("step had no visible effect")
	ErrNoInput   = errors.New("step needs the pointer but the element map has no input device: set Options.Input")
)

// Result says how a step went.
type Result struct {
	Step     Step
	Element  Element // the element acted on, as in the map of the last attempt
	Via      string  // ViaAction+":"+name, ViaEditableText or ViaPointer
	Attempts int     // 1, or 2 after a retry with a fresh map
	Before   *Map    // the map the step was planned on
	After    *Map    // the map extracted after the last attempt
	Diff     Diff    // from the last attempt's map to After
}

// Execute carries out s on map m and verifies its effect by extracting a
// new map and diffing: a click must change something; typing must leave
// the text in the element (or change something). Without an effect (or
// when the element is gone) it retries once on the fresh map, then fails
// with an error wrapping ErrNoEffect or ErrNoElement. The Result is
// returned in both cases; its After map is the newest.
func (x *Extractor) Execute(ctx context.Context, m *Map, s Step) (Result, error) {
	res := Result{Step: s, Before: m}
	if err := s.check(); err != nil {
		return res, err
	}
	cur := m
	var lastErr error
	for attempt := 1; attempt <= 2; attempt++ {
		res.Attempts = attempt
		var el *Element
		if s.Target != "" {
			e, ok := cur.Get(s.Target)
			if !ok {
				lastErr = fmt.Errorf("%s: %w (iteration %d)", s, ErrNoElement, cur.Iteration)
				if attempt == 1 {
					fresh, err := x.Extract(ctx)
					if err != nil {
						return res, err
					}
					res.After, cur = fresh, fresh
				}
				continue
			}
			el = e
			res.Element = *e
		}
		via, actErr := x.act(ctx, cur, el, s)
		res.Via = via
		if actErr != nil && (ctx.Err() != nil || refused(actErr)) {
			return res, actErr // a refusal is final: no second attempt
		}
		after, err := x.Extract(ctx)
		if err != nil {
			return res, fmt.Errorf("verify %s: %w", s, err)
		}
		res.After = after
		res.Diff = Compare(cur, after)
		// An effect counts even when the call reported an error (an
		// application that quits on the click may not answer).
		if effective(s, after, res.Diff) {
			return res, nil
		}
		if actErr != nil {
			lastErr = fmt.Errorf("%s: %w (%w)", s, actErr, ErrNoEffect)
		} else {
			lastErr = fmt.Errorf("%s via %s: %w", s, via, ErrNoEffect)
		}
		x.log.Debug("step had no effect", "step", s.String(), "via", via, "attempt", attempt, "err", lastErr)
		cur = after
	}
	return res, lastErr
}

func effective(s Step, after *Map, d Diff) bool {
	if s.Kind == StepType {
		if e, ok := after.Get(s.Target); ok && s.Text != "" && strings.Contains(e.Value, s.Text) {
			return true
		}
	}
	return !d.Empty()
}

// act performs one attempt of s on el and says how.
func (x *Extractor) act(ctx context.Context, m *Map, el *Element, s Step) (string, error) {
	tree := x.opts.Tree
	switch s.Kind {
	case StepClick:
		if !s.Pointer && tree != nil && el.Source&FromTree != 0 && len(el.Actions) > 0 {
			i := pickAction(el.Actions)
			err := x.effect(ctx, el, "click", func(ctx context.Context) error { return tree.DoAction(ctx, el.Ref, i) })
			if refused(err) {
				return ViaAction + ":" + el.Actions[i], err
			}
			if err == nil {
				return ViaAction + ":" + el.Actions[i], nil
			}
			x.log.Debug("action failed, clicking instead", "element", el.ID, "err", err)
		}
		return ViaPointer, x.pointer(ctx, gate.Action{Kind: gate.KindClick}, el)
	case StepType:
		if !s.Pointer && tree != nil && el.HasEditableText() && el.Editable {
			err := x.effect(ctx, el, "type", func(ctx context.Context) error { return tree.SetText(ctx, el.Ref, s.Text) })
			if refused(err) {
				return ViaEditableText, err
			}
			if err == nil {
				return ViaEditableText, nil
			}
			x.log.Debug("editable text failed, typing instead", "element", el.ID, "err", err)
		}
		if err := x.pointer(ctx, gate.Action{Kind: gate.KindClick}, el); err != nil {
			return ViaPointer, err
		}
		if el.Editable {
			if err := x.key(ctx, "ctrl+a"); err != nil {
				return ViaPointer, err
			}
		}
		return ViaPointer, x.do(ctx, gate.Action{Kind: gate.KindType, Text: s.Text})
	case StepKey:
		if el != nil {
			focused := false
			if !s.Pointer && tree != nil && el.Source&FromTree != 0 {
				err := x.effect(ctx, el, "focus", func(ctx context.Context) error { return tree.GrabFocus(ctx, el.Ref) })
				if refused(err) {
					return ViaPointer, err
				}
				focused = err == nil
			}
			if !focused {
				if err := x.pointer(ctx, gate.Action{Kind: gate.KindClick}, el); err != nil {
					return ViaPointer, err
				}
			}
		}
		return ViaPointer, x.key(ctx, s.Text)
	case StepDoubleClick:
		return ViaPointer, x.pointer(ctx, gate.Action{Kind: gate.KindDoubleClick}, el)
	case StepRightClick:
		return ViaPointer, x.pointer(ctx, gate.Action{Kind: gate.KindRightClick}, el)
	case StepScroll:
		a := gate.Action{Kind: gate.KindScroll}
		n := s.amount()
		switch firstOr(strings.ToLower(s.Text), "down") {
		case "up":
			a.DY = -n
		case "left":
			a.DX = -n
		case "right":
			a.DX = n
		default:
			a.DY = n
		}
		if el == nil {
			a.X, a.Y = gate.NormMax/2, gate.NormMax/2
			return ViaPointer, x.do(ctx, a)
		}
		return ViaPointer, x.pointer(ctx, a, el)
	case StepDrag:
		to, ok := m.Get(s.To)
		if !ok {
			return ViaPointer, fmt.Errorf("drag %s: %w: %s", s.Target, ErrNoElement, s.To)
		}
		if x.opts.Input == nil {
			return ViaPointer, ErrNoInput
		}
		c := to.Center()
		area := x.opts.Input.Area()
		a := gate.Action{Kind: gate.KindDrag}
		a.X2, a.Y2 = area.ToNorm(c.X, c.Y)
		return ViaPointer, x.pointer(ctx, a, el)
	}
	return "", fmt.Errorf("step kind %q unknown", s.Kind)
}

// check reports whether s has what its kind needs.
func (s Step) check() error {
	switch s.Kind {
	case StepClick, StepType, StepDoubleClick, StepRightClick:
		if s.Target == "" {
			return fmt.Errorf("%s: no target element: give an element id", s.Kind)
		}
	case StepKey:
		if s.Text == "" {
			return fmt.Errorf("key: no keys: give keys like \"Return\" or \"ctrl+a\"")
		}
	case StepScroll:
		switch firstOr(strings.ToLower(s.Text), "down") {
		case "up", "down", "left", "right":
		default:
			return fmt.Errorf("scroll: direction %q: use up, down, left or right", s.Text)
		}
		if s.Amount < 0 || s.Amount > MaxScrollAmount {
			return fmt.Errorf("scroll: amount %d: use 1 to %d wheel clicks", s.Amount, MaxScrollAmount)
		}
	case StepDrag:
		if s.Target == "" || s.To == "" {
			return fmt.Errorf("drag: give the element to drag (target) and the one to drop it on (to)")
		}
	default:
		return fmt.Errorf("step kind %q: use %s", s.Kind, strings.Join(StepKinds, ", "))
	}
	return nil
}

// StepKinds lists the step kinds Execute knows.
var StepKinds = []string{StepClick, StepType, StepKey, StepDoubleClick, StepRightClick, StepScroll, StepDrag}

func (s Step) amount() int {
	if s.Amount > 0 {
		return s.Amount
	}
	return DefaultScrollAmount
}

func firstOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// pickAction prefers the action that activates: click, press, activate,
// toggle, jump, open; else the first.
func pickAction(names []string) int {
	for _, want := range []string{"click", "press", "activate", "toggle", "jump", "open"} {
		for i, n := range names {
			if strings.EqualFold(n, want) {
				return i
			}
		}
	}
	return 0
}

func (x *Extractor) pointer(ctx context.Context, a gate.Action, el *Element) error {
	if x.opts.Input == nil {
		return ErrNoInput
	}
	if el.Box.Empty() {
		return fmt.Errorf("click %s: it has no bounds on screen: use another element", el.ID)
	}
	c := el.Center()
	area := x.opts.Input.Area()
	if !c.In(image.Rect(area.X, area.Y, area.X+area.W, area.Y+area.H)) {
		return fmt.Errorf("%s at %s (%d,%d): outside the working area %s", a.Kind, el.ID, c.X, c.Y, area)
	}
	a.X, a.Y = area.ToNorm(c.X, c.Y)
	if err := x.opts.Input.Do(ctx, a); err != nil {
		return fmt.Errorf("%s at %s (%d,%d): %w", a.Kind, el.ID, c.X, c.Y, err)
	}
	return nil
}

func (x *Extractor) key(ctx context.Context, keys string) error {
	return x.do(ctx, gate.Action{Kind: gate.KindKey, Keys: keys})
}

func (x *Extractor) do(ctx context.Context, a gate.Action) error {
	if x.opts.Input == nil {
		return ErrNoInput
	}
	if err := x.opts.Input.Do(ctx, a); err != nil {
		return fmt.Errorf("%s: %w", a.Kind, err)
	}
	return nil
}

// Do carries out s on map m once, without verifying its effect (Execute
// verifies and retries), and says how (a Via value). It fails wrapping
// ErrNoElement when s.Target is not in m.
func (x *Extractor) Do(ctx context.Context, m *Map, s Step) (string, error) {
	var el *Element
	if err := s.check(); err != nil {
		return "", err
	}
	if s.Target != "" {
		e, ok := m.Get(s.Target)
		if !ok {
			return "", fmt.Errorf("%s: %w (iteration %d)", s, ErrNoElement, m.Iteration)
		}
		el = e
	}
	return x.act(ctx, m, el, s)
}

// effect runs an accessibility effect on el (an action, text set into it,
// the focus) through Options.Effect, the gate, when there is one.
func (x *Extractor) effect(ctx context.Context, el *Element, kind string, fn func(context.Context) error) error {
	if x.opts.Effect == nil {
		return fn(ctx)
	}
	return x.opts.Effect(ctx, el, kind, fn)
}

// refused reports whether err is the gate's refusal, which no fallback may
// work around (a pointer click instead of a refused action).
func refused(err error) bool {
	_, ok := gate.IsRefused(err)
	return ok
}
