//go:build !portal

package portal

import "testing"

// TestNeedsPortalTag says how to run the GNOME tests: they are built only
// with the tag, so `go test ./...` (CI) does not need mutter.
func TestNeedsPortalTag(t *testing.T) {
	t.Skip("the GNOME (mutter D-Bus) backend is built only with the build tag: go test -tags portal ./internal/wayland/portal/ (needs mutter, pipewire, wireplumber, gstreamer1.0-pipewire; docs/wayland.md, \"GNOME and KDE\")")
}
