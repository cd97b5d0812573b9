// Package a11yjudge decides conditions about structure from the AT-SPI
// accessibility tree, with no model and no pixels: a window or dialog with
// a title is open, gone or focused; a control, named by its role and name
// as the element map names them, exists, is enabled, disabled, checked,
// selected, focused or showing; a progress bar's or slider's value reaches
// a number or a percentage; a text field's value equals or contains a
// string; a list has at least N rows.
//
// Parse maps the plain phrasings people write ("the Save dialog is open",
// "the Install button is enabled", "the download progress reaches 100%")
// to Predicates with a small grammar (docs/judges.md lists it), and splits
// a condition on "and" into the parts it can decide and the rest, which
// the wait engine gives to the OCR or vision judge. A phrase the grammar
// does not know is never claimed: it falls through to those judges.
//
// Judge keeps, per display, the accessibility tree as last read and an
// AT-SPI event subscription (atspi.Client.Listen): an event marks what it
// touched (one object's states or value, or one application's windows and
// children), Watch wakes the waits of that display, and Decide reads again
// only what the events marked before it evaluates the predicates. Windows
// and applications named by ACU_EXCLUDE_WINDOWS are never read into a
// decision (internal/privacy).
//
// Where it sits: an engine beside internal/judge, below internal/smartwait,
// which routes each part of a condition to the cheapest judge that can
// decide it. It reads the desktop only through internal/atspi. What it
// does not do: capture pixels, call models, act on the desktop, or decide
// text conditions (the OCR judge's) or anything the grammar does not name.
package a11yjudge
