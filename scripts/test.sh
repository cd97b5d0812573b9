#!/usr/bin/env bash
# Installs what is needed, then runs every check and test: gofmt, go vet,
# go mod tidy, go test -race (which also runs the fuzz targets' seed
# corpora and the OCR judge benchmark set). Tests start and stop their own
# Xvfb servers, daemons and helpers.
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
echo "== go test -race"
go test -race -count=1 -timeout 40m ./... 2>&1 | tee /tmp/acu-test.log
