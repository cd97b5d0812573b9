#!/bin/sh
# Hands that keep order (docs/perf/actions.md): three rounds of the order,
# user-first and typing benchmarks at a load average of 6 or more. When the
# machine is less loaded, busy loops are added before a round (and said
# so) until it is; they are stopped when the script ends.
set -eu
cd "$(dirname "$0")/../.."
load() { cut -d' ' -f1 /proc/loadavg; }
below6() { awk -v l="$(load)" 'BEGIN { exit !(l < 6) }'; }
pids=""
stop() { for p in $pids; do kill "$p" 2>/dev/null || true; done; }
trap stop EXIT INT TERM
busy=0
# Before each round: busy loops (kept to the end) while the load is under 6.
loaded() {
	while below6 && [ "$busy" -lt 8 ]; do
		sh -c 'while :; do :; done' &
		pids="$pids $!"
		busy=$((busy + 1))
		sleep 20
	done
	while below6; do sleep 5; done
}
for round in 1 2 3; do
	loaded
	echo "round $round start: load $(cat /proc/loadavg), busy loops added by this script so far: $busy"
	go test -run '^$' -bench 'OrderTypeThenClick' -benchtime 1000x ./bench/actions
	go test -run '^$' -bench 'UserFirstSelfRefusal' -benchtime 10000x ./bench/actions
	go test -run '^$' -bench 'UserTouchThenAct' -benchtime 20x ./bench/actions
	go test -run '^$' -bench 'TypeOutsideKeymap' -benchtime 10000x ./bench/actions
	echo "round $round end: load $(cat /proc/loadavg)"
done
