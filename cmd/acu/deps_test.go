package main

import (
	"os/exec"
	"strings"
	"testing"
)

// layers ranks acu's packages: imports may only point to the same or a
// lower rank (docs/ARCHITECTURE.md). Packages not listed fail the test, so
// a new package has to be placed deliberately.
var layers = map[string]int{
	// Leaves: no I/O of their own.
	"internal/secret": 0, "internal/api": 0, "internal/frame": 0, "internal/llm": 0,
	"internal/dialect": 0, "internal/dialect/anthropic": 0, "internal/dialect/openai": 0, "internal/dialect/uitars": 0,
	"internal/computer": 3,
	"internal/annotate": 0, "internal/guard": 0, "internal/config": 0, "internal/leakcheck": 0,
	// Devices, storage and their test helpers.
	"internal/display": 1, "internal/xvfb": 1, "internal/input": 1, "internal/ocr": 1,
	"internal/store": 1, "internal/atspi": 1, "internal/runlog": 1, "internal/capture": 1,
	"internal/clipboard": 1, "internal/launch": 1,
	"internal/testx": 1, "internal/testfs": 1, "internal/pgtest": 1, "internal/llm/llmtest": 1, "internal/ocr/ocrtest": 1, "internal/atspi/atspitest": 1,
	"internal/guard/guardtest": 1,
	// Engines.
	"internal/runs": 2, "internal/judge": 2, "internal/notify": 2, "internal/elements": 2,
	// Features.
	"internal/smartwait": 3, "internal/relay": 3, "internal/sense": 3, "internal/agent": 3, "internal/orchestrator": 3, "internal/taskbench": 3, "internal/actions": 3,
	"internal/desktop": 3,
	"internal/live":    3, "internal/record": 3,
	// Surfaces.
	"internal/server": 4, "internal/mcpserver": 4,
	// The binary and the benchmarks.
	"cmd/acu": 5, "bench/pipeline": 5, "bench/relay": 5, "bench/smartwait": 5, "bench/agent": 5, "bench/actions": 5, "bench/live": 5, "bench/computer": 5, "bench/fleet": 5,
	"bench/internal/rig": 5, // the benchmarks' shared set-up
	"scripts/liveview":   5, // scripts/container-test.sh: the live view in Chromium
}

const module = "github.com/acu-dev/acu/"

func TestImportLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], module)
		rank, ok := layers[pkg]
		if !ok {
			t.Errorf("package %s has no layer: add it to layers in cmd/acu/deps_test.go and docs/ARCHITECTURE.md", pkg)
			continue
		}
		for _, imp := range f[1:] {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			dep := strings.TrimPrefix(imp, module)
			if dr, ok := layers[dep]; ok && dr > rank {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports must point down", pkg, rank, dep, dr)
			}
		}
	}
}
