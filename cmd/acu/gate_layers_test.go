package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// effectPackages send effects to the desktop: only the gate imports them
// (docs/security.md). A package that needs one of their types uses the
// gate's names for it.
var effectPackages = []string{"internal/input", "internal/launch", "internal/clipboard",
	"internal/wayland/virtual", "internal/wayland/datacontrol", // Wayland's input device and clipboard (docs/wayland.md)
	"internal/wayland/portal"} // GNOME's remote-desktop input (mutter's D-Bus API)

// effectImporters may import them anyway, each for a stated reason.
var effectImporters = map[string]string{
	"internal/gate":            "the gate itself",
	"internal/atspi/atspitest": "a test helper: it types into test apps as a user would, with a device of its own",
}

// effectCalls are the X requests and display methods that change the
// desktop; only the packages of effectCallers may make them.
var effectCalls = map[string]bool{
	// display.Conn's window operations.
	"FocusWindow": true, "CloseWindow": true, "MoveResize": true, "Minimize": true, "Maximize": true,
	// Raw X requests with an effect on other clients' windows or input.
	"ConfigureWindow": true, "ConfigureWindowChecked": true, "SetInputFocus": true, "SetInputFocusChecked": true,
	"KillClient": true, "KillClientChecked": true, "WarpPointer": true, "WarpPointerChecked": true,
	"FakeInput": true, "FakeInputChecked": true, "SetSelectionOwner": true, "SetSelectionOwnerChecked": true,
	"SendEvent": true, "SendEventChecked": true, "DestroyWindow": true, "UnmapWindow": true,
	// Accessibility effects (atspi.Client).
	"DoAction": true, "SetText": true, "GrabFocus": true,
}

// effectCallers may make them, each for a stated reason.
var effectCallers = map[string]string{
	"internal/gate":             "the gate",
	"internal/display":          "defines the window operations the gate calls",
	"internal/input":            "the XTest device the gate holds",
	"internal/clipboard":        "the selection owner the gate holds",
	"internal/capture":          "SendEvent to its own marker window, to flush damage events",
	"internal/testx":            "test windows and their own events",
	"bench/pipeline":            "destroys its own benchmark window",
	"bench/judgeset":            "takes the focus from an app on the Xvfb it started to draw the labelled set (no acu display)",
	"internal/atspi":            "defines the accessibility effects",
	"internal/elements":         "runs its accessibility effects inside Options.Effect, which the wiring sets to the gate's Hands.Element",
	"internal/wayland/toplevel": "defines the Wayland window operations (toplevel protocol, sway's IPC) for the gate to call",
	"internal/xvfb":             "starts the display and its window manager: a hidden probe window of its own asks the manager for frame extents and is destroyed, so --wm returns once windows are managed",
}

// TestOnlyTheGateActs: no package above the gate imports the input
// device, the launcher or the clipboard owner, and none makes an X request
// or display call that changes the desktop, so every effect passes the
// gate's policy and audit. Test files may (they play the user).
func TestOnlyTheGateActs(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{.Dir}}|{{join .Imports \" \"}}|{{join .GoFiles \" \"}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	fset := token.NewFileSet()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "|", 4)
		pkg, dir := strings.TrimPrefix(f[0], module), f[1]
		for _, imp := range strings.Fields(f[2]) {
			dep := strings.TrimPrefix(imp, module)
			for _, ep := range effectPackages {
				if dep == ep {
					if _, ok := effectImporters[pkg]; !ok {
						t.Errorf("%s imports %s: effects go through internal/gate (use its names: gate.Action, gate.Hands, …)", pkg, dep)
					}
				}
			}
		}
		if _, ok := effectCallers[pkg]; ok {
			continue
		}
		for _, name := range strings.Fields(f[3]) {
			file, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && effectCalls[sel.Sel.Name] {
					t.Errorf("%s: %s calls %s: desktop effects go through internal/gate", fset.Position(call.Pos()), pkg, sel.Sel.Name)
				}
				return true
			})
		}
	}
}
