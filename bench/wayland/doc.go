// Package waylandbench measures acu on a headless Wayland compositor (sway)
// beside the same measurement on Xvfb, in one run: a change to the capture
// hub's frame showing it, the smart wait's detection latency with a 300 ms
// fake judge, a click's round trip to the app, act + settle + screenshot
// against a script's wtype + 2 s sleep + grim, and glass to glass in the
// live view. Each benchmark has an x11 and a wayland sub-benchmark doing
// the same thing with each backend's packages: a terminal (xterm or foot)
// both draws the changes and reports what it received. Figures and
// commands: docs/PERFORMANCE.md ("Wayland").
package waylandbench
