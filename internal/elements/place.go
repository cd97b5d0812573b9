package elements

import (
	"context"
	"fmt"
	"image"
	"path/filepath"

	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/wayland/sway"
)

// Window is a window as its compositor placed it on screen. On Wayland a
// client cannot know where its window is, so a toolkit's accessible
// extents (GTK 3, Qt 5) are relative to its own surface whatever
// coordinate type is asked for; the element map moves each accessible
// window's elements by its Window's content origin (Options.Windows).
type Window struct {
	PID   int    // the client's process id (0 unknown)
	Title string // the window's title
	AppID string // the Wayland app id
	// Content is the client's surface on screen: inside the borders, below
	// the title bar the compositor draws.
	Content image.Rectangle
	// Screen says the client reports screen pixels itself (an X11 client
	// through Xwayland, whose root window is the compositor's layout): its
	// elements stay where it puts them.
	Screen bool
}

// Windows lists a display's windows as its compositor placed them.
type Windows func(ctx context.Context) ([]Window, error)

// SwayWindows lists the windows of the sway whose IPC socket (SWAYSOCK)
// is ipc: each view's content rectangle (sway's window_rect inside its
// rect, so below the title bar and inside the borders) and its process
// id.
func SwayWindows(ipc string) Windows {
	return func(ctx context.Context) ([]Window, error) {
		ns, err := sway.Windows(ctx, ipc)
		if err != nil {
			return nil, fmt.Errorf("window positions from sway: %w", err)
		}
		out := make([]Window, 0, len(ns))
		for _, n := range ns {
			if !n.Visible {
				continue // another workspace, or behind a tab: not on screen
			}
			out = append(out, Window{PID: n.PID, Title: n.Name, AppID: n.AppID, Content: n.Content, Screen: n.Shell == "xwayland"})
		}
		return out, nil
	}
}

// SwayWindowsBeside is SwayWindows of the sway whose Wayland socket is
// at socket (an absolute path): its IPC socket is found beside it at each
// call (sway names it by its pid, so a restarted compositor is followed).
func SwayWindowsBeside(socket string) Windows {
	return func(ctx context.Context) ([]Window, error) {
		m, _ := filepath.Glob(filepath.Join(filepath.Dir(socket), "sway-ipc.*.sock"))
		if len(m) == 0 {
			return nil, fmt.Errorf("window positions of %s: no sway IPC socket (sway-ipc.*.sock) beside it: accessible elements are placed by sway's window rectangles", socket)
		}
		return SwayWindows(m[0])(ctx)
	}
}

// place moves the bounds of each accessible window's objects (and the
// window's own) by the content origin of the compositor's window it
// matches (see match). Objects of windows that match none keep the
// bounds their toolkit reported. nodes are in Tree's order: parents before
// their children. It returns how many accessible windows it placed and
// how many it could not.
func place(nodes []atspi.Node, wins []Window) (placed, unplaced int) {
	if len(nodes) == 0 {
		return 0, 0
	}
	// shift[i]: the offset of node i's window; ok[i]: it has one.
	shift := make([]image.Point, len(nodes))
	ok := make([]bool, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		switch {
		case n.Depth == 1:
			if w, found := match(n, wins); found {
				shift[i], ok[i] = w.Content.Min, true
				placed++
			} else if w == nil {
				unplaced++
			}
		case n.Depth > 1 && n.Parent >= 0 && n.Parent < i:
			shift[i], ok[i] = shift[n.Parent], ok[n.Parent]
		}
		if ok[i] && !n.Bounds.Empty() {
			n.Bounds = n.Bounds.Add(shift[i])
		}
	}
	return placed, unplaced
}

// match finds the compositor's window of the accessible window n: among
// the windows of n's process (every native window when the bus cannot say
// which process it is), the only one, else the only one titled as n is,
// else the only one of n's size. found is false when none or several
// remain; w is then non-nil when n's process has windows but all report
// screen pixels themselves (nothing to place).
func match(n *atspi.Node, wins []Window) (w *Window, found bool) {
	var own, native []*Window
	for i := range wins {
		if n.PID > 0 && wins[i].PID == n.PID {
			own = append(own, &wins[i])
		}
	}
	for _, c := range own {
		if !c.Screen {
			native = append(native, c)
		}
	}
	if len(own) > 0 && len(native) == 0 {
		return own[0], false // an Xwayland client: its extents are the screen's
	}
	cands := native
	if len(cands) == 0 {
		// The bus knows no process id, or another one (a sandbox's): any
		// native window may be this one.
		for i := range wins {
			if !wins[i].Screen {
				cands = append(cands, &wins[i])
			}
		}
	}
	if len(cands) == 1 && (n.PID > 0 && len(native) == 1 || cands[0].Title == n.Name) {
		return cands[0], true
	}
	if t := filterWins(cands, func(c *Window) bool { return c.Title == n.Name }); len(t) == 1 {
		return t[0], true
	} else if len(t) > 1 {
		cands = t
	}
	if s := filterWins(cands, func(c *Window) bool { return c.Content.Size() == n.Bounds.Size() }); len(s) == 1 {
		return s[0], true
	}
	return nil, false
}

func filterWins(ws []*Window, keep func(*Window) bool) []*Window {
	var out []*Window
	for _, w := range ws {
		if keep(w) {
			out = append(out, w)
		}
	}
	return out
}

// windowOrigin is the offset place gives the objects of the accessible
// window named title: the content origin of the one compositor window of
// that title (nothing for a window that reports screen pixels itself);
// false when no window or several have that title.
func windowOrigin(wins []Window, title string) (image.Point, bool) {
	var found *Window
	for i := range wins {
		if wins[i].Title != title {
			continue
		}
		if found != nil {
			return image.Point{}, false
		}
		found = &wins[i]
	}
	switch {
	case found == nil:
		return image.Point{}, false
	case found.Screen:
		return image.Point{}, true
	}
	return found.Content.Min, true
}
