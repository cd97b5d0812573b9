package orchestrator_test

import (
	"context"
	"image"
	"testing"

	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/orchestrator"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

func TestWindowArrangerSplit(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{})
	testx.NewWindow(t, dpy, testx.Spec{Title: "Left Notes", Class: "Notes", X: 400, Y: 300, W: 200, H: 150})
	testx.NewWindow(t, dpy, testx.Spec{Title: "Right Sheet", Class: "Sheet", X: 10, Y: 10, W: 300, H: 100})
	conn, err := display.Open(context.Background(), dpy, display.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	g := gate.New(gate.Options{DefaultDisplay: dpy})
	t.Cleanup(g.Close)
	a, err := orchestrator.NewWindowArranger(t.Context(), g, dpy)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Arrange(t.Context(), [2]string{"left notes", "sheet"}); err != nil {
		t.Fatal(err)
	}
	ws, err := conn.Windows(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	w, h := int(conn.Screen.Width), int(conn.Screen.Height)
	want := map[string]image.Rectangle{"Left Notes": image.Rect(0, 0, w/2, h), "Right Sheet": image.Rect(w/2, 0, w, h)}
	for _, win := range ws {
		if r, ok := want[win.Title]; ok {
			if win.Rect() != r {
				t.Errorf("%s at %v, want %v", win.Title, win.Rect(), r)
			}
			delete(want, win.Title)
		}
	}
	if len(want) != 0 {
		t.Errorf("windows not found: %v", want)
	}
	if err := a.Arrange(t.Context(), [2]string{"left notes", "no such window"}); err == nil {
		t.Error("Arrange with a missing window = nil error")
	}
}
