package gate

import (
	"context"
	"time"
)

// LastUserInput is when the user last made input on the hands' display
// that acu did not make, as the gate's user-first check reads it: on a
// Wayland display, the compositor's idle watch with acu's own input
// bracketed out (the zero time: none since the watch opened). ok is false
// when the gate keeps no such record for the display: an X11 display
// (watch it with NewWatch on its connection), or a Wayland display whose
// watch is not open (ACU_ACT_PAUSE_ON_INPUT off, or a compositor without
// an idle protocol). The task engine's pause on the user's input reads it
// on Wayland displays.
func (h *Hands) LastUserInput(ctx context.Context) (last time.Time, ok bool, err error) {
	u, isWl := h.c.user.(*wlUser)
	if !isWl || u.watch == nil {
		return time.Time{}, false, nil
	}
	// Read every input the compositor took so far first, as check does.
	if f, can := u.watch.(interface{ Flush(context.Context) error }); can {
		if err := f.Flush(ctx); err != nil {
			return time.Time{}, false, err
		}
	}
	return u.watch.LastUser(), true, nil
}
