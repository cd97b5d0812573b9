#!/bin/bash
# Agent loop benchmarks: the engine's overhead per turn without the model at
# 1280x720 (execute, capture, crop, annotate, encode, log), its stages, and
# the seed's design measured in real headless Chromium (raw PNG as base64 to
# the page, canvas compositing, PNG back). The Go benchmarks start their own
# Xvfb and Chromium and stop them.
#
# Usage: bash bench/agent/run.sh        (COUNT=5 BENCHTIME=30x)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
COUNT=${COUNT:-5}
BENCHTIME=${BENCHTIME:-30x}
cd "$REPO"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
go test -run '^$' -bench 'Turn|Stage|SeedPanelRoundTrip|PNG' -benchtime="$BENCHTIME" -count="$COUNT" ./internal/agent
go test -run '^$' -bench 'Draw' -benchtime="$BENCHTIME" -count="$COUNT" ./internal/annotate
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
