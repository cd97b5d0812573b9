#!/bin/bash
# Issue 26 part 5's figures, Wayland (headless sway) beside X11 (Xvfb) in
# the same run: ROUNDS rounds (default 3), each printing the machine's load
# (uptime) before and after, then
#   1. capture of a 1280x720 frame: screencopy Grab and grim on sway,
#      a whole-screen MIT-SHM read (NoCache) on Xvfb; and a terminal's
#      change to the capture hub's frame showing it (50 changes);
#   2. smart-wait detection latency, 300 ms fake judge (10 trials);
#   3. click to the app (200 clicks) and the virtual pointer's own round
#      trip (the compositor's answer to a sync); a click through the gate
#      on sway with the user-first check on and off (1000 clicks);
#   4. act + settle + screenshot vs wtype/xdotool + 2 s + grim/xwd (5 turns);
#   5. live view glass to glass in headless Chromium (30 changes).
# Every benchmark starts and stops its own displays, apps and browser.
# Needs sway, foot, grim, wtype, xterm, xdotool, xwd, chromium
# (scripts/install-deps.sh). Figures: docs/PERFORMANCE.md ("Wayland").
#
# Usage: bash bench/wayland/run.sh 2>&1 | tee wayland-figures.txt
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-3}
bench() { # package, pattern, benchtime
  go test -run '^$' -bench "$2" -benchtime "$3" "$1" | grep -E '^(Benchmark|FAIL|---|panic|[[:space:]]+[a-z_]+\.go:)' || true
}
for r in $(seq "$ROUNDS"); do
  echo "== round $r of $ROUNDS, before: $(uptime)"
  bench ./internal/wayland/screencopy/ 'Grab1280x720|Grim1280x720' 2s
  bench ./internal/capture/ 'Capture/shm/1280x720' 500x
  bench ./bench/wayland/ ChangedFrame 50x
  bench ./bench/wayland/ DetectionLatency 10x
  bench ./bench/wayland/ ClickToApp 200x
  bench ./internal/wayland/virtual/ Click 2s
  bench ./internal/gate/ WaylandClick 1000x
  bench ./bench/wayland/ ActSettleShot 5x
  bench ./bench/wayland/ GlassToGlass 30x
  echo "== round $r, after: $(uptime)"
done
