package actions

import (
	"context"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/gate"
)

// Screens reads the frames of the displays the X11 hub does not serve
// (Wayland: wlroots' screencopy, GNOME's screen cast): the daemon's
// capture router (cmd/acu/screens.go).
type Screens interface {
	Resolve(ctx context.Context, dpy string, t capture.Target) (capture.Resolved, error)
	Capture(ctx context.Context, dpy string, t capture.Target) (*frame.Frame, error)
}

// frameSource is what screenshots and window positions read frames from.
type frameSource interface {
	Screens
	ScreenSize(ctx context.Context, dpy string) (int, int, error)
}

// frames is the source of dpy's frames: Options.Screens for a Wayland
// display (when set), the X11 hub otherwise.
func (s *Service) frames(dpy string) frameSource {
	if s.opts.Screens != nil && gate.IsWayland(dpy) {
		return waylandFrames{s.opts.Screens, s.opts.Gate}
	}
	return s.opts.Hub
}

type waylandFrames struct {
	Screens
	g *gate.Gate
}

// ScreenSize is the compositor's output size, as the gate knows it.
func (w waylandFrames) ScreenSize(ctx context.Context, dpy string) (int, int, error) {
	return w.g.ScreenSize(ctx, dpy)
}
