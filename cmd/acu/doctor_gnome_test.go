package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/wayland/portal"
)

// TestDoctorOnMutter runs `acu doctor` with WAYLAND_DISPLAY naming a real
// headless mutter: it names GNOME's mutter, what is not available there
// and the docs, and whether mutter's D-Bus services are reachable on the
// session bus (what works then).
func TestDoctorOnMutter(t *testing.T) {
	needMutter(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h, err := portal.StartHeadless(ctx, portal.Options{Width: 320, Height: 200})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Stop)
	env, _, _ := newEnv(t, ":0")
	env = append(env, "WAYLAND_DISPLAY="+h.Socket(), "DBUS_SESSION_BUS_ADDRESS=")
	out, errOut, _ := acu(t, env, "doctor")
	want := "warn wayland    " + h.Socket() + " is GNOME's mutter: it offers no wlroots capture or input protocols, so acu acts through mutter's D-Bus remote desktop"
	if !strings.Contains(out, want) || !strings.Contains(out, "not available there: window lists") || !strings.Contains(out, `docs/wayland.md, "GNOME and KDE"`) {
		t.Errorf("acu doctor has no line %q saying what is not available and pointing to the docs:\n%s\n%s", want, out, errOut)
	}
	if want := h.Socket() + ": acu cannot drive this GNOME display: no DBUS_SESSION_BUS_ADDRESS"; !strings.Contains(out, want) {
		t.Errorf("acu doctor without the session bus has no line %q:\n%s", want, out)
	}
	// With the GNOME session's bus: what works.
	env = append(env, "DBUS_SESSION_BUS_ADDRESS="+h.BusAddress())
	out, errOut, _ = acu(t, env, "doctor")
	if want := h.Socket() + ": mutter's RemoteDesktop and ScreenCast are on the session bus: actions by pixels"; !strings.Contains(out, want) {
		t.Errorf("acu doctor with the session bus has no line %q:\n%s\n%s", want, out, errOut)
	}
}
