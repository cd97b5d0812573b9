package live

import (
	"context"

	"github.com/acu-dev/acu/internal/api"
)

// Service is the live view's engine for one daemon: frame streams over the
// capture hub and the take-overs. Safe for concurrent use.
type Service struct {
	*Takeovers
	capture Capturer
	dpy     string
}

// Options configure a Service.
type Options struct {
	Capture        Capturer // the capture hub; required
	DefaultDisplay string
	Takeover       TakeoverOptions
}

// New returns a Service; Run keeps its take-overs alive.
func New(o Options) *Service {
	return &Service{Takeovers: NewTakeovers(o.Takeover), capture: o.Capture, dpy: o.DefaultDisplay}
}

// Display is dpy, or the default display when dpy is empty.
func (s *Service) Display(dpy string) string {
	if dpy == "" {
		return s.dpy
	}
	return dpy
}

// Stream streams o.Display's screen to send; see the package's Stream.
func (s *Service) Stream(ctx context.Context, o StreamOptions, send func(Frame) error) error {
	o.Display = s.Display(o.Display)
	return Stream(ctx, s.capture, o, send)
}

// Input sends a human's input; see Takeovers.Input.
func (s *Service) Input(ctx context.Context, dpy string, evs []api.LiveInput) error {
	return s.Takeovers.Input(ctx, s.Display(dpy), evs)
}
