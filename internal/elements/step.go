package elements

import (
	"context"
	"errors"
	"fmt"
	"image"
	"strings"

	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/frame"
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
	// Recheck re-reads an element's place just before a pointer effect on
	// it, for a map that may be older than the screen (a model thought
	// over it): an accessible object's bounds are read again (one AT-SPI
	// query); OCR text is looked at again when the pixels of its box
	// changed (a new map is read). A moved element is acted on at its new
	// place; one that is gone or hidden fails the step with ErrStale,
	// without acting.
	Recheck bool
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
	// ErrStale: the element moved off or vanished since the map was read
	// (Step.Recheck); nothing was done.
	ErrStale = errors.New("stale: the element is no longer where the map shows it")
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
		if actErr != nil && (ctx.Err() != nil || refused(actErr) || errors.Is(actErr, ErrStale)) {
			// A refusal is final: no second attempt. A stale element was
			// not acted on: whatever changed on screen is not its effect.
			return res, actErr
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

// act performs one attempt of s on el and says how; with s.Recheck, the
// places it points at are read again first (relocate), and a move is told
// in the Via.
func (x *Extractor) act(ctx context.Context, m *Map, el *Element, s Step) (string, error) {
	var moved []string
	locate := func(e *Element) (*Element, error) {
		if !s.Recheck || e == nil {
			return e, nil
		}
		cur, note, err := x.relocate(ctx, m, e)
		if note != "" {
			moved = append(moved, note)
		}
		return cur, err
	}
	via, err := x.act1(ctx, m, el, s, locate)
	if len(moved) > 0 {
		via += " (" + strings.Join(moved, "; ") + ")"
	}
	return via, err
}

// act1 is one attempt of act; locate gives an element's place at the
// moment of a pointer effect.
func (x *Extractor) act1(ctx context.Context, m *Map, el *Element, s Step, locate func(*Element) (*Element, error)) (string, error) {
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
		return ViaPointer, x.pointer(ctx, gate.Action{Kind: gate.KindClick}, el, locate)
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
		if err := x.pointer(ctx, gate.Action{Kind: gate.KindClick}, el, locate); err != nil {
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
				if err := x.pointer(ctx, gate.Action{Kind: gate.KindClick}, el, locate); err != nil {
					return ViaPointer, err
				}
			}
		}
		return ViaPointer, x.key(ctx, s.Text)
	case StepDoubleClick:
		return ViaPointer, x.pointer(ctx, gate.Action{Kind: gate.KindDoubleClick}, el, locate)
	case StepRightClick:
		return ViaPointer, x.pointer(ctx, gate.Action{Kind: gate.KindRightClick}, el, locate)
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
		return ViaPointer, x.pointer(ctx, a, el, locate)
	case StepDrag:
		to, ok := m.Get(s.To)
		if !ok {
			return ViaPointer, fmt.Errorf("drag %s: %w: %s", s.Target, ErrNoElement, s.To)
		}
		if x.opts.Input == nil {
			return ViaPointer, ErrNoInput
		}
		to, err := locate(to)
		if err != nil {
			return ViaPointer, err
		}
		c := to.Center()
		area := x.opts.Input.Area()
		a := gate.Action{Kind: gate.KindDrag}
		a.X2, a.Y2 = area.ToNorm(c.X, c.Y)
		return ViaPointer, x.pointer(ctx, a, el, locate)
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

// pointer carries out a at el's centre, where locate says el is now.
func (x *Extractor) pointer(ctx context.Context, a gate.Action, el *Element, locate func(*Element) (*Element, error)) error {
	if x.opts.Input == nil {
		return ErrNoInput
	}
	el, err := locate(el)
	if err != nil {
		return err
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

// Relocate says where el of map m is now, just before a pointer effect on
// it that does not go through Do or Execute (a right click, a drag, a
// scroll at an element): its current element, a note when it moved ("" when
// it did not), or an error wrapping ErrStale when it is gone or no longer
// showing. See relocate.
func (x *Extractor) Relocate(ctx context.Context, m *Map, el *Element) (*Element, string, error) {
	return x.relocate(ctx, m, el)
}

// relocate says where el of map m is now, just before a pointer effect on
// it, for a map that may be older than the screen. An accessible object's
// bounds and states are read again: gone or no longer showing is ErrStale;
// other bounds are its new place. OCR text (no accessible object) is
// looked at again only when the pixels of its box changed since m's frame:
// a new map is read and the element of the same id is its new place, or
// ErrStale when it has none. The note says how it moved ("" when it did
// not).
func (x *Extractor) relocate(ctx context.Context, m *Map, el *Element) (*Element, string, error) {
	if tree := x.opts.Tree; tree != nil && !el.Ref.IsNull() {
		n, err := tree.Read(ctx, el.Ref)
		switch {
		case ctx.Err() != nil:
			return nil, "", ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			// The application does not answer (busy): where its control is
			// cannot be told; act at the map's place, as the input queues.
			return el, "", nil
		case err != nil:
			return nil, "", fmt.Errorf("%s: %w: it is gone from the screen since the map was read (%v): look at the current map", el.ID, ErrStale, err)
		case !n.States.Has(atspi.StateShowing) || n.Bounds.Empty():
			return nil, "", fmt.Errorf("%s: %w: it is no longer showing since the map was read: look at the current map", el.ID, ErrStale)
		}
		b := n.Bounds
		if x.opts.Windows != nil {
			// Extents relative to the window, as the map's were before
			// place moved them: move them by where the window is now.
			wins, err := x.opts.Windows(ctx)
			if err != nil {
				return nil, "", fmt.Errorf("look at %s again before acting: %w", el.ID, err)
			}
			off, ok := windowOrigin(wins, el.Window)
			if !ok {
				return el, "", nil // no one window of its name: act at the map's place
			}
			b = b.Add(off)
		}
		if b == el.Box {
			return el, "", nil
		}
		e := *el
		e.Box = b
		return &e, moveNote(el, &e), nil
	}
	if x.opts.Capture == nil || m == nil || m.Frame == nil || !el.Ref.IsNull() {
		return el, "", nil
	}
	now, err := x.opts.Capture.Capture(ctx, x.opts.Display, capture.Target{Kind: capture.Screen})
	if err != nil {
		return nil, "", fmt.Errorf("look at %s again before acting: %w", el.ID, err)
	}
	same := now == m.Frame || now.Hash == m.Frame.Hash || now.Bounds() == m.Frame.Bounds() && sameBox(now, m.Frame, el.Box)
	now.Release()
	if same {
		return el, "", nil
	}
	fresh, err := x.Extract(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("look at %s again before acting (its pixels changed): %w", el.ID, err)
	}
	e, ok := fresh.Get(el.ID)
	if !ok || e.Box.Empty() {
		return nil, "", fmt.Errorf("%s: %w: %q is gone from the screen since the map was read: look at the current map", el.ID, ErrStale, el.Text)
	}
	if e.Box == el.Box {
		return e, "", nil
	}
	return e, moveNote(el, e), nil
}

// sameBox reports whether a and b hold the same pixels in r.
func sameBox(a, b *frame.Frame, r image.Rectangle) bool {
	sa, sb := a.Sub(r, ""), b.Sub(r, "")
	defer sa.Release()
	defer sb.Release()
	return sa.Hash == sb.Hash
}

func moveNote(was, now *Element) string {
	a, b := was.Center(), now.Center()
	return fmt.Sprintf("%s moved from (%d,%d) to (%d,%d) since the map was read: acted at its new place", was.ID, a.X, a.Y, b.X, b.Y)
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
