#!/bin/bash
# Regenerates screen.png: a 1280x720 capture of realistic desktop content (a photo-like wallpaper,
# text-heavy xterms with bitmap and anti-aliased fonts, colour, xclock, xeyes) on a private Xvfb,
# taken with the reference pipeline (../../../../shared/bench/reference_pipeline.py --save-dir).
# Then run golden.py to regenerate the goldens. Needs Xvfb, xterm, x11-apps, Debian's python3-xlib/pil/tk.
# Usage: bash make_screen.sh [BENCH_DIR=/work/shared/bench]
set -eu
BENCH=${1:-/work/shared/bench}
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
exec 5>"$TMP/displayfd"
Xvfb -displayfd 5 -screen 0 1280x720x24 -nolisten tcp >/dev/null 2>&1 &
PIDS="$!"
trap 'for p in $PIDS; do kill $p 2>/dev/null || true; done; rm -rf "$TMP"' EXIT
for _ in $(seq 50); do [ -s "$TMP/displayfd" ] && break; sleep 0.1; done
export DISPLAY=:$(cat "$TMP/displayfd")
start() { "$@" >/dev/null 2>&1 & PIDS="$PIDS $!"; }
start /usr/bin/python3 "$BENCH/show_image.py" synthetic 0 0 1280 720
sleep 2
start xterm -geometry 110x40+5+5 -e sh -c 'ls -lR /usr/share | head -400; exec sleep 1000000'
start xterm -fa 'DejaVu Sans Mono' -fs 10 -geometry 90x28+426+240 -e sh -c 'ls --color=always -l /usr/bin | head -300; exec sleep 1000000'
start xterm -bg '#202530' -fg '#d0d0d0' -fa 'DejaVu Sans Mono' -fs 9 -geometry 100x22+20+390 -e sh -c 'cat /usr/share/common-licenses/GPL-3 | head -500; exec sleep 1000000'
start xclock -geometry 160x160+1100+530
start xeyes -geometry 150x100+930+600
sleep 3
/usr/bin/python3 "$BENCH/reference_pipeline.py" --frames 1 --warmup 0 --filter bilinear --save-dir "$TMP/out"
cp "$TMP/out/frame.png" "$HERE/screen.png"
echo "wrote $HERE/screen.png; now run: /usr/bin/python3 $HERE/golden.py"
