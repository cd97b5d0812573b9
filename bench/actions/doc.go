// Package actionsbench measures acting over the wire end to end: the click
// round trip of POST /v1/actions on loopback, act + settle + screenshot
// after a screen that changes once and then stops (beside the reference
// approach: an xdotool subprocess per action, then a fixed 2 s sleep before
// the screenshot), and the element map of a GTK window over HTTP against
// the in-process extraction. Figures and commands: docs/PERFORMANCE.md.
package actionsbench
