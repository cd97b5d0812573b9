package atspi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
)

// TestFixtureCommands runs every command of atspitest's fixture in both
// toolkits and reads their effects back through AT-SPI: each command
// is applied (no Python error), and the widgets show what was asked.
func TestFixtureCommands(t *testing.T) {
	for _, toolkit := range []string{atspitest.GTK, atspitest.Qt} {
		t.Run(toolkit, func(t *testing.T) {
			c, fx := fixture(t, toolkit)
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			if _, err := atspitest.WaitApp(ctx, c, "fixture"); err != nil {
				t.Fatal(err)
			}
			do := func(cmds ...string) []atspi.Node {
				t.Helper()
				for _, cmd := range cmds {
					if _, err := fx.Do(ctx, cmd); err != nil {
						t.Fatal(err)
					}
				}
				nodes, err := c.Tree(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return nodes
			}
			nodes := do("progress 0.5", "enable", "check", "text hello", "focus", "row one", "row two", "dialog Export")
			if n, ok := find(nodes, "push button", "Install"); !ok || !n.States.Has(atspi.StateSensitive) {
				t.Errorf("after enable: Install = %+v, %v; want sensitive", n, ok)
			}
			if n, ok := find(nodes, "check box", "Remember me"); !ok || !n.States.Has(atspi.StateChecked) {
				t.Errorf("after check: Remember me = %+v, %v; want checked", n, ok)
			}
			if n, ok := named(nodes, "Name"); !ok || n.Text != "hello" || !n.States.Has(atspi.StateFocused) {
				t.Errorf("after text hello, focus: Name = %+v, %v; want the text hello, focused", n, ok)
			}
			if n, ok := find(nodes, "progress bar", "Download"); !ok || n.Max == 0 || n.Value/n.Max != 0.5 {
				t.Errorf("after progress 0.5: Download = %+v, %v; want half way", n, ok)
			}
			if _, ok := find(nodes, "dialog", "Export"); !ok {
				t.Errorf("after dialog Export: no dialog named Export")
			}
			nodes = do("close Export", "disable", "uncheck")
			if n, ok := find(nodes, "push button", "Install"); !ok || n.States.Has(atspi.StateSensitive) {
				t.Errorf("after disable: Install = %+v, %v; want not sensitive", n, ok)
			}
			if n, ok := find(nodes, "check box", "Remember me"); !ok || n.States.Has(atspi.StateChecked) {
				t.Errorf("after uncheck: Remember me = %+v, %v; want not checked", n, ok)
			}
			if _, ok := find(nodes, "dialog", "Export"); ok {
				t.Errorf("after close Export: the dialog Export is still there")
			}
			if _, err := fx.Do(ctx, "quit"); err != nil {
				t.Fatal(err)
			}
			if _, err := fx.Do(ctx, "enable"); err == nil {
				t.Errorf("a command after quit was applied, want the fixture exited")
			}
			if strings.Contains(fx.Stderr(), "Traceback") {
				t.Errorf("the fixture failed a command:\n%s", fx.Stderr())
			}
		})
	}
}

func named(nodes []atspi.Node, name string) (atspi.Node, bool) {
	for _, n := range nodes {
		if n.Name == name {
			return n, true
		}
	}
	return atspi.Node{}, false
}
