package capture

import (
	"context"
	"fmt"
	"image"
	"strings"

	"github.com/acu-dev/acu/internal/display"
)

// resolveLocked resolves t on the live connection (s.mu held).
func (s *source) resolveLocked(ctx context.Context, t Target) (Resolved, error) {
	if err := s.ensure(ctx); err != nil {
		return Resolved{}, err
	}
	c := s.conn
	res := Resolved{Target: t, Display: s.name, Label: t.String(),
		Rect: image.Rect(0, 0, c.Screen.Width, c.Screen.Height)}
	switch t.Kind {
	case Screen, PTY:
		return res, nil
	case Crop:
		res.Rect = CropRect(t.Crop, c.Screen.Width, c.Screen.Height)
		return res, nil
	case Window:
	default:
		return Resolved{}, fmt.Errorf("target kind %d: unknown", t.Kind)
	}
	if id, ok := s.ids[t.Query]; ok {
		w, ok, err := c.Window(ctx, id)
		if err != nil {
			return Resolved{}, fmt.Errorf("capture %s on %s: %w", t, s.name, err)
		}
		if ok && w.Mapped && (t.ID != 0 || strings.Contains(strings.ToLower(w.Title), strings.ToLower(t.Query)) ||
			strings.EqualFold(w.Class, t.Query) || strings.EqualFold(w.Instance, t.Query)) {
			return s.windowResolved(res, w), nil
		}
		delete(s.ids, t.Query)
	}
	w, err := findWindow(ctx, c, s.name, t)
	if err != nil {
		return Resolved{}, err
	}
	s.ids[t.Query] = w.ID
	return s.windowResolved(res, w), nil
}

// findWindow looks up the window a Window target names among the
// display's windows; one matching none or several is a *TargetError.
func findWindow(ctx context.Context, c *display.Conn, dpy string, t Target) (display.Window, error) {
	ws, err := c.Windows(ctx)
	if err != nil {
		return display.Window{}, fmt.Errorf("capture %s on %s: %w", t, dpy, err)
	}
	w, cands, ok := match(t, ws)
	if !ok && t.ID != 0 {
		// An id that is not a top-level client (a child window) is fine.
		if cw, found, err := c.Window(ctx, t.ID); err == nil && found && cw.Mapped {
			w, ok = cw, true
		}
	}
	if !ok {
		e := &TargetError{Display: dpy, Target: t.String(), Ambiguous: len(cands) > 1, Candidates: cands}
		if !e.Ambiguous {
			e.Candidates = nil
			for _, cw := range ws {
				if cw.Mapped {
					e.Candidates = append(e.Candidates, cw)
				}
			}
		}
		return display.Window{}, e
	}
	return w, nil
}

func (s *source) windowResolved(res Resolved, w display.Window) Resolved {
	res.Window = w
	res.Rect = w.Rect()
	res.Label = "window:" + w.IDString()
	return res
}
