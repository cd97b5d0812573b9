// Package livebench measures the live view and recordings end to end:
// glass-to-glass latency on loopback (an X window changes; headless
// Chromium paints the frame that shows it), what one viewer costs on an
// idle display and on a scrolling terminal (bytes and CPU), and recording
// one 1280x720 display (CPU while idle and while busy, file size per
// minute) beside `ffmpeg -f x11grab` at a fixed 10 fps on the same scenes.
// Figures and commands: docs/PERFORMANCE.md.
package livebench
