package main

import (
	"context"
	"strings"
	"testing"

	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// doctorWayland runs the doctor's Wayland check with WAYLAND_DISPLAY set
// to socket and returns its ok and warning lines.
func doctorWayland(t *testing.T, socket string) (oks, warns []string) {
	t.Helper()
	e := &env{getenv: func(k string) string {
		if k == "WAYLAND_DISPLAY" {
			return socket
		}
		return ""
	}}
	checkWayland(context.Background(), e,
		func(ok bool, _, line string) {
			if ok {
				oks = append(oks, line)
			} else {
				warns = append(warns, "FAIL "+line)
			}
		},
		func(_, line string) { warns = append(warns, line) })
	return oks, warns
}

// TestDoctorOnWlroots: on a real phoc and a real sway the doctor names
// the compositor, never takes it for KWin or mutter (both offer
// org_kde_kwin_idle, phoc gtk_shell1 too), and says where window
// geometry comes from: sway's IPC, or nowhere on phoc.
func TestDoctorOnWlroots(t *testing.T) {
	p := waylandtest.StartPhoc(t, 640, 480)
	oks, warns := doctorWayland(t, p.Socket())
	all := strings.Join(append(oks, warns...), "\n")
	if strings.Contains(all, "KWin") || strings.Contains(all, "mutter") || strings.Contains(all, "FAIL") {
		t.Errorf("phoc's report names KWin or mutter or fails:\n%s", all)
	}
	if !strings.Contains(all, "capture: zwlr_screencopy_manager_v1 v3") || !strings.Contains(all, "windows: zwlr_foreign_toplevel_manager_v1 v3") {
		t.Errorf("phoc's report lacks its capture or windows protocol:\n%s", all)
	}
	if !strings.Contains(strings.Join(warns, "\n"), "phoc (phosh's wlroots compositor) without sway's IPC") ||
		!strings.Contains(all, "no rectangles") {
		t.Errorf("phoc's report does not name it and warn that windows have no rectangles:\n%s", all)
	}

	s := waylandtest.Start(t, 640, 480)
	oks, warns = doctorWayland(t, s.Socket())
	all = strings.Join(append(oks, warns...), "\n")
	if strings.Contains(all, "KWin") || strings.Contains(all, "mutter") || strings.Contains(all, "FAIL") {
		t.Errorf("sway's report names KWin or mutter or fails:\n%s", all)
	}
	if !strings.Contains(strings.Join(oks, "\n"), "is sway: window rectangles") {
		t.Errorf("sway's report does not say its rectangles come from sway's IPC:\n%s", all)
	}
}
