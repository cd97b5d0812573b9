// Package portal drives a GNOME Wayland session, which offers none of
// the wlroots protocols the rest of internal/wayland speaks, in the two
// ways GNOME allows (docs/wayland.md, "GNOME and KDE"):
//
//   - OpenPortal: xdg-desktop-portal's RemoteDesktop and ScreenCast, the
//     general path (GNOME's and KDE's portal backends), approved by the
//     person in the portal's dialog, with a restore token so a screen
//     cast is approved once;
//   - Open: mutter's own D-Bus APIs, org.gnome.Mutter.RemoteDesktop for
//     the pointer and keyboard and org.gnome.Mutter.ScreenCast for a
//     PipeWire stream of a monitor (what gnome-remote-desktop and
//     xdg-desktop-portal-gnome use), with no dialog.
//
// Frames are read with GStreamer's pipewiresrc as an external helper
// (Grab, GrabRemote for one frame; Stream for a long-lived pipeline of
// raw frames): acu is built without cgo and has no PipeWire client of
// its own. StartHeadless starts a headless GNOME session (mutter,
// PipeWire, a session bus) for tests, which skip when mutter, PipeWire
// or GStreamer is missing (fail with ACU_REQUIRE_PORTAL=1).
//
// The gate drives a mutter display with Open's Session (its GNOME
// backend); cmd/acu's capture router reads its frames with Stream.
package portal
