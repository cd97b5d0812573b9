package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/wayland/portal"
)

// TestDoctorOnMutter runs `acu doctor` with WAYLAND_DISPLAY naming a real
// headless mutter: it names GNOME's mutter and points to the docs.
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
	env = append(env, "WAYLAND_DISPLAY="+h.Socket())
	out, errOut, _ := acu(t, env, "doctor")
	want := "warn wayland    " + h.Socket() + " is GNOME's mutter: it offers no wlroots capture or input protocols"
	if !strings.Contains(out, want) || !strings.Contains(out, `docs/wayland.md, "GNOME and KDE"`) {
		t.Errorf("acu doctor has no line %q pointing to the docs:\n%s\n%s", want, out, errOut)
	}
}
