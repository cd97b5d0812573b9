package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// acu's layers, lowest first (docs/ARCHITECTURE.md has the same table).
// Code, tests included, may import a package of a lower layer. An import
// within one layer, or from a test to a higher layer, is allowed only when
// sameLayer or testOnly names it with its reason.
const (
	layerLeaves    = iota // values and pure code: no import of acu, no I/O
	layerProtocols        // model clients, vendor dialects, config, auth defences, detached servers' records: on leaves only, no desktop
	layerClients          // the MCP server: tools over the API client, nothing of the daemon
	layerSystem           // one resource each: the X connection, Xvfb, the store, Tesseract, run directories, the launcher
	layerDevices          // on the X connection: input, capture, AT-SPI, clipboard
	layerGate             // the one place every effect on the desktop passes
	layerHelpers          // test helpers that start real parts (imported by tests only)
	layerEngines          // runs, judge, notify, element map
	layerFeatures         // waits, actions, agents, relay, live, record, task benchmark
	layerSurfaces         // the HTTP server
	layerBinary           // cmd/acu and the benchmarks
)

// layers places every package of the module. A package missing here fails
// the test, so a new one is placed deliberately; a name here that is no
// package fails it too.
var layers = map[string]int{
	"internal/api": layerLeaves, "internal/frame": layerLeaves, "internal/annotate": layerLeaves, "internal/secret": layerLeaves,
	"internal/leakcheck": layerLeaves, "internal/privacy": layerLeaves,

	"internal/llm": layerProtocols, "internal/config": layerProtocols, "internal/guard": layerProtocols,
	"internal/dialect": layerProtocols, "internal/dialect/anthropic": layerProtocols, "internal/dialect/openai": layerProtocols,
	"internal/dialect/uitars": layerProtocols,
	"internal/daemonproc":     layerProtocols, // the records and stopping of detached servers, for xvfb and wayland/sway

	"internal/mcpserver": layerClients,

	"internal/display": layerSystem, "internal/xvfb": layerSystem, "internal/store": layerSystem, "internal/ocr": layerSystem,
	"internal/runlog": layerSystem, "internal/launch": layerSystem,
	"internal/wayland": layerSystem, "internal/wayland/sway": layerSystem,

	"internal/input": layerDevices, "internal/capture": layerDevices, "internal/atspi": layerDevices, "internal/clipboard": layerDevices,
	"internal/wayland/screencopy": layerDevices, "internal/wayland/virtual": layerDevices,
	"internal/wayland/toplevel": layerDevices, "internal/wayland/datacontrol": layerDevices,
	"internal/wayland/snapshot": layerDevices, "internal/wayland/frames": layerDevices,
	"internal/wayland/idle":   layerDevices,
	"internal/wayland/portal": layerDevices, // GNOME's mutter over D-Bus (remote desktop, screen cast, the portal)

	"internal/wayland/mutterframes": layerDevices, // GNOME's screen, a mutter screen cast read by GStreamer

	"internal/testx": layerHelpers, "internal/testfs": layerHelpers, "internal/pgtest": layerHelpers, "internal/llm/llmtest": layerHelpers,
	"internal/ocr/ocrtest": layerHelpers, "internal/atspi/atspitest": layerHelpers, "internal/guard/guardtest": layerHelpers,
	"internal/wayland/waylandtest": layerHelpers, "internal/dialect/dialecttest": layerHelpers,
	"internal/record/recordtest": layerHelpers,

	"internal/runs": layerEngines, "internal/judge": layerEngines, "internal/notify": layerEngines, "internal/elements": layerEngines,
	"internal/a11yjudge": layerEngines, "internal/tasklog": layerEngines,

	"internal/smartwait": layerFeatures, "internal/actions": layerFeatures, "internal/computer": layerFeatures,
	"internal/gate": layerGate, "internal/relay": layerFeatures, "internal/sense": layerFeatures, "internal/agent": layerFeatures,
	"internal/orchestrator": layerFeatures, "internal/live": layerFeatures, "internal/record": layerFeatures,
	"internal/taskbench": layerFeatures, "internal/session": layerFeatures, "internal/handoff": layerFeatures,

	"internal/server": layerSurfaces,

	"cmd/acu": layerBinary, "bench/internal/rig": layerBinary, "bench/actions": layerBinary, "bench/computer": layerBinary,
	"bench/fleet": layerBinary, "bench/live": layerBinary, "bench/pipeline": layerBinary, "bench/relay": layerBinary,
	"bench/smartwait": layerBinary, "bench/wayland": layerBinary, "bench/judgeset": layerBinary, "scripts/liveview": layerBinary, // judgeset draws the OCR judge's labelled set
}

// testHelpers are imported by tests only: any package's tests may import
// one (Go refuses the cycles), code that is not itself a helper may not.
var testHelpers = []string{
	"internal/leakcheck", "internal/testx", "internal/testfs", "internal/pgtest", "internal/llm/llmtest",
	"internal/ocr/ocrtest", "internal/atspi/atspitest", "internal/guard/guardtest", "internal/wayland/waylandtest",
	"internal/dialect/dialecttest", "internal/record/recordtest", "bench/internal/rig", // the benchmarks' shared set-up
}

// depEdges are allowed imports that the ranks alone would refuse.
type depEdges struct {
	from string
	to   []string
	why  string
}

// sameLayer lists the imports, by code or tests, between packages of one
// layer.
var sameLayer = []depEdges{
	{"internal/dialect/anthropic", []string{"internal/dialect"}, "a vendor dialect builds on the shared Plan, Outcome and error types"},
	{"internal/dialect/openai", []string{"internal/dialect"}, "a vendor dialect builds on the shared Plan, Outcome and error types"},
	{"internal/dialect/uitars", []string{"internal/dialect"}, "a vendor dialect builds on the shared Plan, Outcome and error types"},
	{"internal/dialect", []string{"internal/llm"}, "a vendor's conversation makes its model calls through the model client"},
	{"internal/dialect/anthropic", []string{"internal/llm"}, "a vendor's conversation makes its model calls through the model client"},
	{"internal/dialect/openai", []string{"internal/llm"}, "a vendor's conversation makes its model calls through the model client"},
	{"internal/dialect/uitars", []string{"internal/llm"}, "a vendor's conversation makes its model calls through the model client"},
	{"internal/computer", []string{"internal/session"}, "the computer-use loop runs in the session harness"},
	{"internal/agent", []string{"internal/session"}, "the desktop agent loop runs in the session harness"},
	{"internal/orchestrator", []string{"internal/session"}, "the task loop runs in the session harness"},
	{"internal/wayland/sway", []string{"internal/wayland"}, "start-up waits until the compositor's socket answers a registry round trip"},
	{"internal/wayland/snapshot", []string{"internal/wayland/screencopy", "internal/wayland/toplevel"}, "a one-shot Wayland frame is a capture with window rectangles for targets and exclusions, as capture.Once on X11"},
	{"internal/wayland/frames", []string{"internal/capture", "internal/wayland/screencopy", "internal/wayland/toplevel"}, "the Wayland capture hub takes capture's target types, so the wait engine drives either hub"},
	{"internal/wayland/mutterframes", []string{"internal/capture"}, "the GNOME capture hub takes capture's target types, so the wait engine drives it as the others"},
	{"internal/atspi/atspitest", []string{"internal/testx", "internal/wayland/waylandtest"}, "the AT-SPI fixture app runs on a testx display, or on a waylandtest sway"},
	{"internal/actions", []string{"internal/smartwait"}, "an action request settles through the smart-wait engine"},
}

// testOnly lists the imports that only tests may make, to a package of
// the same or a higher layer.
var testOnly = []depEdges{
	{"internal/display", []string{"internal/xvfb"}, "display's tests start their own Xvfb"},
	{"internal/dialect", []string{"internal/actions"}, "the fidelity test holds each dialect's screenshot geometry to the one actions uses"},
	{"internal/mcpserver", []string{"internal/actions", "internal/capture", "internal/computer", "internal/elements",
		"internal/ocr", "internal/orchestrator", "internal/runs", "internal/smartwait", "internal/store", "internal/xvfb",
		"internal/gate", "internal/server"},
		"the tools are tested on the real engines in-process, not on a mock of the daemon (the scope test on a real server and gate)"},
	{"internal/sense", []string{"internal/relay"}, "the sense client is tested against a real relay"},
	{"internal/orchestrator", []string{"internal/smartwait"}, "pointer steps are checked by real smart waits"},
	{"internal/computer", []string{"internal/actions", "internal/smartwait"},
		"every vendor action is checked on the real action service on a real display"},
	{"internal/wayland/virtual", []string{"internal/atspi"}, "input tests find a GTK form's elements in its accessible tree before clicking them"},
	{"internal/wayland/toplevel", []string{"internal/wayland/screencopy"}, "window tests check each rectangle holds what its app drew on the real screen"},
	{"internal/wayland/mutterframes", []string{"internal/wayland/portal"}, "the GNOME hub's tests start a headless mutter (portal.StartHeadless)"},
	{"internal/wayland/idle", []string{"internal/wayland/virtual"}, "the user-first tests drive acu's own virtual devices and another client's, and count what the watch takes for the user's"},
}

const module = "github.com/acu-dev/acu/"

// TestImportLayers checks every import of the module's code and tests
// against layers, testHelpers, sameLayer and testOnly.
func TestImportLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-f",
		`{{.ImportPath}}|{{join .Imports " "}}|{{join .TestImports " "}} {{join .XTestImports " "}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]bool{}
	used := map[string]bool{}
	allowed := func(list []depEdges, from, to string) bool {
		for _, e := range list {
			if e.from == from && slices.Contains(e.to, to) {
				used[from+" -> "+to] = true
				return true
			}
		}
		return false
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		pkg := strings.TrimPrefix(f[0], module)
		pkgs[pkg] = true
		rank, ok := layers[pkg]
		if !ok {
			t.Errorf("package %s has no layer: add it to layers in cmd/acu/deps_test.go and to docs/ARCHITECTURE.md", pkg)
			continue
		}
		for i, imports := range f[1:] {
			test := i == 1
			for _, imp := range strings.Fields(imports) {
				dep, ok := strings.CutPrefix(imp, module)
				if !ok || dep == pkg {
					continue
				}
				dr, ok := layers[dep]
				if !ok {
					continue // reported as a package of its own
				}
				helper := slices.Contains(testHelpers, dep)
				switch {
				case helper && !test && !slices.Contains(testHelpers, pkg):
					t.Errorf("%s imports the test helper %s: only tests may", pkg, dep)
				case helper && test, dr < rank, dr == rank && allowed(sameLayer, pkg, dep), test && allowed(testOnly, pkg, dep):
				case test:
					t.Errorf("a test of %s (layer %d) imports %s (layer %d): list the edge with its reason in testOnly, or test through a lower layer", pkg, rank, dep, dr)
				case dr == rank:
					t.Errorf("%s imports %s of its own layer (%d): list the edge with its reason in sameLayer, or move a package", pkg, dep, rank)
				default:
					t.Errorf("%s (layer %d) imports %s (layer %d): imports must point down", pkg, rank, dep, dr)
				}
			}
		}
	}
	for pkg := range layers {
		if !pkgs[pkg] {
			t.Errorf("layers names %s, which is no package: remove it", pkg)
		}
	}
	for _, list := range [][]depEdges{sameLayer, testOnly} {
		for _, e := range list {
			for _, to := range e.to {
				if !used[e.from+" -> "+to] {
					t.Errorf("the allowed edge %s -> %s (%s) is not used: remove it", e.from, to, e.why)
				}
			}
		}
	}
}
