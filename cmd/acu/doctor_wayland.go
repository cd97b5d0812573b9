package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/wayland"
)

// checkWayland reports, when WAYLAND_DISPLAY is set, what acu can do on
// that compositor: for each feature the protocol it would use, or what is
// missing (docs/wayland.md).
func checkWayland(ctx context.Context, e *env, report func(bool, string, string), warn func(string, string)) {
	name := e.getenv("WAYLAND_DISPLAY")
	if name == "" {
		return
	}
	path, err := wayland.SocketPath(name, e.getenv("XDG_RUNTIME_DIR"))
	if err != nil {
		report(false, "wayland", err.Error())
		return
	}
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := wayland.Dial(dctx, path)
	if err != nil {
		report(false, "wayland", err.Error())
		return
	}
	defer conn.Close()
	var have, lack []string
	for _, s := range wayland.Supports(conn.Globals()) {
		if s.OK() {
			have = append(have, s.String())
		} else {
			lack = append(lack, s.String())
		}
	}
	if len(have) > 0 {
		report(true, "wayland", fmt.Sprintf("%s: %s", path, strings.Join(have, "; ")))
	}
	for _, l := range lack {
		warn("wayland", l)
	}
	if w := familyWarning(path, conn.Globals()); w != "" {
		warn("wayland", w)
	} else if len(have) == 0 {
		warn("wayland", path+" offers none of the wlroots protocols acu speaks (GNOME and KDE: see docs/wayland.md, \"GNOME and KDE\")")
	}
	warn("wayland", "give the daemon "+path+": smart waits, the live view, recordings and `acu screenshot` take it; actions, take-over input and MCP tools drive X11 displays only so far (docs/wayland.md)")
}

// familyWarning names GNOME's mutter or KDE's KWin by a global only each
// advertises, and says what acu lacks there and where its path is
// described; "" for other compositors.
func familyWarning(path string, globals []wayland.Global) string {
	for _, g := range globals {
		switch {
		case g.Interface == "gtk_shell1":
			return path + " is GNOME's mutter: it offers no wlroots capture or input protocols; acu's GNOME path is mutter's D-Bus remote desktop and screen cast (PipeWire), proven in internal/wayland/portal (build tag portal) but not in the daemon yet (docs/wayland.md, \"GNOME and KDE\")"
		case strings.HasPrefix(g.Interface, "org_kde_"):
			return path + " is KDE's KWin: it offers no capture or input protocol to ordinary clients (only to xdg-desktop-portal-kde), so acu cannot see or drive its windows yet (docs/wayland.md, \"GNOME and KDE\")"
		}
	}
	return ""
}
