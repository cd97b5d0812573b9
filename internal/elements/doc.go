// Package elements builds the element map: what is on a display, as a
// short list of elements with stable semantic ids that a model can read and
// name in its steps, and carries out and verifies those steps. On a
// Wayland display the toolkits report bounds relative to their window, and
// the map moves each window's elements by where the compositor placed it
// (Options.Windows, SwayWindows; place.go).
//
// The flow of one iteration: Extract waits for the screen to settle (two
// identical consecutive frames ~120 ms apart, at most 800 ms), then reads
// the accessibility tree (internal/atspi: applications, windows, widgets
// with role, name, states, bounds and actions) and the OCR text of the
// settled frame (internal/ocr) concurrently. Tree objects become elements
// (unnamed inert containers are left out); OCR lines overlapping an element
// at IoU > 0.5, or lying inside one whose text contains them, merge into it;
// the others become text elements for what the tree lacks (terminals,
// canvases, remote desktops). Elements are ranked showing and on-screen
// first, capped at 200, and given ids that stay the same across iterations
// (btn_save, txt_search_2, txt_1). Map.Text renders the map for a prompt;
// Compare diffs two maps; LayoutHash and Tracker are the stagnation
// bookkeeping (same layout 3 times in the last 10, unchanged map 4 times in
// a row).
//
// Execute runs a semantic step (click, type, key) on an element: through
// AT-SPI (Action, EditableText, Component focus) when the element offers
// it, else with XTest at the element's centre through internal/input; it
// re-extracts and diffs to verify the effect and retries once on the fresh
// map before failing.
//
// Where it sits: below internal/orchestrator (the dual-agent task loop),
// above atspi, ocr, capture and input. What it does not do: talk to models,
// decide which step to take, read configuration or the environment (the
// caller passes Options), or own the connections it is given.
package elements
