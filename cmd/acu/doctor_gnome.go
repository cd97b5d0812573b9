package main

import (
	"context"
	"time"

	"github.com/acu-dev/acu/internal/wayland"
	"github.com/acu-dev/acu/internal/wayland/mutterframes"
)

// checkGnome says, on GNOME's mutter, whether acu can act on and read
// the display: mutter's RemoteDesktop and ScreenCast on the session bus
// (DBUS_SESSION_BUS_ADDRESS) and gst-launch-1.0.
func checkGnome(ctx context.Context, e *env, path string, globals []wayland.Global, report func(bool, string, string), warn func(string, string)) {
	if !mutterframes.IsMutter(globals) {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := mutterframes.Check(cctx, e.getenv("DBUS_SESSION_BUS_ADDRESS")); err != nil {
		report(false, "gnome", path+": acu cannot drive this GNOME display: "+err.Error())
		return
	}
	report(true, "gnome", path+": mutter's RemoteDesktop and ScreenCast are on the session bus: actions by pixels (click, type, keys, drag, scroll; characters outside the keyboard layout typed by a paste), the pointer, the clipboard, the user-first check (mutter's idle monitor), smart waits, the live view, recordings and `acu screenshot` (screen and crop targets) work")
}
