package orchestrator

import (
	"context"
	"fmt"
	"image"
	"strings"

	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/gate"
)

// WindowArranger tiles two top-level windows side by side (left and right
// halves of the screen) for a plan that splits the work across them (the
// seed's split screen). Windows are found by title, class or instance,
// case-insensitively. It places them through the gate (its policy, its
// audit), which a window manager may adjust.
type WindowArranger struct {
	g   *gate.Gate
	c   *display.Conn
	dpy string
}

// NewWindowArranger arranges windows on dpy through g.
func NewWindowArranger(ctx context.Context, g *gate.Gate, dpy string) (*WindowArranger, error) {
	c, err := g.Conn(ctx, dpy)
	if err != nil {
		return nil, err
	}
	return &WindowArranger{g: g, c: c, dpy: dpy}, nil
}

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
	sw, sh := int(a.c.Screen.Width), int(a.c.Screen.Height)
	half := sw / 2
	for i, id := range ids {
		if err := a.g.Place(ctx, a.dpy, id, image.Rect(i*half, 0, i*half+half, sh)); err != nil {
			return fmt.Errorf("split: move window %q on %s: %w", windows[i], a.c.Name, err)
		}
	}
	return nil
}
