package capture

import (
	"context"
	"fmt"
	"image"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/privacy"
)

// Once captures target t on display dpy a single time, for a process that
// takes one screenshot and exits (acu screenshot). The frame is the one a
// Hub's Capture would return for the same screen (same pixels, privacy
// mask, Target label and Hash), read more cheaply for a one-off: no
// XDamage, sync window, event reader or MIT-SHM segment is set up, only
// the target's rectangle is read, and its pixels come off the socket
// straight into the frame's buffer (display.ImageConn). A window target,
// or privacy exclusions in opts, also open a display.Conn to list windows.
// Of opts, Once uses Exclude, AllowRemote, Resample and Logger.
func Once(ctx context.Context, dpy string, t Target, opts Options) (_ *frame.Frame, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = display.PanicError("capture on "+dpy, r)
		}
	}()
	dpy = strings.TrimSpace(dpy)
	if dpy == "" {
		return nil, fmt.Errorf("%w: no display given: pass --display or set DISPLAY; %s", display.ErrNoDisplay, display.HowToStart)
	}
	ic, err := display.OpenImage(ctx, dpy, display.Options{AllowRemote: opts.AllowRemote})
	if err != nil {
		return nil, err
	}
	defer ic.Close()
	if err := checkFormat(dpy, ic.Screen); err != nil {
		return nil, err
	}
	exclude := privacy.New(opts.Exclude)
	var c *display.Conn
	if t.Kind == Window || !exclude.Empty() {
		c, err = display.Open(ctx, dpy, display.Options{Logger: opts.Logger, AllowRemote: opts.AllowRemote})
		if err != nil {
			return nil, err
		}
		defer c.Close()
	}
	screen := image.Rect(0, 0, ic.Screen.Width, ic.Screen.Height)
	r, label := screen, "screen"
	switch t.Kind {
	case Screen, PTY:
	case Crop:
		r, label = CropRect(t.Crop, screen.Dx(), screen.Dy()), t.String()
	case Window:
		w, err := findWindow(ctx, c, dpy, t)
		if err != nil {
			return nil, err
		}
		r, label = w.Rect(), "window:"+w.IDString()
	default:
		return nil, fmt.Errorf("target kind %d: unknown", t.Kind)
	}
	r = r.Intersect(screen)
	at := time.Now()
	if r.Empty() {
		// What a Hub's Sub view of an off-screen rectangle is.
		f := frame.New(nil, 0, 0, 0, dpy, label, at)
		f.Resample = opts.Resample
		return f, nil
	}
	pix, err := ic.Image(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("capture %s: %w", dpy, err)
	}
	if !exclude.Empty() {
		if err := blackout(ctx, c, exclude, pix, r); err != nil {
			// Never return a frame whose private windows may show.
			return nil, fmt.Errorf("capture %s: privacy mask: %w", dpy, err)
		}
	}
	f := frame.New(pix, r.Dx(), r.Dy(), r.Dx()*4, dpy, label, at)
	f.Resample = opts.Resample
	return f, nil
}
