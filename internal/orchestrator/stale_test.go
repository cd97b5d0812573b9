package orchestrator_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/ocr"
	"github.com/acu-dev/acu/internal/orchestrator"
	"github.com/acu-dev/acu/internal/runs"
)

// gtkPython is a Python 3 with PyGObject and GTK 3's introspection data
// (python3-gi, gir1.2-gtk-3.0): Debian's, which a python3 earlier on PATH
// (pyenv's) may lack.
func gtkPython(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(p, "-c", `import gi; gi.require_version("Gtk", "3.0"); from gi.repository import Gtk`).Run() == nil {
			return p
		}
	}
	t.Fatal("python3 with GTK 3 (python3-gi, gir1.2-gtk-3.0: scripts/install-deps.sh installs them) is needed")
	return ""
}

// TestClickOnTheControlNotWhereItWas: a real GTK window's buttons move
// while the model thinks (the test signals the app between reading the
// prompt's element map and answering). A pointer step on Alpha must land
// on Alpha where it is now, never on Bravo, which took its old place; an
// Alpha that vanished makes the step stale, never ok, and nothing is
// clicked. Both through the accessibility tree (a right click: always the
// pointer) and through OCR text (a click: the pointer, as there is no
// tree).
func TestClickOnTheControlNotWhereItWas(t *testing.T) {
	py := gtkPython(t)
	eng, err := ocr.New(ocr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		ocr    bool
		action string
		sig    syscall.Signal
		stale  bool
		want   string // printed by the app; "" nothing
	}{
		{name: "tree moved", action: "right_click", sig: syscall.SIGUSR1, want: "alpha right"},
		{name: "tree vanished", action: "right_click", sig: syscall.SIGUSR2, stale: true},
		{name: "ocr moved", ocr: true, action: "click", sig: syscall.SIGUSR1, want: "alpha clicked"},
		{name: "ocr vanished", ocr: true, action: "click", sig: syscall.SIGUSR2, stale: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDesktop(t)
			app := d.session.StartApp(t, py, atspitest.MovingScript(t))
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
			defer cancel()
			if _, err := atspitest.WaitApp(ctx, d.tree, "acu-moving"); err != nil {
				t.Fatalf("%v; stderr: %s", err, app.Stderr())
			}
			x := d.x
			typ, text := "button", "Alpha"
			if tc.ocr {
				x, err = elements.New(elements.Options{Display: d.dpy, Capture: d.base.Hub, OCR: eng, Input: d.dev})
				if err != nil {
					t.Fatal(err)
				}
				typ = "text"
			}
			var signalled atomic.Bool
			m := newModels(t, func(r llmtest.Request) llmtest.Reply {
				if isCheck(r) {
					return progressing(true)
				}
				if signalled.Load() {
					return llmtest.Reply{Text: stepsJSON(true)}
				}
				id := findID(r.System, typ, text)
				if id == "" {
					return llmtest.Reply{Text: stepsJSON(false)}
				}
				// The model thinks; the window changes under its map.
				signalled.Store(true)
				if err := syscall.Kill(app.Pid(), tc.sig); err != nil {
					t.Errorf("signal the app: %v", err)
				}
				for !strings.Contains(app.Stdout(), "moved") && ctx.Err() == nil {
					time.Sleep(20 * time.Millisecond)
				}
				return llmtest.Reply{Text: stepsJSON(false, map[string]string{"action": tc.action, "target": id})}
			}, llmtest.Text(planJSON("Alpha", "Use Alpha")), doneReply)
			or := d.orchestrator(t, m, func(o *orchestrator.Options) { o.Elements = x; o.MaxIterations = 4 })
			res, err := or.Run(ctx, orchestrator.Spec{Task: "Use the Alpha button of Acu Moving"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != runs.StatusCompleted || !signalled.Load() {
				t.Fatalf("status %s (%s), signalled %v", res.Status, res.Error, signalled.Load())
			}
			out := app.Stdout()
			if tc.want != "" && !strings.Contains(out, tc.want) {
				t.Errorf("the app printed %q, want %q: the step missed Alpha", out, tc.want)
			}
			if strings.Contains(out, "bravo") || tc.stale && strings.Contains(out, "alpha") {
				t.Errorf("the app printed %q: the step hit what was not asked for", out)
			}
			var step *stepResult
			for _, it := range events[stepEv](t, d, res.RunID, orchestrator.StreamIteration) {
				for k := range it.Steps {
					step = &it.Steps[k]
				}
			}
			if step == nil {
				t.Fatal("no step was recorded")
			}
			switch {
			case tc.stale && (step.OK || !step.Stale || !strings.Contains(step.Error, "stale")):
				t.Errorf("step %+v: want it failed as stale", *step)
			case !tc.stale && (!step.OK || !strings.Contains(step.Via, "moved")):
				t.Errorf("step %+v: want ok at the element's new place (a via saying it moved)", *step)
			}
			if os.Getenv("ACU_TEST_VERBOSE") != "" {
				t.Logf("step %+v; app: %q", *step, out)
			}
		})
	}
}

// stepEv is an iteration event's steps with their stale flag.
type stepEv struct {
	Steps []stepResult `json:"steps"`
}

type stepResult struct {
	Step  string `json:"step"`
	OK    bool   `json:"ok"`
	Via   string `json:"via"`
	Error string `json:"error"`
	Stale bool   `json:"stale"`
}

// TestStaleWarningLeavesWithTheChange: a window opens on a real desktop
// while the blocking last-resort plan is being made; the plan's guidance
// warns of it in that iteration's prompt, the fast agent closes the
// window, and the next iteration's prompt (system and pinned message)
// carries no warning: the screen no longer shows the change.
func TestStaleWarningLeavesWithTheChange(t *testing.T) {
	d := newDesktop(t)
	d.entry(t)
	var fast counter
	var warned, after atomic.Int32 // iterations whose prompt warned; prompts after the popup closed that still warned
	var closed atomic.Bool
	const warning = "WARNING: the screen changed while this plan was being made"
	m := newModels(t, func(r llmtest.Request) llmtest.Reply {
		if isCheck(r) {
			return progressing(true)
		}
		n := fast.next()
		has := strings.Contains(r.Messages[0].Text, warning) || strings.Contains(r.System, warning)
		switch {
		case closed.Load():
			if has {
				after.Add(1)
			}
			return llmtest.Reply{Text: stepsJSON(true)}
		case has && strings.Contains(r.System, `"Acu Popup"`):
			warned.Add(1)
			closed.Store(true)
			return llmtest.Reply{Text: stepsJSON(false, clickStep(findID(r.System, "button", "Dismiss")))}
		case n == 1:
			return llmtest.Reply{Text: stepsJSON(false, clickStep("btn_missing"))} // a failure: the last resort comes next
		}
		return llmtest.Reply{Text: stepsJSON(false)}
	}, func(r llmtest.Request) llmtest.Reply {
		if !strings.Contains(r.Text(), "LAST RESORT") {
			return unusable(r)
		}
		// Meanwhile a window opens.
		popup := d.session.StartApp(t, "zenity", "--info", "--title=Acu Popup", "--text=Surprise", "--ok-label=Dismiss")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for ctx.Err() == nil {
			nodes, _ := d.tree.Tree(ctx)
			for _, n := range nodes {
				if n.Name == "Dismiss" && !n.Bounds.Empty() {
					return llmtest.Reply{Text: planJSON("Last resort", "Type the name and press OK")}
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("the popup did not show: %s", popup.Stderr())
		return llmtest.Reply{Text: planJSON("Last resort", "Type the name and press OK")}
	}, doneReply)
	or := d.orchestrator(t, m, nil)
	res := run(t, or, 6)
	if res.Status != runs.StatusCompleted {
		t.Fatalf("result %s (%s), want completed", res.Status, res.Error)
	}
	if warned.Load() != 1 || !closed.Load() {
		t.Fatalf("%d prompts warned of the popup, closed %v: want the warning once, then the popup closed", warned.Load(), closed.Load())
	}
	if n := after.Load(); n > 0 {
		t.Errorf("%d prompts after the popup closed still warned that the screen changed", n)
	}
}
