package sense

import (
	"context"
	"strings"

	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/privacy"
)

// App is the focused application.
type App struct {
	Window display.Window
	Name   string // what meta.app carries
}

// activeWindow finds the focused top-level window: _NET_ACTIVE_WINDOW when
// a window manager sets it, else the input focus (walked up to the window
// carrying WM_CLASS), else the window under the pointer. ok is false when
// nothing is focused.
func activeWindow(ctx context.Context, c *display.Conn) (display.Window, bool, error) {
	id, err := netActive(c)
	if err != nil {
		return display.Window{}, false, err
	}
	if id == 0 {
		if id, err = focusClient(c); err != nil {
			return display.Window{}, false, err
		}
	}
	if id == 0 {
		return display.Window{}, false, nil
	}
	w, ok, err := c.Window(ctx, uint32(id))
	if err != nil || !ok {
		return display.Window{}, false, err
	}
	return w, true, nil
}

func netActive(c *display.Conn) (xproto.Window, error) {
	a, err := c.Atom("_NET_ACTIVE_WINDOW")
	if err != nil {
		return 0, err
	}
	r, err := xproto.GetProperty(c.X, false, c.Screen.Root, a, xproto.AtomWindow, 0, 1).Reply()
	if err != nil {
		return 0, err
	}
	if r.Format != 32 || len(r.Value) < 4 {
		return 0, nil
	}
	v := r.Value
	return xproto.Window(uint32(v[0]) | uint32(v[1])<<8 | uint32(v[2])<<16 | uint32(v[3])<<24), nil
}

// focusClient returns the client window holding the input focus, or under
// the pointer when the focus is the root or PointerRoot.
func focusClient(c *display.Conn) (xproto.Window, error) {
	f, err := xproto.GetInputFocus(c.X).Reply()
	if err != nil {
		return 0, err
	}
	w := f.Focus
	if w == xproto.InputFocusNone || w == xproto.InputFocusPointerRoot || w == c.Screen.Root {
		p, err := xproto.QueryPointer(c.X, c.Screen.Root).Reply()
		if err != nil {
			return 0, err
		}
		if p.Child == 0 {
			return 0, nil
		}
		return findClass(c, p.Child, 3)
	}
	// Walk up from the focus (often a child of the client) to a window
	// with WM_CLASS.
	for i := 0; i < 8 && w != 0 && w != c.Screen.Root; i++ {
		if hasClass(c, w) {
			return w, nil
		}
		t, err := xproto.QueryTree(c.X, w).Reply()
		if err != nil {
			return 0, nil
		}
		w = t.Parent
	}
	return 0, nil
}

// findClass searches w and its descendants (depth levels) for a window
// with WM_CLASS: the client inside a window manager's frame.
func findClass(c *display.Conn, w xproto.Window, depth int) (xproto.Window, error) {
	if hasClass(c, w) {
		return w, nil
	}
	if depth == 0 {
		return 0, nil
	}
	t, err := xproto.QueryTree(c.X, w).Reply()
	if err != nil {
		return 0, nil
	}
	for i := len(t.Children) - 1; i >= 0; i-- {
		if id, _ := findClass(c, t.Children[i], depth-1); id != 0 {
			return id, nil
		}
	}
	return 0, nil
}

func hasClass(c *display.Conn, w xproto.Window) bool {
	r, err := xproto.GetProperty(c.X, false, w, xproto.AtomWmClass, xproto.AtomString, 0, 64).Reply()
	return err == nil && len(r.Value) > 0
}

// linuxApps maps WM_CLASS names of common Linux applications to the names
// the seed's normalizeAppName table knows.
var linuxApps = map[string]string{
	"jetbrains-idea":        "idea",
	"jetbrains-idea-ce":     "idea",
	"jetbrains-pycharm":     "pycharm",
	"jetbrains-pycharm-ce":  "pycharm",
	"jetbrains-webstorm":    "webstorm",
	"jetbrains-datagrip":    "datagrip",
	"google-chrome":         "Google Chrome",
	"code":                  "code",
	"code - insiders":       "code - insiders",
	"telegramdesktop":       "Telegram",
	"gnome-terminal-server": "Terminal",
}

// appName is meta.app for a window: its WM_CLASS class (mapped to the
// seed's names where known), else the instance, else the title.
func appName(w display.Window) string {
	for _, s := range []string{w.Class, w.Instance} {
		if s == "" {
			continue
		}
		if n, ok := linuxApps[strings.ToLower(s)]; ok {
			return n
		}
		return s
	}
	if w.Title != "" {
		return w.Title
	}
	return "unknown"
}

// ignored reports whether a window matches the ignore list (privacy's
// rule: title, class or instance containing an entry, case-insensitive).
func ignored(w display.Window, ignore *privacy.Filter) bool {
	return ignore.Excludes(w.Title, w.Class, w.Instance)
}
