package elements_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/testx"
)

// slowWM is the task engine's pointer device with a window manager that
// answers late: openbox is stopped before each pointer action and let run
// again once the action returned, so its click-to-focus grab (a
// synchronous passive grab of the buttons on every client window) holds
// the pointer frozen across the whole click and replays it afterwards, as
// a loaded machine does now and then.
type slowWM struct {
	gate.Device
	wm *os.Process
}

func (d slowWM) Do(ctx context.Context, a gate.Action) error {
	if err := d.wm.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	defer d.wm.Signal(syscall.SIGCONT)
	return d.Device.Do(ctx, a)
}

// TestClickThenKeyNeverRefusesItself is lxterminal-settings' failing
// sequence on a GTK notebook under openbox: a click on a tab by element id
// (a pointer click: the tab has no accessible action) then, right after, a
// key step into an entry of the page, through the gate with the user-first
// pause on, as the task engine runs them. The window manager's grab
// delivers acu's release after acu's input ended; acu must still know it
// as its own: no step is refused as the user's.
func TestClickThenKeyNeverRefusesItself(t *testing.T) {
	d := newDesktop(t)
	wm := testx.StartWM(t, d.dpy)
	script, err := filepath.Abs("testdata/gtknotebook.py")
	if err != nil {
		t.Fatal(err)
	}
	app := d.base.Session.StartApp(t, atspitest.Python(), script, "Acu Preferences")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, err := atspitest.WaitApp(ctx, d.tree, "acu-gtknotebook"); err != nil {
		t.Fatalf("%v; stderr: %s", err, app.Stderr())
	}
	g := gate.New(gate.Options{DefaultDisplay: d.dpy, Policy: gate.Policy{PauseOnUser: true, Quiet: time.Minute}})
	t.Cleanup(g.Close)
	h, err := g.Hands(t.Context(), d.dpy)
	if err != nil {
		t.Fatal(err)
	}
	x, err := elements.New(elements.Options{Display: d.dpy, Capture: d.hub, Tree: d.tree, Input: slowWM{h.Device(), wm},
		Effect: func(ctx context.Context, el *elements.Element, kind string, fn func(context.Context) error) error {
			return h.Element(ctx, el.ID, el.App, el.Window, kind, fn)
		}})
	if err != nil {
		t.Fatal(err)
	}
	click := func(i int, tab string) {
		t.Helper()
		m, err := x.Extract(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		r, err := x.Execute(t.Context(), m, elements.Step{Kind: elements.StepClick, Target: mustEl(t, m, "tab", tab).ID})
		if err != nil {
			t.Fatalf("round %d: click the %s tab: %v", i, tab, err)
		}
		if r.Via != elements.ViaPointer {
			t.Fatalf("round %d: the %s tab was clicked via %s: want a pointer click (the case of the grab)", i, tab, r.Via)
		}
	}
	const rounds = 5
	for i := range rounds {
		click(i, "Display")
		m, err := x.Extract(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		entry := mustEl(t, m, "input", "Scrollback lines")
		want := strings.Repeat("5", i+1)
		keys := "ctrl+a " + strings.Join(strings.Split(want, ""), " ")
		r, err := x.Execute(t.Context(), m, elements.Step{Kind: elements.StepKey, Target: entry.ID, Text: keys})
		if rf, ok := gate.IsRefused(err); ok {
			t.Fatalf("round %d: the key step right after acu's own click was refused: %s", i, rf.Message)
		} else if err != nil {
			t.Fatalf("round %d: key step: %v", i, err)
		}
		if e, ok := r.After.Get(entry.ID); !ok || e.Value != want {
			t.Errorf("round %d: the entry holds %q after %q, want %q", i, e.Value, keys, want)
		}
		click(i, "Style")
	}
}
