package gate

import (
	"context"
	"image"
	"time"
)

// device is what Hands drive on one display: the XTest device
// (*input.Device) on X11, the virtual pointer and keyboard (wlDevice) on
// Wayland. Points are screen pixels; Do takes the Area's 0..1000
// coordinates.
type device interface {
	MoveTo(ctx context.Context, p image.Point) error
	ClickAt(ctx context.Context, p *image.Point, button, count int) error
	ButtonDown(ctx context.Context, p *image.Point, button int) error
	ButtonUp(ctx context.Context, p *image.Point, button int) error
	DragPath(ctx context.Context, button int, path []image.Point, hold time.Duration) error
	ScrollAt(ctx context.Context, p *image.Point, dx, dy int) error
	Type(ctx context.Context, text string) error
	KeyHold(ctx context.Context, keys string, hold time.Duration, repeat int) error
	ModsDown(ctx context.Context, mods string) error
	ModsUp(ctx context.Context) error
	Do(ctx context.Context, a Action) error
	Area() Area
	Pointer(ctx context.Context) (image.Point, error)
	CheckText(text string) error
	// ButtonsDown is the buttons ButtonDown left pressed, as an X
	// key-button mask (button n is 1<<(7+n)).
	ButtonsDown() uint16
	Close() error
}

// name is dpy, or the default display when dpy is empty.
func (s *Gate) name(dpy string) string {
	if dpy == "" {
		return s.opts.DefaultDisplay
	}
	return dpy
}

// How the display's device carries input, as action results say it
// (api.ActionResult.Via): XTest on X11, the virtual pointer and keyboard
// protocols on Wayland.
const (
	ViaXTest   = "xtest"
	ViaVirtual = "virtual"
)

// Via says how the hands' device carries input: ViaXTest on X11,
// ViaVirtual on Wayland.
func (h *Hands) Via() string {
	if h.c.wl != nil {
		return ViaVirtual
	}
	return ViaXTest
}
