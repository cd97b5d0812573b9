package main

import (
	"context"
	"fmt"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/privacy"
	"github.com/acu-dev/acu/internal/wayland"
	"github.com/acu-dev/acu/internal/wayland/mutterframes"
	"github.com/acu-dev/acu/internal/wayland/snapshot"
)

// screenshotWayland is `acu screenshot` on a Wayland display (a socket
// path or wayland-N): window targets take their rectangles from sway's
// IPC (SWAYSOCK), and ACU_EXCLUDE_WINDOWS blacks windows out as on X11.
func screenshotWayland(ctx context.Context, e *env, dpy string, t capture.Target, exclude []string) (*frame.Frame, error) {
	path, err := wayland.SocketPath(dpy, e.getenv("XDG_RUNTIME_DIR"))
	if err != nil {
		return nil, err
	}
	if is, _, _, err := mutterframes.Probe(ctx, path); err == nil && is {
		// GNOME's mutter: a screen cast of its monitor (screen and crop
		// targets; no windows, and no capture while exclusions are set).
		g := mutterframes.New(mutterframes.Options{Bus: func() string { return e.getenv("DBUS_SESSION_BUS_ADDRESS") }, Exclude: exclude})
		defer g.Close()
		return g.Capture(ctx, path, t)
	}
	var st snapshot.Target
	switch t.Kind {
	case capture.Screen:
	case capture.Window:
		st.Window = t.Query
	case capture.Crop:
		st.Crop = t.Crop
	default:
		return nil, fmt.Errorf("--target %s: a Wayland display takes screen, window:<title> or crop:x1,y1,x2,y2", t)
	}
	return snapshot.Take(ctx, snapshot.Options{Socket: path, Display: dpy, IPC: e.getenv("SWAYSOCK"), Exclude: privacy.New(exclude)}, st)
}
