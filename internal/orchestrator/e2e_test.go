package orchestrator_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/orchestrator"
	"github.com/acu-dev/acu/internal/runs"
)

// An end-to-end task on a real zenity --entry dialog: a scripted model
// that reads only the element map fills the entry and presses OK; zenity's
// stdout proves it.
func TestEndToEndZenityEntry(t *testing.T) {
	d := newDesktop(t)
	app := d.entry(t)
	m := newModels(t, func(r llmtest.Request) llmtest.Reply {
		if isCheck(r) {
			return progressing(true)
		}
		if !strings.Contains(r.System, `window "Acu Entry"`) {
			return llmtest.Reply{Text: stepsJSON(true)}
		}
		entry, ok := findID(r.System, "input", ""), findID(r.System, "button", "OK")
		if entry == "" || ok == "" {
			t.Errorf("no input or OK button in the map:\n%s", r.System)
			return llmtest.Reply{Text: stepsJSON(false)}
		}
		return llmtest.Reply{Text: stepsJSON(false, typeStep(entry, "Ada Lovelace"), clickStep(ok))}
	}, llmtest.Text(planJSON("Fill and confirm", "Type the name", "Click OK")), func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.Text(), `window "Acu Entry"`) {
			return llmtest.Reply{Text: `{"done":false,"reason":"the dialog is still open"}`}
		}
		return doneReply(r)
	})
	var live []string
	or := d.orchestrator(t, m, func(o *orchestrator.Options) {
		o.OnEvent = func(_, stream string, _ any) { live = append(live, stream) }
		o.Frames = d.db
	})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	run, err := or.Start(ctx, orchestrator.Spec{Task: "Enter Ada Lovelace as the name and press OK", TaskID: "task_e2e"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := or.Start(ctx, orchestrator.Spec{Task: "another"}); err != orchestrator.ErrBusy {
		t.Errorf("second Start = %v, want ErrBusy", err)
	}
	// A task another daemon of a fleet sent while this one runs ends at
	// once, busy.
	sent, err := d.reg.Start(ctx, runs.StartOptions{Kind: orchestrator.Kind, Spec: orchestrator.Spec{Task: "sent from another host"}})
	if err != nil {
		t.Fatal(err)
	}
	if !or.Adopt(sent) {
		t.Fatal("Adopt of a task run = false, want taken")
	}
	if res, err := d.reg.Wait(ctx, sent.ID, 30*time.Second); err != nil || res.Status != runs.StatusError || res.Error != orchestrator.ErrBusy.Error() {
		t.Errorf("adopted task while busy = %+v, %v; want ended with ErrBusy", res, err)
	}
	if or.Adopt(runs.Run{ID: "wait_x", Kind: "wait"}) {
		t.Error("Adopt of a wait run = true, want false")
	}
	res, err := d.reg.Wait(ctx, run.ID, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runs.StatusCompleted {
		r, _ := d.reg.Get(ctx, run.ID)
		t.Fatalf("status = %s (%s), want completed; result %s", res.Status, res.Error, r.Result)
	}
	out, err := app.Wait(ctx)
	if err != nil {
		t.Fatalf("zenity: %v", err)
	}
	if out != "Ada Lovelace\n" {
		t.Errorf("zenity printed %q, want %q", out, "Ada Lovelace\n")
	}
	iters := events[iterEv](t, d, run.ID, orchestrator.StreamIteration)
	if len(iters) == 0 || len(iters[0].Steps) != 2 || !iters[0].Steps[0].OK || !iters[0].Steps[1].OK {
		t.Fatalf("iteration 1 = %+v, want two successful steps", iters)
	}
	// Each iteration names the frame its map was read from, kept for the
	// run timeline.
	kept, err := d.db.RunFrames(context.Background(), run.ID)
	if err != nil || len(kept) == 0 || iters[0].FrameHash == "" {
		t.Errorf("iteration frame %q, %d frames kept (%v): want the frames the task saw", iters[0].FrameHash, len(kept), err)
	}
	prog, err := d.db.TaskProgress(context.Background(), "task_e2e")
	if err != nil {
		t.Fatal(err)
	}
	if len(prog) < 3 || !strings.HasPrefix(prog[0].Message, "task started") || !strings.HasPrefix(prog[len(prog)-1].Message, "task completed") {
		t.Errorf("progress log = %+v", prog)
	}
	// The fake models have no price and report no cost: the cost is
	// unknown, not $0.
	var result orchestrator.Result
	if r, err := d.reg.Get(ctx, run.ID); err != nil || json.Unmarshal(r.Result, &result) != nil {
		t.Fatalf("run result: %v", err)
	}
	if !result.CostUnknown || result.UnpricedCalls < 2 || result.CostUSD != 0 {
		t.Errorf("result cost = $%v, unknown %v, %d unpriced calls; want unknown, with the fast and verifier calls counted", result.CostUSD, result.CostUnknown, result.UnpricedCalls)
	}
	if len(live) == 0 || live[0] != orchestrator.StreamIteration {
		t.Errorf("live events = %v", live)
	}
}
