package main

import (
	"context"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/frame"
	wlframes "github.com/acu-dev/acu/internal/wayland/frames"
	"github.com/acu-dev/acu/internal/wayland/sway"
)

// screens is the capture hub of the engines that read frames (smart
// waits, the live view, recordings, the action service's screenshots and
// so the computer-use dialects, the agent loop): a display named by a
// Wayland socket path or wayland-N goes to the Wayland hub, any other to
// the X11 one (docs/wayland.md).
func (d *daemon) screens() screens { return screens{x: d.hub, wl: d.wayland} }

type screens struct {
	x  *capture.Hub
	wl *wlframes.Hub
}

func (w screens) Resolve(ctx context.Context, dpy string, t capture.Target) (capture.Resolved, error) {
	if sway.IsName(dpy) {
		return w.wl.Resolve(ctx, dpy, t)
	}
	return w.x.Resolve(ctx, dpy, t)
}

func (w screens) Capture(ctx context.Context, dpy string, t capture.Target) (*frame.Frame, error) {
	if sway.IsName(dpy) {
		return w.wl.Capture(ctx, dpy, t)
	}
	return w.x.Capture(ctx, dpy, t)
}

func (w screens) Watch(ctx context.Context, dpy string, t capture.Target) (<-chan struct{}, error) {
	if sway.IsName(dpy) {
		return w.wl.Watch(ctx, dpy, t)
	}
	return w.x.Watch(ctx, dpy, t)
}

// ScreenSize is the display's size in pixels: the X server's root window,
// or the Wayland compositor's output as its frames have it.
func (w screens) ScreenSize(ctx context.Context, dpy string) (int, int, error) {
	if sway.IsName(dpy) {
		return w.wl.ScreenSize(ctx, dpy)
	}
	return w.x.ScreenSize(ctx, dpy)
}
