package orchestrator_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/orchestrator"
	"github.com/acu-dev/acu/internal/runs"
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
