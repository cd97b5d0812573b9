#!/bin/bash
# Side-by-side benchmark: acu's capture -> resize -> JPEG pipeline against the
# reference Python pipeline (../shared/bench/reference_pipeline.py) on the
# same two displays (1280x720 and 1920x1080, filled with text-heavy xterms, a
# clock and photo-like images), interleaved round by round in one run.
# Prints per-display medians and the ratio reference/acu, and acu's capture
# of a static screen (cached) and after a small change (damaged: the rows
# XDamage reported, read alone). Every process it starts is stopped on exit.
#
# Usage: bash bench/pipeline/run.sh            (ROUNDS=10 FRAMES=15 RESAMPLE=exact|fast)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
REF=${REF:-$REPO/../shared/bench}
ROUNDS=${ROUNDS:-10}
FRAMES=${FRAMES:-15}
RESAMPLE=${RESAMPLE:-exact}
PY=/usr/bin/python3
TMP=$(mktemp -d)
PIDS=()

cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 0.5
  # A client stuck on a display that went away may ignore SIGTERM.
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT

start() { "$@" >/dev/null 2>&1 & PIDS+=($!); }

# start_xvfb W H: starts Xvfb on a display it picks; sets DPY to its number.
# (Not run in $(...): the pid must reach PIDS in this shell.)
start_xvfb() {
  local f=$TMP/dfd.$1x$2
  Xvfb -displayfd 3 -screen 0 "$1x$2x24" -nolisten tcp 3>"$f" >/dev/null 2>&1 &
  PIDS+=($!)
  for _ in $(seq 100); do
    if [ -s "$f" ]; then DPY=$(tr -d '\n' <"$f"); return; fi
    sleep 0.1
  done
  echo "Xvfb $1x$2 did not start" >&2
  exit 1
}

populate() { # display W H  (as ../shared/bench/setup_displays.sh)
  local d=$1 W=$2 H=$3
  export DISPLAY=:$d
  start $PY "$REF/show_image.py" synthetic 0 0 "$W" "$H"
  sleep 2
  start $PY "$REF/show_image.py" synthetic $((W-730)) 10 0 0
  sleep 0.5
  start xterm -geometry 110x40+5+5 -e sh -c 'ls -lR /usr/share | head -400; exec sleep 1000000'
  start xterm -fa 'DejaVu Sans Mono' -fs 10 -geometry 90x28+$((W/3))+$((H/3)) -e sh -c 'ls --color=always -l /usr/bin | head -300; exec sleep 1000000'
  start xterm -bg '#202530' -fg '#d0d0d0' -fa 'DejaVu Sans Mono' -fs 9 -geometry 100x22+20+$((H-330)) -e sh -c 'head -500 /usr/share/common-licenses/GPL-3; exec sleep 1000000'
  if [ "$W" -gt 1500 ]; then
    start xterm -fa 'DejaVu Sans Mono' -fs 11 -geometry 80x30+$((W-760))+$((H-520)) -e sh -c 'ps aux | head -100; head -300 /etc/services; exec sleep 1000000'
    start xterm -geometry 80x50+$((W/2-200))+20 -e sh -c 'cat /usr/share/common-licenses/Apache-2.0; exec sleep 1000000'
  fi
  if command -v xclock >/dev/null; then start xclock -update 1 -geometry 160x160+$((W-180))+$((H-190)); fi
  if command -v xeyes >/dev/null; then start xeyes -geometry 150x100+$((W-350))+$((H-120)); fi
  sleep 1
  unset DISPLAY
}

start_xvfb 1280 720; D720=$DPY
start_xvfb 1920 1080; D1080=$DPY
populate "$D720" 1280 720
populate "$D1080" 1920 1080
echo "displays :$D720 (1280x720) and :$D1080 (1920x1080)"

(cd "$REPO" && go build -o "$TMP/acu-pipeline" ./bench/pipeline)

for r in $(seq "$ROUNDS"); do
  for d in "$D720" "$D1080"; do
    ref() { DISPLAY=:$d $PY "$REF/reference_pipeline.py" --frames "$FRAMES" --warmup 3 --filter bilinear --json "$TMP/ref_${d}_$r.json" >/dev/null; }
    acu() { "$TMP/acu-pipeline" -display ":$d" -frames "$FRAMES" -warmup 3 -resample "$RESAMPLE" -json "$TMP/acu_${d}_$r.json" >/dev/null; }
    if [ $((r % 2)) -eq 1 ]; then ref; acu; else acu; ref; fi
  done
  echo "round $r/$ROUNDS done"
done

$PY - "$TMP" "$D720" "$D1080" "$RESAMPLE" <<'PYEOF'
import glob, json, os, statistics, sys
tmp, d720, d1080, mode = sys.argv[1:5]
def samples(prefix, d, key):
    out = []
    for p in sorted(glob.glob(os.path.join(tmp, "%s_%s_*.json" % (prefix, d)))):
        out += json.load(open(p))[0]["samples"][key]
    return out
med = lambda v: statistics.median(v) if v else float("nan")
print("\nmedians over all rounds (ms), acu resample=%s" % mode)
print("%-10s %12s %12s %12s %12s %12s %12s %12s %8s" % ("display", "ref total", "ref capture", "acu total", "acu capture", "acu encode", "acu cached", "acu damaged", "ratio"))
for d, label in ((d720, "1280x720"), (d1080, "1920x1080")):
    rt, at = med(samples("ref", d, "total")), med(samples("acu", d, "total"))
    print("%-10s %12.2f %12.2f %12.2f %12.2f %12.2f %12.3f %12.3f %7.1fx" % (label, rt, med(samples("ref", d, "capture")), at,
          med(samples("acu", d, "capture")), med(samples("acu", d, "encode")), med(samples("acu", d, "cached_capture")),
          med(samples("acu", d, "damaged_capture")), rt / at))
def round_ratios(d):
    out = []
    for p in sorted(glob.glob(os.path.join(tmp, "ref_%s_*.json" % d))):
        r = p.rsplit("_", 1)[1]
        a = os.path.join(tmp, "acu_%s_%s" % (d, r))
        if os.path.exists(a):
            out.append(med(json.load(open(p))[0]["samples"]["total"]) / med(json.load(open(a))[0]["samples"]["total"]))
    return out
for d, label in ((d720, "1280x720"), (d1080, "1920x1080")):
    rr = round_ratios(d)
    print("%-10s median of per-round ratios %.1fx (rounds: %s)" % (label, med(rr), " ".join("%.1f" % x for x in rr)))
print("ref stages 1280x720: capture %.2f convert %.2f resize %.2f encode %.2f" % tuple(
    med(samples("ref", d720, k)) for k in ("capture", "convert", "resize", "encode")))
print("ref stages 1920x1080: capture %.2f convert %.2f resize %.2f encode %.2f" % tuple(
    med(samples("ref", d1080, k)) for k in ("capture", "convert", "resize", "encode")))
PYEOF
