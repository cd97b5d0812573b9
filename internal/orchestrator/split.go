package orchestrator

import (
	"context"
	"fmt"
	"strings"

	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/internal/display"
)

// WindowArranger tiles two top-level windows side by side (left and right
// halves of the screen) for a plan that splits the work across them (the
// seed's split screen). Windows are found by title, class or instance,
// case-insensitively. It configures the windows directly, which a window
// manager may adjust.
type WindowArranger struct {
	c *display.Conn
}

// NewWindowArranger arranges windows on c's display; c stays the caller's.
func NewWindowArranger(c *display.Conn) *WindowArranger { return &WindowArranger{c: c} }

// Arrange puts the window matching windows[0] on the left half and the one
// matching windows[1] on the right half, both raised.
func (a *WindowArranger) Arrange(ctx context.Context, windows [2]string) error {
	list, err := a.c.Windows(ctx)
	if err != nil {
		return fmt.Errorf("list windows on %s: %w", a.c.Name, err)
	}
	var ids [2]uint32
	for i, name := range windows {
		want := strings.ToLower(strings.TrimSpace(name))
		for j := len(list) - 1; j >= 0 && want != ""; j-- { // topmost first
			w := list[j]
			if w.Mapped && w.ID != ids[0] && (strings.Contains(strings.ToLower(w.Title), want) ||
				strings.EqualFold(w.Class, want) || strings.EqualFold(w.Instance, want)) {
				ids[i] = w.ID
				break
			}
		}
		if ids[i] == 0 {
			return fmt.Errorf("split: no window matching %q on %s", name, a.c.Name)
		}
	}
	sw, sh := uint32(a.c.Screen.Width), uint32(a.c.Screen.Height)
	half := sw / 2
	for i, id := range ids {
		mask := uint16(xproto.ConfigWindowX | xproto.ConfigWindowY | xproto.ConfigWindowWidth | xproto.ConfigWindowHeight | xproto.ConfigWindowStackMode)
		vals := []uint32{uint32(i) * half, 0, half, sh, xproto.StackModeAbove}
		if err := xproto.ConfigureWindowChecked(a.c.X, xproto.Window(id), mask, vals).Check(); err != nil {
			return fmt.Errorf("split: move window %q on %s: %w", windows[i], a.c.Name, err)
		}
	}
	return a.c.Sync(ctx)
}
