// Package actions is acu's hands over the wire: it runs a request of
// actions (move, click, mouse_down/up, drag, scroll, type, key, wait) on one
// X display, in order, stopping at the first failure, with a result per
// action, and then optionally waits for the screen to settle, takes a
// screenshot and diffs the element map. It also serves the element map of a
// display (GET /v1/elements) with an optional labelled screenshot.
//
// Positions come in three forms (api.Point): normalized 0..1000 of the
// screen or of a window; pixels of a screenshot acu returned (by its id,
// kept in a small registry of recent screenshots, or by its size), mapped
// back to the exact screen pixel; or an element id of the element map,
// acted on as the orchestrator does (internal/elements: the element's
// AT-SPI action or editable text where it has one, else the pointer at its
// centre), verified by re-extraction when asked.
//
// Safety: acting can be turned off or limited to some displays; an action
// that would land in a window whose title or class matches the deny-list
// is refused; while the user makes input on the display (the gate's user
// clock: the user's last input as the X server stamped it, acu's own told
// apart) requests are refused with user_active until the user has been
// still for the quiet period. Actions take effect in the order sent: before
// an action carried by another mechanism than the last (XTest, an AT-SPI
// action, AT-SPI text), the request waits until the application has
// handled the earlier input (order.go) and says so in the action's result.
//
// Kinds are rows of one table (kinds.go): the fields a kind takes, its own
// checks and its executor; Act checks the request, resolves every position
// (plan), runs the steps and records the request (request.finish). Every request is recorded as an event on a run of kind "session"
// per client and display, which ends after the client has been idle.
//
// Where it sits: a feature (layer 3) under internal/server, over input,
// display, capture, atspi, elements, runs and smartwait's settle. The
// request and answer types are the wire types of internal/api, so HTTP, MCP
// and the CLI share one action model. What it does not do: HTTP, auth and
// token scopes (internal/server), window management, clipboard, launching.
package actions
