#!/bin/sh
# Hands that keep order (docs/perf/actions.md): three rounds of the order,
# user-first and typing benchmarks at a load average of 6 or more. When the
# machine is less loaded, busy loops are added (and said so) until it is;
# they are stopped when the script ends.
set -eu
cd "$(dirname "$0")/../.."
load() { cut -d' ' -f1 /proc/loadavg; }
below6() { awk -v l="$(load)" 'BEGIN { exit !(l < 6) }'; }
pids=""
stop() { for p in $pids; do kill "$p" 2>/dev/null || true; done; }
trap stop EXIT INT TERM
busy=0
if below6; then
	for _ in 1 2 3 4 5 6; do
		sh -c 'while :; do :; done' &
		pids="$pids $!"
		busy=$((busy + 1))
	done
	while below6; do sleep 5; done
fi
echo "busy loops added by this script: $busy"
for round in 1 2 3; do
	echo "round $round start: load $(cat /proc/loadavg)"
	go test -run '^$' -bench 'OrderTypeThenClick' -benchtime 1000x ./bench/actions
	go test -run '^$' -bench 'UserFirstSelfRefusal' -benchtime 10000x ./bench/actions
	go test -run '^$' -bench 'UserTouchThenAct' -benchtime 20x ./bench/actions
	go test -run '^$' -bench 'TypeOutsideKeymap' -benchtime 10000x ./bench/actions
	echo "round $round end: load $(cat /proc/loadavg)"
done
