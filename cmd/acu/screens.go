package main

import (
	"context"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/smartwait"
	wlframes "github.com/acu-dev/acu/internal/wayland/frames"
	"github.com/acu-dev/acu/internal/wayland/mutterframes"
	"github.com/acu-dev/acu/internal/wayland/sway"
)

// screens is the capture hub of the engines that read frames (smart
// waits, the live view, recordings, the action service's screenshots and
// so the computer-use dialects, the agent loop): a display named by a
// Wayland socket path or wayland-N goes to the Wayland hub, any other to
// the X11 one (docs/wayland.md).
//
// A Wayland display whose compositor is GNOME's mutter (asked once per
// display: mutterframes.Hub.Is) goes to the GNOME hub, which reads a
// screen cast of mutter's monitor.
func (d *daemon) screens() screens { return screens{x: d.hub, wl: d.wayland, gn: d.gnome} }

type screens struct {
	x  *capture.Hub
	wl *wlframes.Hub
	gn *mutterframes.Hub
}

// wayland is the hub of Wayland display dpy: GNOME's or wlroots'.
func (w screens) wayland(ctx context.Context, dpy string) smartwait.Capturer {
	if w.gn != nil && w.gn.Is(ctx, dpy) {
		return w.gn
	}
	return w.wl
}

func (w screens) Resolve(ctx context.Context, dpy string, t capture.Target) (capture.Resolved, error) {
	if sway.IsName(dpy) {
		return w.wayland(ctx, dpy).Resolve(ctx, dpy, t)
	}
	return w.x.Resolve(ctx, dpy, t)
}

func (w screens) Capture(ctx context.Context, dpy string, t capture.Target) (*frame.Frame, error) {
	if sway.IsName(dpy) {
		return w.wayland(ctx, dpy).Capture(ctx, dpy, t)
	}
	return w.x.Capture(ctx, dpy, t)
}

func (w screens) Watch(ctx context.Context, dpy string, t capture.Target) (<-chan struct{}, error) {
	if sway.IsName(dpy) {
		return w.wayland(ctx, dpy).Watch(ctx, dpy, t)
	}
	return w.x.Watch(ctx, dpy, t)
}

// ScreenSize is the display's size in pixels: the X server's root window,
// or the Wayland compositor's output as its frames have it.
func (w screens) ScreenSize(ctx context.Context, dpy string) (int, int, error) {
	if sway.IsName(dpy) {
		if w.gn != nil && w.gn.Is(ctx, dpy) {
			return w.gn.ScreenSize(ctx, dpy)
		}
		return w.wl.ScreenSize(ctx, dpy)
	}
	return w.x.ScreenSize(ctx, dpy)
}
