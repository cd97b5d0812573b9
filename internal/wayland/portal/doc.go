// Package portal drives a GNOME (mutter) Wayland session, which offers
// none of the wlroots protocols the rest of internal/wayland speaks,
// through mutter's own D-Bus APIs: org.gnome.Mutter.RemoteDesktop for
// the pointer and keyboard and org.gnome.Mutter.ScreenCast for a
// PipeWire stream of a monitor, the APIs gnome-remote-desktop and
// xdg-desktop-portal-gnome use (docs/wayland.md, "GNOME and KDE").
//
// The code is built only with the build tag "portal" (go test -tags
// portal ./internal/wayland/portal/): it is the proven path for issue 26
// part 4, not yet wired into the gate, and its tests need a headless
// mutter, PipeWire and GStreamer's pipewiresrc. Without the tag the
// package holds this documentation and a test that says how to run the
// real ones.
package portal
