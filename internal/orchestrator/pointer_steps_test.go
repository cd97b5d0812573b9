package orchestrator_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/judge"
	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/ocr"
	"github.com/acu-dev/acu/internal/orchestrator"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/smartwait"
)

// TestEndToEndScrollAndDoubleClick: a task on a real zenity list of 60 rows
// whose target row is out of view. The scripted fast agent, reading only
// the element map, scrolls the list until "row 45" is in view (a row
// scrolled out of view has negative coordinates in the map), then
// double-clicks it, which zenity answers by printing the row.
func TestEndToEndScrollAndDoubleClick(t *testing.T) {
	d := newDesktop(t)
	args := []string{"--list", "--title=Acu Rows", "--column=Item", "--height=420", "--width=300"}
	for i := 1; i <= 60; i++ {
		args = append(args, fmt.Sprintf("row %d", i))
	}
	app := d.zenity(t, args...)
	var scrolls, doubles int
	m := newModels(t, func(r llmtest.Request) llmtest.Reply {
		if isCheck(r) {
			return progressing(true)
		}
		if !strings.Contains(r.System, `window "Acu Rows"`) {
			return llmtest.Reply{Text: stepsJSON(true)}
		}
		_, mapText, _ := strings.Cut(r.System, "ELEMENT MAP")
		for _, line := range strings.Split(mapText, "\n") {
			if strings.HasPrefix(line, "[") && strings.Contains(line, `"row 45"`) && !strings.Contains(line, "(-") {
				doubles++
				return llmtest.Reply{Text: stepsJSON(false, map[string]string{"action": "double_click", "target": findID(r.System, "item", "row 45")})}
			}
		}
		// Scroll over the first row in view (map lines start with its id;
		// the diff's lines with + or -).
		target := ""
		for _, line := range strings.Split(mapText, "\n") {
			if strings.HasPrefix(line, "[") && strings.Contains(line, `item "row `) && !strings.Contains(line, "(-") {
				target = strings.Trim(strings.Fields(line)[0], "[]")
				break
			}
		}
		if target == "" {
			return llmtest.Reply{Text: stepsJSON(true)} // no rows: the list has closed
		}
		scrolls++
		return llmtest.Reply{Text: `{"thought":"row 45 is below","steps":[{"action":"scroll","target":"` + target + `","direction":"down","amount":5}],"complete":false}`}
	}, llmtest.Text(planJSON("Scroll and pick", "Scroll the list", "Double-click row 45")), func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.Text(), `window "Acu Rows"`) {
			return llmtest.Reply{Text: `{"done":false,"reason":"the list is still open"}`}
		}
		return doneReply(r)
	})
	or := d.orchestrator(t, m, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	run, err := or.Start(ctx, orchestrator.Spec{Task: "Pick row 45 in the list", TaskID: "task_rows"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.reg.Wait(ctx, run.ID, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runs.StatusCompleted {
		for _, it := range events[iterEv](t, d, run.ID, orchestrator.StreamIteration)[:5] {
			t.Logf("iteration %d: %+v %s %s", it.Iteration, it.Steps, it.Error, it.Call.Reply)
			for _, line := range strings.Split(it.Call.System, "\n") {
				if strings.Contains(line, "row 45") || strings.Contains(line, "row 38") {
					t.Logf("  %s", line)
				}
			}
		}
		t.Fatalf("status = %s (%s), want completed", res.Status, res.Error)
	}
	if out, err := app.Wait(ctx); err != nil || out != "row 45\n" {
		t.Errorf("zenity printed %q (%v), want row 45", out, err)
	}
	if scrolls == 0 || doubles != 1 {
		t.Errorf("%d scroll replies, %d double-click replies; want scrolls, then one double click", scrolls, doubles)
	}
	for _, it := range events[iterEv](t, d, run.ID, orchestrator.StreamIteration) {
		for _, s := range it.Steps {
			if !s.OK {
				t.Errorf("iteration %d step %q failed: %s", it.Iteration, s.Step, s.Error)
			}
		}
	}
}

// engineWaiter is the wait_for steps' smart wait on a real engine.
type engineWaiter struct {
	eng *smartwait.Engine
	dpy string
}

func (w engineWaiter) WaitFor(ctx context.Context, condition string, timeout time.Duration) (bool, string, error) {
	return w.eng.WaitFor(ctx, smartwait.Spec{Criteria: condition, Display: w.dpy, Timeout: timeout})
}

// TestEndToEndLaunchAndWaitFor: the fast agent launches an application by
// its desktop entry's name (a real entry, started detached on the task's
// display) and then waits for its slow export with one wait_for step,
// which acu's smart wait (Tesseract reading the real xterm) ends when
// "Export DONE" shows: three fast-agent calls for a 3 s export, not one a
// second.
func TestEndToEndLaunchAndWaitFor(t *testing.T) {
	d := newDesktop(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "acu-slow-export.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho Exporting; sleep 3; echo Export DONE; exec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	entry := "[Desktop Entry]\nType=Application\nName=Acu Slow Export\nExec=xterm -T slowexport -fa Monospace -fs 16 -bg white -fg black -e " + script + "\n"
	if err := os.WriteFile(filepath.Join(dir, "acu-slow-export.desktop"), []byte(entry), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exec.Command("pkill", "-f", script).Run() })

	oe, err := ocr.New(ocr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	jd, err := judge.NewOCR(judge.OCROptions{Engine: oe})
	if err != nil {
		t.Fatal(err)
	}
	eng := smartwait.New(smartwait.Options{Runs: d.reg, Capture: d.base.Hub, Judge: jd, Store: d.db, DefaultDisplay: d.dpy})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = eng.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	var calls counter
	m := newModels(t, func(r llmtest.Request) llmtest.Reply {
		if isCheck(r) {
			return progressing(true)
		}
		switch calls.next() {
		case 1:
			return llmtest.Reply{Text: `{"thought":"start it","steps":[{"action":"launch","app":"Acu Slow Export"}],"complete":false}`}
		case 2:
			return llmtest.Reply{Text: `{"thought":"the export is slow","steps":[{"action":"wait_for","condition":"\"Export DONE\" is visible","timeout":60}],"complete":false}`}
		}
		return llmtest.Reply{Text: stepsJSON(true)}
	}, llmtest.Text(planJSON("Launch and wait", "Launch the exporter", "Wait for it")), llmtest.Text(`{"done":true,"reason":"the export is done"}`))
	or := d.orchestrator(t, m, func(o *orchestrator.Options) {
		g := gate.New(gate.Options{Env: os.Environ()})
		t.Cleanup(g.Close)
		o.Launch = orchestrator.DesktopLauncher{Gate: g, Dirs: []string{dir}, Display: d.dpy}
		o.Wait = engineWaiter{eng: eng, dpy: d.dpy}
	})
	tctx, tcancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer tcancel()
	run, err := or.Start(tctx, orchestrator.Spec{Task: "Run the slow export and wait until it is done", TaskID: "task_export"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.reg.Wait(tctx, run.ID, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runs.StatusCompleted {
		t.Fatalf("status = %s (%s), want completed", res.Status, res.Error)
	}
	iters := events[iterEv](t, d, run.ID, orchestrator.StreamIteration)
	var steps []string
	for _, it := range iters {
		for _, s := range it.Steps {
			if !s.OK {
				t.Errorf("iteration %d step %q failed: %s", it.Iteration, s.Step, s.Error)
			}
			steps = append(steps, s.Step)
		}
	}
	if len(steps) != 2 || !strings.HasPrefix(steps[0], "launch Acu Slow Export") || !strings.HasPrefix(steps[1], `wait_for "\"Export DONE\" is visible"`) {
		t.Errorf("steps %q, want the launch, then the wait_for", steps)
	}
	if n := calls.next() - 1; n != 3 {
		t.Errorf("%d fast-agent calls, want 3: launch, wait_for, complete", n)
	}
	waits, err := d.reg.List(tctx, runs.ListFilter{Kind: "wait"})
	if err != nil || len(waits) != 1 || waits[0].Status != smartwait.StatusResolved {
		t.Errorf("wait runs %+v (%v), want one resolved wait", waits, err)
	}
}

// TestFastAgentSeesMarkedScreenshot: with FastScreenshots the fast agent's
// call carries the iteration's frame with each element's box outlined and
// its id drawn (set-of-marks): the fake model decodes the JPEG it was
// sent and finds the mark colour on the outline of the OK button, where
// the map says the button is.
func TestFastAgentSeesMarkedScreenshot(t *testing.T) {
	d := newDesktop(t)
	app := d.entry(t)
	var shots, marked int
	var system string
	m := newModels(t, func(r llmtest.Request) llmtest.Reply {
		if isCheck(r) {
			return progressing(true)
		}
		if !strings.Contains(r.System, `window "Acu Entry"`) {
			return llmtest.Reply{Text: stepsJSON(true)}
		}
		last := r.Messages[len(r.Messages)-1]
		entry, ok := findID(r.System, "input", ""), findID(r.System, "button", "OK")
		if system == "" {
			system = r.System
		}
		if len(last.Images) == 1 && last.Images[0].Image != nil {
			shots++
			img := last.Images[0].Image
			// The OK button's box from the map line: "(centre x,y wxh)".
			var cx, cy, w, h int
			for _, line := range strings.Split(r.System, "\n") {
				if strings.HasPrefix(line, "["+ok+"]") {
					geo := line[strings.Index(line, "(")+1 : strings.Index(line, ")")]
					fmt.Sscanf(geo, "%d,%d %dx%d", &cx, &cy, &w, &h)
				}
			}
			sx := float64(img.Bounds().Dx()) / float64(d.conn.Screen.Width)
			x0, y0 := int(float64(cx-w/2)*sx), int(float64(cy-h/2)*sx)
			pink := 0
			for x := x0; x < x0+int(float64(w)*sx); x++ {
				for y := y0 - 1; y <= y0+2; y++ {
					r, g, b, _ := img.At(x, y).RGBA()
					if r>>8 > 200 && g>>8 < 110 && b>>8 > 70 && b>>8 < 180 {
						pink++
					}
				}
			}
			if pink > w/4 {
				marked++
			}
		}
		return llmtest.Reply{Text: stepsJSON(false, typeStep(entry, "Ada"), clickStep(ok))}
	}, llmtest.Text(planJSON("Fill and confirm", "Type the name", "Click OK")), doneReply)
	or := d.orchestrator(t, m, func(o *orchestrator.Options) { o.FastScreenshots = true })
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	res, err := or.Run(ctx, orchestrator.Spec{Task: "Enter Ada and press OK"})
	if err != nil || res.Status != runs.StatusCompleted {
		t.Fatalf("run = %+v, %v", res, err)
	}
	if out, err := app.Wait(ctx); err != nil || out != "Ada\n" {
		t.Errorf("zenity printed %q (%v)", out, err)
	}
	// The device context: the screen, the focused window, the locale and
	// the installed applications.
	want := fmt.Sprintf("DEVICE:\nScreen %dx%d. Focused window: \"Acu Entry\"", d.conn.Screen.Width, d.conn.Screen.Height)
	if !strings.Contains(system, want) || !strings.Contains(system, "time zone") || !strings.Contains(system, "- Zenity (zenity)") {
		t.Errorf("the fast agent's prompt lacks the device context %q and the apps:\n%s", want, system)
	}
	if shots == 0 || marked != shots {
		t.Errorf("%d fast calls with a screenshot, %d with the OK button's mark; want at least one, all marked", shots, marked)
	}
}

// TestIndependentStepsVerifiedTogether: three type steps into three fields
// of a real zenity form are carried out one after the other and verified
// by one map read (the seed's parallel verification), then OK is clicked;
// zenity prints the three values.
func TestIndependentStepsVerifiedTogether(t *testing.T) {
	d := newDesktop(t)
	app := d.zenity(t, "--forms", "--title=Acu Form3", "--text=Three", "--add-entry=Name", "--add-entry=City", "--add-entry=Year")
	m := newModels(t, func(r llmtest.Request) llmtest.Reply {
		if isCheck(r) {
			return progressing(true)
		}
		if !strings.Contains(r.System, `window "Acu Form3"`) {
			return llmtest.Reply{Text: stepsJSON(true)}
		}
		return llmtest.Reply{Text: stepsJSON(false, typeStep("txt_1", "Ada"), typeStep("txt_2", "London"), typeStep("txt_3", "1815"),
			clickStep(findID(r.System, "button", "OK")))}
	}, llmtest.Text(planJSON("Fill", "Type the three fields", "Click OK")), doneReply)
	or := d.orchestrator(t, m, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	res, err := or.Run(ctx, orchestrator.Spec{Task: "Fill in Ada, London and 1815, then press OK"})
	if err != nil || res.Status != runs.StatusCompleted {
		t.Fatalf("run = %+v, %v", res, err)
	}
	if out, err := app.Wait(ctx); err != nil || out != "Ada|London|1815\n" {
		t.Errorf("zenity printed %q (%v)", out, err)
	}
	iters := events[iterEv](t, d, res.RunID, orchestrator.StreamIteration)
	if len(iters) == 0 || len(iters[0].Steps) != 4 {
		t.Fatalf("iteration 1 = %+v, want four steps", iters)
	}
	for k, s := range iters[0].Steps[:3] {
		if !s.OK || !strings.Contains(s.Via, "verified together with 2 other steps") {
			t.Errorf("step %d %+v, want typed and verified with the other two", k, s)
		}
	}
}

// TestSplitScreenWindowAgents: a plan that splits the task across two
// windows with a part for each runs one agent per window in parallel (their
// model calls overlap), each on its own window's map: each fills and
// confirms its own zenity dialog, and both print their values.
func TestSplitScreenWindowAgents(t *testing.T) {
	d := newDesktop(t)
	left := d.zenity(t, "--entry", "--title=Acu Left", "--text=Left:")
	right := d.zenity(t, "--entry", "--title=Acu Right", "--text=Right:")
	var mu sync.Mutex
	spans := map[string][][2]time.Time{}
	var leak, sequential bool
	// Each agent's first call waits for the other agent's first call: in
	// parallel they meet at once; one after the other, the first gives up
	// after 20 s and the test fails, whatever the machine's load.
	firstIn := map[string]chan struct{}{"Acu Left": make(chan struct{}), "Acu Right": make(chan struct{})}
	var firstSeen sync.Map
	m := newModels(t, func(r llmtest.Request) llmtest.Reply {
		if isCheck(r) {
			return progressing(true)
		}
		if !strings.HasPrefix(r.System, "WINDOW AGENT") {
			if strings.Contains(r.System, `window "Acu Left"`) || strings.Contains(r.System, `window "Acu Right"`) {
				return llmtest.Reply{Text: stepsJSON(false)} // the window agents do the work
			}
			return llmtest.Reply{Text: stepsJSON(true)}
		}
		win, value := "Acu Left", "west"
		if strings.Contains(r.System, `window "Acu Right"`) {
			win, value = "Acu Right", "east"
		}
		other := map[string]string{"Acu Left": "Acu Right", "Acu Right": "Acu Left"}[win]
		start := time.Now()
		if _, seen := firstSeen.LoadOrStore(win, true); !seen {
			close(firstIn[win])
			select {
			case <-firstIn[other]:
			case <-time.After(20 * time.Second):
				mu.Lock()
				sequential = true
				mu.Unlock()
			}
		}
		mu.Lock()
		spans[win] = append(spans[win], [2]time.Time{start, time.Now()})
		if strings.Contains(r.System, `window "`+other+`"`) {
			leak = true
		}
		mu.Unlock()
		entry, ok := findID(r.System, "input", ""), findID(r.System, "button", "OK")
		if entry == "" || ok == "" {
			return llmtest.Reply{Text: stepsJSON(true)}
		}
		return llmtest.Reply{Text: stepsJSON(false, typeStep(entry, value), clickStep(ok))}
	}, llmtest.Text(`{"approaches":[{"name":"Both at once","description":"fill both","steps":["fill left","fill right"]}],"recommended":0,
		"split":{"windows":["Acu Left","Acu Right"],"reason":"independent","tasks":["type west and press OK","type east and press OK"]}}`), doneReply)
	or := d.orchestrator(t, m, func(o *orchestrator.Options) { o.Arrange = d.arranger(t) })
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	res, err := or.Run(ctx, orchestrator.Spec{Task: "Type west into the left dialog and east into the right one", MaxIterations: 10})
	if err != nil || res.Status != runs.StatusCompleted {
		t.Fatalf("run = %+v, %v", res, err)
	}
	for _, c := range []struct {
		app interface {
			Wait(context.Context) (string, error)
		}
		want string
	}{{left, "west\n"}, {right, "east\n"}} {
		if out, err := c.app.Wait(ctx); err != nil || out != c.want {
			t.Errorf("zenity printed %q (%v), want %q", out, err, c.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if leak {
		t.Error("a window agent's map showed the other window")
	}
	if len(spans["Acu Left"]) == 0 || len(spans["Acu Right"]) == 0 {
		t.Fatalf("window agent calls %v, want both windows'", spans)
	}
	if sequential {
		t.Errorf("the window agents' first calls %v did not overlap: one waited 20 s for the other, not in parallel", spans)
	}
	type agentEv struct {
		Window   string `json:"window"`
		Complete bool   `json:"complete"`
	}
	done := map[string]bool{}
	for _, ev := range events[agentEv](t, d, res.RunID, orchestrator.StreamWindowAgent) {
		done[ev.Window] = done[ev.Window] || ev.Complete
	}
	if !done["Acu Left"] || !done["Acu Right"] {
		t.Errorf("window agent events say done %v, want both", done)
	}
}
