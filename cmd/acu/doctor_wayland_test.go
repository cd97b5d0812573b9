package main

import (
	"strings"
	"testing"

	"github.com/acu-dev/acu/internal/wayland"
)

// TestFamilyWarning: the globals mutter 43 and KWin 5.27 advertise
// (seen on headless ones, docs/wayland.md) name the compositor and point
// to the docs; sway's do not.
func TestFamilyWarning(t *testing.T) {
	g := func(names ...string) []wayland.Global {
		var out []wayland.Global
		for i, n := range names {
			out = append(out, wayland.Global{Name: uint32(i + 1), Interface: n, Version: 1})
		}
		return out
	}
	mutter := g("wl_compositor", "wl_shm", "wl_seat", "xdg_wm_base", "gtk_shell1", "zwp_text_input_manager_v3")
	kwin := g("wl_compositor", "wl_seat", "zwlr_data_control_manager_v1", "org_kde_kwin_idle", "org_kde_plasma_shell")
	sway := g("wl_compositor", "wl_seat", "zwlr_screencopy_manager_v1", "zwlr_layer_shell_v1")
	if w := familyWarning("/run/wayland-0", mutter); !strings.Contains(w, "GNOME's mutter") || !strings.Contains(w, `"GNOME and KDE"`) {
		t.Errorf("mutter: %q", w)
	}
	if w := familyWarning("/run/wayland-0", kwin); !strings.Contains(w, "KDE's KWin") || !strings.Contains(w, `"GNOME and KDE"`) {
		t.Errorf("KWin: %q", w)
	}
	if w := familyWarning("/run/wayland-0", sway); w != "" {
		t.Errorf("sway: %q, want no warning", w)
	}
}
