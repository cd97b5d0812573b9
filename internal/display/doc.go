// Package display owns acu's live connections to X11 displays: one
// *Conn per display name, with the screen's geometry and pixel format, the
// extensions acu uses (MIT-SHM, DAMAGE, XTEST, XFIXES, XC-MISC), a single
// event reader that fans events out to subscribers, EWMH/ICCCM window
// listing, and window operations (focus, close, move/resize, minimize,
// maximize: EWMH requests when a window manager runs, plain X requests when
// none does; winops.go) and the pointer's position (written on xgb; no
// xgbutil).
//
// ImageConn (image.go) is the one connection not on xgb: the handshake
// and GetImage written on the socket directly, so a process that reads the
// screen once (acu screenshot) gets the pixels straight into its buffer
// without an event reader, extensions or xgb's two copies of the reply.
//
// It sits under internal/capture (frames, damage) and internal/input
// (XTest). It does not make frames (capture does), send input, or reconnect
// by itself: a Conn whose server dies closes Done, and its owner opens a
// new one.
package display
