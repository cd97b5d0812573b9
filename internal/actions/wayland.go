package actions

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/wayland/sway"
)

// wlDesktop is what the service holds per Wayland display for element
// maps: the accessibility client (the session's bus: a Wayland display
// announces none of its own) and the extractor, which reads frames from
// Options.Screens and places each accessible window by sway's rectangles.
// Acting on a Wayland display goes through the gate, not here.
type wlDesktop struct {
	name string
	tree *atspi.Client
	ex   *elements.Extractor // nil: exE says why
	exE  error

	mu sync.Mutex // one element map at a time
}

func (d *wlDesktop) close() {
	if d.tree != nil {
		d.tree.Close()
	}
}

// isWayland reports whether dpy names a Wayland display (its socket).
func isWayland(dpy string) bool { return sway.IsName(dpy) }

// waylandDesktop returns the element-map parts of Wayland display dpy,
// opening them on first use.
func (s *Service) waylandDesktop(ctx context.Context, dpy string) (*wlDesktop, error) {
	if !s.wayland {
		return nil, &Error{Code: api.CodeUnavailable, Message: fmt.Sprintf("display %s is a Wayland display and this service has no Wayland capture", dpy)}
	}
	if !filepath.IsAbs(dpy) {
		return nil, invalid("display", "display %q: name a Wayland display by its socket's absolute path (as `acu display start --wayland` prints WAYLAND_DISPLAY)", dpy)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.wl[dpy]; d != nil {
		return d, nil
	}
	d := &wlDesktop{name: dpy}
	eo := elements.Options{Display: dpy, Capture: s.opts.Screens, Exclude: s.opts.Exclude, OCR: s.opts.OCR,
		Windows: elements.SwayWindowsBeside(dpy), Logger: s.log.With("component", "elements")}
	if tree, err := atspi.Connect(ctx, atspi.Options{SessionBus: s.opts.SessionBus, Logger: s.log.With("component", "atspi")}); err != nil {
		s.log.Info("no accessibility bus: element maps hold OCR text only", "display", dpy, "err", err)
		d.exE = fmt.Errorf("no accessibility bus for %s (%v)", dpy, err)
	} else {
		d.tree, eo.Tree = tree, tree
	}
	if ex, err := elements.New(eo); err == nil {
		d.ex = ex
	} else if d.exE == nil {
		d.exE = err
	}
	s.wl[dpy] = d
	return d, nil
}

// extract reads a fresh element map of d.
func (d *wlDesktop) extract(ctx context.Context) (*elements.Map, error) {
	if d.ex == nil {
		return nil, &Error{Code: api.CodeUnavailable, Message: fmt.Sprintf("the element map is not available: %v: start applications with accessibility on, or enable OCR", d.exE)}
	}
	m, err := d.ex.Extract(ctx)
	if err != nil {
		return nil, fmt.Errorf("element map of %s: %w", d.name, err)
	}
	return m, nil
}
