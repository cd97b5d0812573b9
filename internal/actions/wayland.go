package actions

import (
	"fmt"
	"path/filepath"

	"github.com/acu-dev/acu/internal/api"
)

// checkWayland reports why Wayland display dpy cannot be served: the
// service reads no Wayland frames (Options.Screens unset), or dpy is not
// the socket's absolute path, beside which sway's IPC socket is found for
// the element map's window rectangles.
func (s *Service) checkWayland(dpy string) error {
	if !s.wayland {
		return &Error{Code: api.CodeUnavailable, Message: fmt.Sprintf("display %s is a Wayland display and this service has no Wayland capture", dpy)}
	}
	if !filepath.IsAbs(dpy) {
		return invalid("display", "display %q: name a Wayland display by its socket's absolute path (as `acu display start --wayland` prints WAYLAND_DISPLAY)", dpy)
	}
	return nil
}
