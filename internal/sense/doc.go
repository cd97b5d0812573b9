// Package sense is the sense client: it watches an X display and tells the
// relay (internal/relay) what is on screen, in the seed's event shape
// ({type, ts, ocr, meta: {app, ssim}}).
//
// The flow: XDamage says the screen changed (capture.Hub.Watch); at most
// once per MinInterval the client captures it, reduces it to a thumbnail of
// 8x8-pixel cell means and compares it with the screen of the last event
// (a bounding box of changed cells plus an SSIM score), so a blinking
// cursor or a clock tick is not an event. A real change is read with
// Tesseract (internal/ocr) over the focused window, capped in area and
// text length, redacted (redact.go), and queued as a "text" event (new
// text) or a "visual" one (the screen changed, the text did not). A change
// of the focused window (_NET_ACTIVE_WINDOW, else the input focus; the
// application is its WM_CLASS) is a "context" event. A bounded queue feeds
// one sender that posts to /sense and retries with backoff while the relay
// is down, dropping the oldest events when full.
//
// Privacy comes before anything leaves: secrets in OCR text are redacted,
// <private> spans dropped, and windows on the ignore list are never read
// (the hub blacks them out of every frame; while one is focused nothing is
// captured and its switch is not reported).
//
// It does not analyse anything (the relay's loop does) or keep images.
package sense
