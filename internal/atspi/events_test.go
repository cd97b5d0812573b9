package atspi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

func fixture(t *testing.T, toolkit string) (*atspi.Client, *atspitest.Fixture) {
	t.Helper()
	dpy := testx.StartXvfb(t, xvfb.Options{})
	s := atspitest.Start(t, dpy)
	c, err := atspi.Connect(t.Context(), atspi.Options{SessionBus: s.SessionBus})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, s.StartFixture(t, toolkit, "Acu Fixture")
}

// Listen delivers the events applications send once a client registered
// for them: a progress bar's value, a button's state, a new window.
func TestListenEvents(t *testing.T) {
	c, fx := fixture(t, atspitest.GTK)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	events, err := c.Listen(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := atspitest.WaitApp(ctx, c, "fixture")
	if err != nil {
		t.Fatal(err)
	}
	bar, ok := find(nodes, "progress bar", "Download")
	if !ok || !bar.Ifaces.Has(atspi.IfValue) || bar.Max != 1 {
		t.Fatalf("progress bar = %+v, want one with a Value of range 0..1", bar)
	}
	for _, step := range []struct {
		cmd, kind string
		from      atspi.Ref
	}{
		{"progress 0.5", "object:property-change:accessible-value", bar.Ref},
		{"enable", "object:state-changed:sensitive", atspi.Ref{}},
		{"dialog Export", "window:create", atspi.Ref{}},
	} {
		if _, err := fx.Do(ctx, step.cmd); err != nil {
			t.Fatal(err)
		}
		for seen := false; !seen; {
			select {
			case ev := <-events:
				seen = ev.Kind == step.kind && (step.from.IsNull() || ev.Source == step.from)
			case <-ctx.Done():
				t.Fatalf("%s: no %s event", step.cmd, step.kind)
			}
		}
	}
	n, err := c.Read(ctx, bar.Ref)
	if err != nil || n.Value != 0.5 {
		t.Errorf("progress bar after 'progress 0.5' = %v, %v; want 0.5", n.Value, err)
	}
	cancel()
	for range events { // closed when ctx ends
	}
}

// A Qt application is walked without crashing it: Qt 5 dies on
// Properties.GetAll, so its objects are read one property at a time, and
// its top-level widget (role filler) counts as its window.
func TestTreeQt(t *testing.T) {
	c, fx := fixture(t, atspitest.Qt)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	nodes, err := atspitest.WaitApp(ctx, c, "fixture")
	if err != nil {
		t.Fatalf("%v (stderr: %s)", err, fx.Stderr())
	}
	for _, n := range nodes {
		if n.Depth == 1 && n.Window != "Acu Fixture" {
			t.Errorf("top-level %s %q: window %q, want its own name", n.Role, n.Name, n.Window)
		}
	}
	for _, tc := range []struct{ role, name string }{{"push button", "Install"}, {"check box", "Remember me"}, {"progress bar", "Download"}, {"list", "Files"}} {
		n, ok := find(nodes, tc.role, tc.name)
		if !ok {
			t.Errorf("no %s %q in %d nodes", tc.role, tc.name, len(nodes))
			continue
		}
		if n.Window != "Acu Fixture" {
			t.Errorf("%s %q: window %q, want Acu Fixture", tc.role, tc.name, n.Window)
		}
	}
	if _, err := fx.Do(ctx, "progress 0.25"); err != nil {
		t.Fatal(err)
	}
	bar, _ := find(nodes, "progress bar", "Download")
	if n, err := c.Read(ctx, bar.Ref); err != nil || n.Value != 25 || n.Max != 100 {
		t.Errorf("Qt progress bar = %v of %v, %v; want 25 of 100", n.Value, n.Max, err)
	}
	// Still alive: a second walk answers.
	if _, err := c.Tree(ctx); err != nil || strings.Contains(fx.Stderr(), "Segmentation") {
		t.Errorf("second walk: %v (stderr: %s)", err, fx.Stderr())
	}
	if _, err := fx.Do(ctx, "check"); err != nil {
		t.Errorf("the Qt fixture died: %v", err)
	}
}
