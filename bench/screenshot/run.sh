#!/bin/bash
# acu screenshot against scrot, whole processes, interleaved: one 1280x720
# Xvfb with an xterm of text, ROUNDS rounds (default 20) of
# `acu screenshot -o a.jpg` and `scrot -o b.jpg`, wall time of each process.
# Prints each side's min / median / max and the median of the pair ratios.
# With BASE=/path/to/an/older/acu, that binary runs in every round too (the
# before/after comparison of a change, side by side); the order of the
# programs rotates from round to round.
# Needs scrot (apt-get install scrot). Stops everything it starts.
#
# Usage: bash bench/screenshot/run.sh        (ROUNDS=20, BASE unset)
#   git worktree add /tmp/old <commit> && (cd /tmp/old && go build -o /tmp/acu-old ./cmd/acu)
#   BASE=/tmp/acu-old bash bench/screenshot/run.sh
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${ROUNDS:-20}
BASE=${BASE:-}
TMP=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT
command -v scrot >/dev/null || { echo "scrot is not installed: apt-get install scrot" >&2; exit 1; }
(cd "$REPO" && go build -o "$TMP/acu" ./cmd/acu)
Xvfb -displayfd 3 -screen 0 1280x720x24 -nolisten tcp -noreset 3>"$TMP/dfd" >/dev/null 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [ -s "$TMP/dfd" ] && break; sleep 0.1; done
export DISPLAY=":$(tr -d '\n' <"$TMP/dfd")"
xterm -geometry 120x40+0+0 -e sh -c 'ls -la /usr/bin; sleep 600' >/dev/null 2>&1 &
PIDS+=($!)
sleep 1
ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000 )); }
run() {
  case $1 in
  acu) ms "$TMP/acu" screenshot -o "$TMP/a.jpg" ;;
  base) ms "$BASE" screenshot -o "$TMP/c.jpg" ;;
  scrot) ms scrot -o "$TMP/b.jpg" ;;
  esac
}
progs=(acu scrot)
[ -n "$BASE" ] && progs+=(base)
for p in "${progs[@]}"; do run "$p" >/dev/null; : >"$TMP/$p.txt"; done # warm-up
: >"$TMP/ratio.txt"; : >"$TMP/baseratio.txt"
for r in $(seq "$ROUNDS"); do
  n=${#progs[@]}
  declare -A t=()
  for i in $(seq 0 $((n - 1))); do
    p=${progs[$(( (i + r) % n ))]}
    t[$p]=$(run "$p")
    echo "${t[$p]}" >>"$TMP/$p.txt"
  done
  awk -v a="${t[acu]}" -v b="${t[scrot]}" 'BEGIN { printf "%.3f\n", a / b }' >>"$TMP/ratio.txt"
  [ -n "$BASE" ] && awk -v a="${t[base]}" -v b="${t[scrot]}" 'BEGIN { printf "%.3f\n", a / b }' >>"$TMP/baseratio.txt"
  unset t
done
stats() { sort -n "$1" | awk '{ v[NR] = $1 } END { printf "min %s  median %s  max %s\n", v[1], v[int((NR + 1) / 2)], v[NR] }'; }
echo "acu screenshot (us):  $(stats "$TMP/acu.txt")"
[ -n "$BASE" ] && echo "BASE acu (us):        $(stats "$TMP/base.txt")"
echo "scrot (us):           $(stats "$TMP/scrot.txt")"
echo "acu / scrot ratio:    $(stats "$TMP/ratio.txt")"
[ -n "$BASE" ] && echo "BASE / scrot ratio:   $(stats "$TMP/baseratio.txt")"
exit 0
