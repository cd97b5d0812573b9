// Package snapshot takes one frame of a Wayland display for a process that
// takes a screenshot and exits (`acu screenshot --display
// $WAYLAND_DISPLAY`), as capture.Once does on X11: the whole screen, one
// window (its rectangle from sway's IPC) or a crop, with the windows of
// the privacy exclusions blacked out before the frame is returned.
//
// It opens its connections for the one frame and closes them. It does not
// keep frames or watch for changes (screencopy.Capturer.Next does).
package snapshot

import (
	"context"
	"fmt"
	"image"
	"strings"

	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/privacy"
	"github.com/acu-dev/acu/internal/wayland/screencopy"
	"github.com/acu-dev/acu/internal/wayland/toplevel"
)

// Options says which display to read and what never to show.
type Options struct {
	Socket  string          // the compositor's socket path
	Display string          // the display's name in frames and errors (Socket when empty)
	IPC     string          // sway's IPC socket (SWAYSOCK), for window rectangles; "" for none
	Exclude *privacy.Filter // windows never shown (ACU_EXCLUDE_WINDOWS)
}

// Target is what to capture: Window (a title, or part of one, or an app
// id) when set, else Crop (x1,y1,x2,y2 in 0..1000) when set, else the
// screen.
type Target struct {
	Window string
	Crop   [4]int
}

// Take captures t once.
func Take(ctx context.Context, o Options, t Target) (*frame.Frame, error) {
	if o.Display == "" {
		o.Display = o.Socket
	}
	cap, err := screencopy.Open(ctx, o.Socket, o.Display, "")
	if err != nil {
		return nil, err
	}
	defer cap.Close()
	w, h := cap.Size()
	var ws []toplevel.Window
	if t.Window != "" || !o.Exclude.Empty() {
		m, err := toplevel.Open(ctx, o.Socket, o.Display, o.IPC)
		if err != nil {
			return nil, err
		}
		ws, err = m.Windows(ctx)
		m.Close()
		if err != nil {
			return nil, err
		}
	}
	region, label := image.Rect(0, 0, w, h), "screen"
	switch {
	case t.Window != "":
		win, err := find(o.Display, t.Window, ws)
		if err != nil {
			return nil, err
		}
		if win.Rect.Empty() {
			return nil, fmt.Errorf("capture window %q on %s: the compositor gives no window geometry: window targets need sway's IPC (set SWAYSOCK)", win.Title, o.Display)
		}
		region, label = win.Rect.Intersect(region), "window:"+win.Title
	case t.Crop != [4]int{}:
		region = frame.CropRect(t.Crop, w, h)
		label = fmt.Sprintf("crop:%d,%d,%d,%d", t.Crop[0], t.Crop[1], t.Crop[2], t.Crop[3])
	}
	var f *frame.Frame
	if region == image.Rect(0, 0, w, h) {
		f, err = cap.Grab(ctx)
		if f != nil {
			f.Target = label
		}
	} else {
		f, err = cap.GrabRegion(ctx, region, label)
	}
	if err != nil {
		return nil, err
	}
	var hide []image.Rectangle
	for _, win := range ws {
		if !o.Exclude.Excludes(win.Title, win.AppID) {
			continue
		}
		if win.Rect.Empty() {
			f.Release()
			return nil, fmt.Errorf("capture on %s: window %q is excluded (ACU_EXCLUDE_WINDOWS) but the compositor gives no geometry to black it out: set SWAYSOCK so sway's IPC can", o.Display, win.Title)
		}
		hide = append(hide, win.Rect.Sub(region.Min))
	}
	frame.BlackOut(f, hide...)
	return f, nil
}

// find picks the one window q names (toplevel.Find), or says why not.
func find(dpy, q string, ws []toplevel.Window) (toplevel.Window, error) {
	w, ambiguous, ok := toplevel.Find(ws, q)
	switch {
	case ok:
		return w, nil
	case len(ambiguous) > 0:
		return toplevel.Window{}, fmt.Errorf("target window:%s on %s matches %d windows (%s); use a longer title", q, dpy, len(ambiguous), titles(ambiguous))
	}
	return toplevel.Window{}, fmt.Errorf("target window:%s on %s matches no window; the windows are: %s", q, dpy, titles(ws))
}

func titles(ws []toplevel.Window) string {
	if len(ws) == 0 {
		return "none"
	}
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = fmt.Sprintf("%q (%s)", w.Title, w.AppID)
	}
	return strings.Join(q, ", ")
}
