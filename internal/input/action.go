package input

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Action kinds accepted by Do.
const (
	KindMove        = "move"
	KindClick       = "click"
	KindRightClick  = "right_click"
	KindDoubleClick = "double_click"
	KindMiddleClick = "middle_click"
	KindDrag        = "drag"
	KindScroll      = "scroll"
	KindType        = "type"
	KindKey         = "key"
)

// Kinds lists the action kinds Do accepts, for prompts and help text.
var Kinds = []string{KindMove, KindClick, KindRightClick, KindDoubleClick, KindMiddleClick, KindDrag, KindScroll, KindType, KindKey}

// Action is one input step as a model or a script writes it. Coordinates
// are normalized 0..1000 within the working area (out-of-range values are
// clamped). Kind is case-insensitive.
type Action struct {
	Kind   string
	X, Y   int    // pointer position; the drag start
	X2, Y2 int    // drag end
	DX, DY int    // scroll: DY > 0 down, DX > 0 right
	Text   string // type
	Keys   string // key: "ctrl+l", "Return"
}

// ErrUnknownKind is wrapped by Do's error for an action kind it does not know.
var ErrUnknownKind = errors.New("unknown action kind")

// Validate reports whether a is complete: a known kind with the fields it
// needs. A drag needs its end point (x2,y2 other than 0,0), a scroll a
// non-zero dy or dx, type a text and key a keys string.
func (a Action) Validate() error {
	switch kind := strings.ToLower(strings.TrimSpace(a.Kind)); kind {
	case KindMove, KindClick, KindRightClick, KindDoubleClick, KindMiddleClick:
		return nil
	case KindDrag:
		if a.X2 == 0 && a.Y2 == 0 {
			return errors.New("drag needs x2,y2, the end point (0..1000 each, not both 0)")
		}
		return nil
	case KindScroll:
		if a.DY == 0 && a.DX == 0 {
			return errors.New("scroll needs dy (positive scrolls down) or dx (positive scrolls right)")
		}
		if abs(a.DX) > MaxScroll || abs(a.DY) > MaxScroll {
			return fmt.Errorf("scroll by dx=%d dy=%d: at most %d wheel clicks each per action", a.DX, a.DY, MaxScroll)
		}
		return nil
	case KindType:
		if a.Text == "" {
			return errors.New("type needs text")
		}
		return nil
	case KindKey:
		if strings.TrimSpace(a.Keys) == "" {
			return errors.New("key needs keys, such as ctrl+l or Return")
		}
		_, err := parseKeys(a.Keys)
		return err
	case "":
		return fmt.Errorf("%w: action has no kind: use one of %s", ErrUnknownKind, strings.Join(Kinds, ", "))
	default:
		return fmt.Errorf("%w %q: use one of %s", ErrUnknownKind, truncate(kind), strings.Join(Kinds, ", "))
	}
}

// Do executes one action. It is how the agent loop runs model output.
func (d *Device) Do(ctx context.Context, a Action) error {
	if err := a.Validate(); err != nil {
		return err
	}
	switch strings.ToLower(strings.TrimSpace(a.Kind)) {
	case KindMove:
		return d.Move(ctx, a.X, a.Y)
	case KindClick:
		return d.Click(ctx, a.X, a.Y)
	case KindRightClick:
		return d.RightClick(ctx, a.X, a.Y)
	case KindDoubleClick:
		return d.DoubleClick(ctx, a.X, a.Y)
	case KindMiddleClick:
		return d.MiddleClick(ctx, a.X, a.Y)
	case KindDrag:
		return d.Drag(ctx, a.X, a.Y, a.X2, a.Y2)
	case KindScroll:
		return d.ScrollXY(ctx, a.X, a.Y, a.DX, a.DY)
	case KindType:
		return d.Type(ctx, a.Text)
	default: // KindKey; Validate rejected everything else
		return d.Key(ctx, a.Keys)
	}
}
