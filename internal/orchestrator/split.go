package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"image"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/gate"
)

// WindowArranger tiles two top-level windows side by side (left and right
// halves of the screen) for a plan that splits the work across them (the
// seed's split screen). Windows are found by title, class or instance
// (a Wayland window's app id), case-insensitively. It places them through
// the gate (its policy, its audit), which a window manager may adjust: on
// X11 by configuring each window, on Wayland by resizing and moving its
// client area (the compositor floats it to do so).
type WindowArranger struct {
	g   *gate.Gate
	dpy string
}

// NewWindowArranger arranges windows on dpy (an X display or a Wayland
// socket) through g; it fails when g cannot reach dpy.
func NewWindowArranger(ctx context.Context, g *gate.Gate, dpy string) (*WindowArranger, error) {
	if _, _, err := g.ScreenSize(ctx, dpy); err != nil {
		return nil, err
	}
	return &WindowArranger{g: g, dpy: dpy}, nil
}

// Arrange puts the window matching windows[0] on the left half and the one
// matching windows[1] on the right half, both raised.
func (a *WindowArranger) Arrange(ctx context.Context, windows [2]string) error {
	list, err := a.g.Windows(ctx, a.dpy)
	if err != nil {
		return fmt.Errorf("list windows on %s: %w", a.dpy, err)
	}
	var ids [2]string
	for i, name := range windows {
		want := strings.ToLower(strings.TrimSpace(name))
		for j := len(list.Windows) - 1; j >= 0 && want != ""; j-- { // topmost first
			w := list.Windows[j]
			if w.Mapped && w.ID != ids[0] && (strings.Contains(strings.ToLower(w.Title), want) ||
				strings.EqualFold(w.Class, want) || strings.EqualFold(w.Instance, want)) {
				ids[i] = w.ID
				break
			}
		}
		if ids[i] == "" {
			return fmt.Errorf("split: no window matching %q on %s", name, a.dpy)
		}
	}
	sw, sh, err := a.g.ScreenSize(ctx, a.dpy)
	if err != nil {
		return err
	}
	half := sw / 2
	var kept error // a window the compositor kept elsewhere: the other is placed all the same
	for i, id := range ids {
		err := a.place(ctx, id, image.Rect(i*half, 0, i*half+half, sh))
		var pe *PlaceError
		switch {
		case errors.As(err, &pe):
			kept = errors.Join(kept, fmt.Errorf("split: window %q on %s: %w", windows[i], a.dpy, err))
		case err != nil:
			return fmt.Errorf("split: move window %q on %s: %w", windows[i], a.dpy, err)
		}
	}
	return kept
}

func (a *WindowArranger) place(ctx context.Context, id string, r image.Rectangle) error {
	if !gate.IsWayland(a.dpy) {
		wid, err := gate.ParseWindowID(id)
		if err != nil {
			return err
		}
		return a.g.Place(ctx, a.dpy, wid, r)
	}
	// Move first: sway's tree has a floating window's new position at
	// once but its new size only once the app has drawn it, and each
	// operation places the window from the tree's rectangle, so a move
	// after a resize could put the old size back. An app still setting
	// itself up when it is placed (just launched) may commit its own
	// first size after ours, which sway then keeps: the place is read
	// back, and asked for again when it does not hold.
	x, y, w, h := r.Min.X, r.Min.Y, r.Dx(), r.Dy()
	for try := 1; ; try++ {
		if _, err := a.g.WindowOp(ctx, id, api.WindowMove, api.WindowOp{Display: a.dpy, X: &x, Y: &y}); err != nil {
			return err
		}
		if _, err := a.g.WindowOp(ctx, id, api.WindowResize, api.WindowOp{Display: a.dpy, W: &w, H: &h}); err != nil {
			return err
		}
		held, got, err := a.holds(ctx, id, r, placeWait)
		if err != nil {
			return err
		}
		if held {
			break
		}
		if try == placeTries {
			return &PlaceError{Got: got, Want: r, Tries: placeTries}
		}
	}
	_, err := a.g.WindowOp(ctx, id, api.WindowFocus, api.WindowOp{Display: a.dpy})
	return err
}

// PlaceError says the compositor kept a window at another place than the
// split asked for: the window is there to work in, at another size.
type PlaceError struct {
	Got, Want image.Rectangle
	Tries     int
}

func (e *PlaceError) Error() string {
	return fmt.Sprintf("the compositor keeps the window at %v, not %v (asked %d times)", e.Got, e.Want, e.Tries)
}

// placeWait is how long a Wayland window's new place is read back before
// it is asked for again, placeTries times at most.
const (
	placeWait  = 3 * time.Second
	placeTries = 3
)

// holds reads window id's place until it is r (its client area: the
// halves exact, the height r's less at most a title bar, which sway keeps
// on the output for a floating window), for at most wait. A list without
// geometry (a compositor without sway's IPC) holds at once.
func (a *WindowArranger) holds(ctx context.Context, id string, r image.Rectangle, wait time.Duration) (bool, image.Rectangle, error) {
	var got image.Rectangle
	for deadline := time.Now().Add(wait); ; {
		l, err := a.g.Windows(ctx, a.dpy)
		if err != nil {
			return false, got, fmt.Errorf("list windows on %s: %w", a.dpy, err)
		}
		for _, w := range l.Windows {
			if w.ID != id {
				continue
			}
			if w.W == 0 && w.H == 0 {
				return true, got, nil
			}
			got = image.Rect(w.X, w.Y, w.X+w.W, w.Y+w.H)
			if got.Min.X == r.Min.X && got.Max.X == r.Max.X && got.In(r) && got.Dy() >= r.Dy()-titleBarMax {
				return true, got, nil
			}
		}
		if time.Now().After(deadline) {
			return false, got, nil
		}
		select {
		case <-ctx.Done():
			return false, got, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// titleBarMax bounds the height a compositor's title bar takes.
const titleBarMax = 40
