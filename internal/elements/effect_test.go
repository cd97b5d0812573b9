package elements_test

import (
	"context"
	"regexp"
	"testing"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/gate"
)

// TestEffectsPassTheGate: with Options.Effect set to the gate's
// Hands.Element, an accessibility effect on a denied application's element
// is refused, final (no retry, no pointer click instead), and the entry
// keeps its text.
func TestEffectsPassTheGate(t *testing.T) {
	d := newDesktop(t)
	d.zenity(t, "--entry", "--title=Acu Entry", "--text=Your name:")
	g := gate.New(gate.Options{DefaultDisplay: d.dpy, Policy: gate.Policy{Deny: []*regexp.Regexp{regexp.MustCompile(`(?i)zenity|acu entry`)}}})
	t.Cleanup(g.Close)
	h, err := g.Hands(t.Context(), d.dpy)
	if err != nil {
		t.Fatal(err)
	}
	x, err := elements.New(elements.Options{Display: d.dpy, Capture: d.hub, Tree: d.tree, Input: h.Device(),
		Effect: func(ctx context.Context, el *elements.Element, kind string, fn func(context.Context) error) error {
			return h.Element(ctx, el.ID, el.App, el.Window, kind, fn)
		}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := x.Extract(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	r, err := x.Execute(t.Context(), m, elements.Step{Kind: elements.StepType, Target: "txt_1", Text: "Mallory"})
	if rf, ok := gate.IsRefused(err); !ok || rf.Code != api.CodeWindowDenied {
		t.Fatalf("typing into the denied dialog: %v, want a window_denied refusal", err)
	}
	if r.Attempts != 1 {
		t.Errorf("attempts = %d: a refusal is final", r.Attempts)
	}
	after, err := x.Extract(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := after.Get("txt_1"); ok && e.Value != "" {
		t.Errorf("the entry holds %q after a refused step", e.Value)
	}
}
