#!/usr/bin/env bash
# The main job, end to end, with no API key: install what acu needs, build
# it, start a virtual display and the daemon, start a terminal that finishes
# a pretend download after a few seconds, and smart-wait for it with the
# built-in OCR judge. Shows the live progress and the notification, then
# stops everything it started. With OPENROUTER_API_KEY (or another judge)
# configured, the same demo uses the vision judge.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh >/dev/null
export PATH=/usr/local/go/bin:$PATH

work=$(mktemp -d /tmp/acu-demo.XXXXXX)
export ACU_DATA_DIR=$work/state
export HOME=${HOME:-$work}
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -n "${DISPLAY_NAME:-}" ] && ./bin/acu display stop "$DISPLAY_NAME" >/dev/null 2>&1 || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

echo "== building acu"
go build -o bin/acu ./cmd/acu

echo "== starting a virtual display"
DISPLAY_NAME=$(./bin/acu display start --size 1280x720 | sed -n 's/^DISPLAY=//p')
export DISPLAY=$DISPLAY_NAME
echo "   DISPLAY=$DISPLAY"

# A free port for the daemon, so a running acu is not disturbed.
port=18790
while (echo >/dev/tcp/127.0.0.1/$port) 2>/dev/null; do port=$((port + 1)); done
export ACU_DAEMON_PORT=$port
export ACU_RELAY_ENABLED=false   # the demo shows the smart wait; the relay would take port 18791
# The exec notifier: acu runs this command (no shell of acu's own) with the
# message as one argument. Without OpenClaw installed, append it to a file.
notified=$work/notifications.txt
export ACU_NOTIFY_COMMAND="sh -c 'printf \"%s\\n\" \"\$1\" >> $notified' sh {message}"

echo "== starting acu serve on 127.0.0.1:$port"
./bin/acu serve >"$work/serve.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do ./bin/acu doctor >/dev/null 2>&1 && break; sleep 0.1; done
./bin/acu doctor | sed 's/^/   /'

echo "== starting a terminal that finishes a pretend download in 6 s"
xterm -T downloads -geometry 90x16+40+40 -fa 'DejaVu Sans Mono' -fs 13 -e sh -c '
  echo "Downloading ubuntu.iso"; for i in 10 25 40 55 70 85; do sleep 1; echo "  $i%"; done
  echo "Download complete"; exec sleep 600' &
pids+=($!)
for _ in $(seq 100); do xwininfo -name downloads >/dev/null 2>&1 && break; sleep 0.1; done

echo "== acu wait '\"Download complete\" is visible' --timeout 60 --target window:downloads"
set +e
./bin/acu wait '"Download complete" is visible' --timeout 60 --target window:downloads
status=$?
set -e
echo "   acu wait exited with $status (0 resolved, 2 timed out, 1 error)"
for _ in $(seq 50); do [ -s "$notified" ] && break; sleep 0.1; done
echo "== the notification the agent would be woken with:"
sed 's/^/   /' "$notified" 2>/dev/null || echo "   (none)"
echo "== the wait as a run:"
./bin/acu runs --kind wait | sed 's/^/   /'
exit $status
