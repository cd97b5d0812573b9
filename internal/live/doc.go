// Package live owns the live view's engine: frames of a display pushed to
// a viewer only when XDamage reports a change (Stream, on the capture hub's
// Watch and Capture: no screen scraping of its own), and a human's
// take-over of a display (Takeover): the hold that pauses acu's own agents,
// tasks and action clients on that display (gate.Hold, written through the
// gate where every acu process sees it: a property on the X root window,
// or a file beside a Wayland compositor's socket), the human's pointer and
// keyboard sent through the gate's hands, and the take-over recorded as a
// run of kind "takeover" with intervention events.
//
// It sits among the features, under internal/server, which serves the
// pages, the frame stream and the input route. It draws no overlays: the
// page does, from the API's waits, events and element map.
package live
