// Package wayland is acu's client side of the Wayland wire protocol: one
// Unix-socket connection to a compositor, the object ids on it, requests
// marshalled from typed arguments, events dispatched to the handler of the
// object they are for, file descriptors passed with SCM_RIGHTS, the
// registry of globals and shared-memory buffers (memfd) for pixels.
//
// It is written for acu rather than taken from a library: the Go module
// proxy serves none of the Go Wayland libraries, and acu needs only a
// handful of interfaces, among them wlroots' own (screencopy, virtual
// pointer, virtual keyboard) that the general libraries do not carry. Each
// interface acu speaks is declared in protocols.go as its opcodes, with
// the protocol file and version it comes from; docs/wayland.md says why.
//
// A Conn is used by one goroutine at a time (its owner: a capture source or
// an input device). Requests are written as they are made; events are read
// only while the owner waits for something (Roundtrip, Dispatch), as with
// libwayland's default queue.
//
// It does not capture, type or click: internal/wayland/screencopy and
// internal/wayland/virtual do, on a Conn of their own.
package wayland
