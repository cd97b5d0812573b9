package taskbench

import (
	"slices"
	"testing"
)

// TestScriptedModelUsesEveryStep: the CI subset's scripts, which the
// scripted model runs through `acu run` in TestScriptedModelSolvesCISubset,
// use every step the task engine offers beyond click, type and key, where
// a competent model would (issue 24: the scripted model once never
// scrolled, dragged, double- or right-clicked, launched or waited), so a
// step that breaks fails the suite. A task rewritten around one of them
// must leave another task using it.
func TestScriptedModelUsesEveryStep(t *testing.T) {
	ts, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	used := map[string][]string{}
	for _, task := range ts {
		if !task.CI {
			continue
		}
		for _, st := range task.Script {
			if !slices.Contains(used[st.Action], task.ID) {
				used[st.Action] = append(used[st.Action], task.ID)
			}
		}
	}
	for _, step := range []string{"scroll", "drag", "double_click", "right_click", "launch", "wait_for"} {
		if len(used[step]) == 0 {
			t.Errorf("no script of the CI subset uses %q: the scripted model no longer exercises that step", step)
		} else {
			t.Logf("%s: %v", step, used[step])
		}
	}
}
