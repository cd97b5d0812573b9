package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/wayland"
	"github.com/acu-dev/acu/internal/wayland/idle"
)

// checkWayland reports, when WAYLAND_DISPLAY is set, what acu can do on
// that compositor: for each feature the protocol it would use, or what is
// missing, and which protocol, if any, shows the user's input for the
// user-first check (docs/wayland.md).
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
	if g, ok := idle.Offered(conn.Globals()); ok {
		line := fmt.Sprintf("the user first: %s v%d reports the seat's input", g.Interface, g.Version)
		if g.Interface != "ext_idle_notifier_v1" || g.Version < 2 {
			line += " (none while a window inhibits idle, e.g. a video playing: docs/wayland.md)"
		}
		report(true, "wayland", line)
	} else {
		warn("wayland", "the user first: "+path+" offers neither ext_idle_notifier_v1 nor org_kde_kwin_idle, so acu cannot see the user's input there to pause for it")
	}
	if line, ok := wlrootsLine(path, conn.Globals(), e.getenv("SWAYSOCK")); line != "" {
		if ok {
			report(true, "wayland", line)
		} else {
			warn("wayland", line)
		}
	}
	if w := familyWarning(path, conn.Globals()); w != "" {
		warn("wayland", w)
		checkGnome(ctx, e, path, conn.Globals(), report, warn)
	} else if len(have) == 0 {
		warn("wayland", path+" offers none of the wlroots protocols acu speaks (GNOME and KDE: see docs/wayland.md, \"GNOME and KDE\")")
	}
	warn("wayland", "give the daemon "+path+": smart waits, the live view, recordings, `acu screenshot`, actions by pixels, window operations, the pointer, the clipboard, launches, the agent loop, the computer-use dialects, the MCP tools, tasks and the live view's take-over take it (docs/wayland.md)")
}

// familyWarning names GNOME's mutter or KDE's KWin by a global only each
// advertises, and says what acu lacks there and where its path is
// described; "" for other compositors. A compositor offering wlroots'
// capture or input protocols is neither: wlroots compositors offer
// org_kde_kwin_idle and org_kde_kwin_server_decoration_manager too, and
// phoc gtk_shell1.
func familyWarning(path string, globals []wayland.Global) string {
	if isWlroots(globals) {
		return ""
	}
	for _, g := range globals {
		switch {
		case g.Interface == "gtk_shell1":
			return path + " is GNOME's mutter: it offers no wlroots capture or input protocols, so acu acts through mutter's D-Bus remote desktop and reads the screen from a mutter screen cast (PipeWire, through gst-launch-1.0); not available there: window lists, window operations and window targets, capture while ACU_EXCLUDE_WINDOWS is set (docs/wayland.md, \"GNOME and KDE\")"
		case strings.HasPrefix(g.Interface, "org_kde_plasma_"):
			return path + " is KDE's KWin: it offers no capture or input protocol to ordinary clients (only to xdg-desktop-portal-kde), so acu cannot see or drive its windows yet (docs/wayland.md, \"GNOME and KDE\")"
		}
	}
	return ""
}

// isWlroots reports whether the compositor offers wlroots' capture or
// input protocols (sway, phoc, wayfire, labwc, …).
func isWlroots(globals []wayland.Global) bool {
	for _, g := range globals {
		switch g.Interface {
		case "zwlr_screencopy_manager_v1", "zwlr_virtual_pointer_manager_v1":
			return true
		}
	}
	return false
}

// wlrootsLine names a wlroots compositor and says where acu's window
// geometry comes from there: sway's IPC (found beside the socket, where
// the daemon looks, or in SWAYSOCK) or nowhere, and what that leaves
// (ok false: a warning). "" for other compositors.
func wlrootsLine(path string, globals []wayland.Global, swaysock string) (string, bool) {
	if !isWlroots(globals) {
		return "", true
	}
	name := "a wlroots compositor"
	for _, g := range globals {
		switch g.Interface {
		case "phosh_private":
			name = "phoc (phosh's wlroots compositor)"
		case "zwf_shell_manager_v2":
			name = "wayfire"
		}
	}
	ipc, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "sway-ipc.*.sock"))
	if len(ipc) > 0 || swaysock != "" {
		return path + " is sway: window rectangles, where input lands, move and resize through sway's IPC; maximize and minimize are ignored by sway", true
	}
	toplevels := false
	for _, g := range globals {
		toplevels = toplevels || g.Interface == "zwlr_foreign_toplevel_manager_v1"
	}
	if !toplevels {
		return path + " is " + name + " with no window list (no zwlr_foreign_toplevel_manager_v1, no sway IPC): window operations, window targets and the deny-list's window checks are unavailable", false
	}
	return path + " is " + name + " without sway's IPC: windows come from wlr-foreign-toplevel alone (titles, app ids, states; focus, close, maximize and minimize where it honours them) with no rectangles: window targets, move and resize are unavailable, keys land in the activated window, and with ACU_ACT_DENY set pointer input is refused (docs/wayland.md)", false
}
