#!/usr/bin/env bash
# Installs what is needed, then runs every check and test: gofmt, go vet,
# go mod tidy, a build and frame's and capture's tests without cgo, the
# AVX-512 hash against the Go one, 100,000 fuzzed inputs per parser of outside
# input, go test -race (which also runs the fuzz targets' seed
# corpora and the OCR judge benchmark set), then the store's, runs' and
# notify's tests again on PostgreSQL, OpenClaw end to end, and the
# container release check with Podman, and with Docker where Debian's
# docker.io is installed (ACU_SKIP_CONTAINERS=1 skips both).
# Tests start and stop their own Xvfb servers, headless sway compositors,
# PostgreSQL servers, daemons, containers and helpers.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
export PATH=/usr/local/go/bin:$PATH:$(go env GOPATH 2>/dev/null)/bin
export GOFLAGS=${GOFLAGS:--buildvcs=false}

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then echo "gofmt would change: $unformatted"; exit 1; fi
echo "== go mod tidy -diff"
go mod tidy -diff
echo "== staticcheck"
GOFLAGS= go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
"$(go env GOPATH)/bin/staticcheck" ./...
echo "== go vet"
go vet ./...
echo "== the Kubernetes example decodes strictly into Kubernetes' own types (container/k8scheck)"
(cd container/k8scheck && go mod tidy -diff && go vet . && go test -count=1 . && go run . ../kubernetes.yaml)
echo "== compose.yaml loads as docker compose v2 loads it, and keeps the fleet's promises (container/composecheck)"
(cd container/composecheck && go mod tidy -diff && go vet . && go test -count=1 . && go run . ../../compose.yaml)
echo "== without cgo: go build, and the pure-Go JPEG, resize and hash of frame and capture"
CGO_ENABLED=0 go build ./...
CGO_ENABLED=0 go test -count=1 ./internal/frame/ ./internal/capture/
echo "== the AVX-512 hash against the Go one, every case (skips on a CPU without AVX-512)"
go test -count=1 -v -run '^TestHashAVX512MatchesGo$' ./internal/frame/ | grep -E '^(--- |ok|FAIL)|SKIP|skip'
echo "== fuzz the parsers of model output and of the event stream, 100,000 inputs each"
# A count, not a duration: Go 1.26's fuzz coordinator can report a false
# "context deadline exceeded" when a duration ends on a loaded machine
# (golang/go#75804, fixed in Go 1.27); a count has no deadline to race.
# Longer on demand: go test -run '^$' -fuzz '^FuzzDecode$' -fuzztime 10m ./internal/dialect/openai/
go test -run '^$' -fuzz '^FuzzDecode$' -fuzztime 100000x ./internal/dialect/anthropic/
go test -run '^$' -fuzz '^FuzzDecode$' -fuzztime 100000x ./internal/dialect/openai/
go test -run '^$' -fuzz '^FuzzReadSSE$' -fuzztime 100000x ./internal/api/
go test -run '^$' -fuzz '^FuzzDispatch$' -fuzztime 100000x ./internal/wayland/
echo "== go test -race"
# The pinned MCP clients (clients/, installed above) must run, not skip.
export ACU_REQUIRE_CLIENTS=1
# The Wayland backend's tests (sway, phoc, foot, grim, wl-clipboard, installed
# above) must run, not skip.
export ACU_REQUIRE_WAYLAND=1
# The GNOME path's tests (headless mutter, PipeWire, GStreamer's
# pipewiresrc, xdg-desktop-portal: docs/wayland.md) must run, not skip.
export ACU_REQUIRE_PORTAL=1
go test -race -count=1 -timeout 40m ./... 2>&1 | tee /tmp/acu-test.log
echo "== go test -race on PostgreSQL (store, runs, notify)"
# The same tests once more with the store on a real PostgreSQL 15 server
# (internal/pgtest starts one: initdb in a temporary directory, a free
# port, the postgres user).
ACU_TEST_ENGINE=postgres go test -race -count=1 -timeout 20m ./internal/store/ ./internal/runs/ ./internal/notify/ 2>&1 | tee -a /tmp/acu-test.log
echo "== OpenClaw end to end (docs/clients.md)"
# OpenClaw's own MCP client calls smart_wait through acu mcp; the wait
# resolves on a real xterm and OpenClaw's agent is woken with the exact
# message, with a detached daemon and a systemd-style one.
bash scripts/openclaw-e2e.sh 2>&1 | tee -a /tmp/acu-test.log
if [ "${ACU_SKIP_CONTAINERS:-0}" = 1 ]; then
	echo "== the container release check: skipped (ACU_SKIP_CONTAINERS=1)"
else
	echo "== the container release check with Podman (docs/containers.md)"
	# Builds the desktop image from Debian's packages (no registry), runs one
	# desktop and the compose fleet of 3 through their published ports, and
	# removes everything it made.
	bash scripts/container-test.sh 2>&1 | tee -a /tmp/acu-test.log
	# The same with Docker where Debian's docker.io and docker-compose are
	# installed (a private engine when none answers; about 2 min with the
	# images built); ACU_SKIP_DOCKER=1 skips it.
	if [ "${ACU_SKIP_DOCKER:-0}" = 1 ]; then
		echo "== the container release check with Docker: skipped (ACU_SKIP_DOCKER=1)"
	elif command -v dockerd >/dev/null 2>&1 && command -v docker-compose >/dev/null 2>&1; then
		echo "== the container release check with Docker (docs/containers.md)"
		CONTAINER_ENGINE=docker bash scripts/container-test.sh 2>&1 | tee -a /tmp/acu-test.log
	else
		echo "== the container release check with Docker: skipped (apt-get install docker.io docker-compose to run it)"
	fi
fi
