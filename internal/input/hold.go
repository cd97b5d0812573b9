package input

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/internal/display"
)

// HoldAtom is the root-window property that says a human has taken a
// display over (the live view's take-over). It lives on the X server, so
// every acu process driving the display (the daemon's tasks and action
// API, a separate `acu agent`) sees it without talking to the daemon.
const HoldAtom = "_ACU_TAKEOVER"

// Hold is the content of HoldAtom: who holds the display, since when and
// until when. Until bounds a hold whose owner died: the owner renews it
// while the human drives, and a hold past Until counts for nothing.
type Hold struct {
	By    string    `json:"by"`
	RunID string    `json:"run_id,omitempty"`
	Since time.Time `json:"since"`
	Until time.Time `json:"until"`
}

// SetHold writes h to c's root window.
func SetHold(ctx context.Context, c *display.Conn, h Hold) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	a, err := c.Atom(HoldAtom)
	if err != nil {
		return fmt.Errorf("set the take-over hold on %s: %w", c.Name, err)
	}
	b, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("set the take-over hold on %s: %w", c.Name, err)
	}
	if err := xproto.ChangePropertyChecked(c.X, xproto.PropModeReplace, c.Screen.Root, a, xproto.AtomString, 8,
		uint32(len(b)), b).Check(); err != nil {
		return fmt.Errorf("set the take-over hold on %s: %w", c.Name, err)
	}
	return nil
}

// ClearHold removes the hold from c's root window.
func ClearHold(ctx context.Context, c *display.Conn) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	a, err := c.Atom(HoldAtom)
	if err != nil {
		return fmt.Errorf("clear the take-over hold on %s: %w", c.Name, err)
	}
	if err := xproto.DeletePropertyChecked(c.X, c.Screen.Root, a).Check(); err != nil {
		return fmt.Errorf("clear the take-over hold on %s: %w", c.Name, err)
	}
	return nil
}

// ReadHold returns the hold on c's display and whether it is in force at
// now (present, well-formed and not past Until).
func ReadHold(ctx context.Context, c *display.Conn, now time.Time) (Hold, bool, error) {
	if err := ctx.Err(); err != nil {
		return Hold{}, false, err
	}
	a, err := c.Atom(HoldAtom)
	if err != nil {
		return Hold{}, false, fmt.Errorf("read the take-over hold on %s: %w", c.Name, err)
	}
	r, err := xproto.GetProperty(c.X, false, c.Screen.Root, a, xproto.AtomString, 0, 1024).Reply()
	if err != nil {
		return Hold{}, false, fmt.Errorf("read the take-over hold on %s: %w", c.Name, err)
	}
	if r == nil || len(r.Value) == 0 {
		return Hold{}, false, nil
	}
	var h Hold
	if err := json.Unmarshal(r.Value, &h); err != nil {
		return Hold{}, false, nil // not ours to judge: a malformed hold holds nothing
	}
	return h, now.Before(h.Until), nil
}

// HoldWatch reports a display's take-over hold; it is what the agent loop
// checks before each turn. Safe for concurrent use.
type HoldWatch struct{ c *display.Conn }

// NewHoldWatch watches the hold of c's display; c stays the caller's.
func NewHoldWatch(c *display.Conn) *HoldWatch { return &HoldWatch{c: c} }

// Held reports whether a human holds the display, and who.
func (w *HoldWatch) Held(ctx context.Context) (bool, string, error) {
	h, ok, err := ReadHold(ctx, w.c, time.Now())
	if err != nil || !ok {
		return false, "", err
	}
	return true, holdDetail(h), nil
}

// HoldDetail says who holds the display and since when.
func HoldDetail(h Hold) string { return holdDetail(h) }

func holdDetail(h Hold) string {
	return fmt.Sprintf("taken over by %s in the live view since %s", h.By, h.Since.UTC().Format(time.TimeOnly))
}
