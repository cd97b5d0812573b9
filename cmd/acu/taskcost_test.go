package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/acu-dev/acu/internal/llm/llmtest"
)

// TestRunTaskCostLimitNeedsPrices: `acu run` with ACU_TASK_MAX_COST_USD
// and a task model the shipped price table does not know, on an endpoint
// that reports no cost of its own, refuses at start-up, before it opens
// the display or calls a model, naming ACU_TASK_MAX_COST_USD, the model
// and ACU_MODEL_PRICES. Priced through ACU_MODEL_PRICES, the same
// settings pass that check (and stop later, at the display, which is not
// there).
func TestRunTaskCostLimitNeedsPrices(t *testing.T) {
	const model = "some-lab/unpriced-model"
	srv := llmtest.NewOpenAI(t, nil)
	// A display no server answers: the refusal comes first.
	dpy := absentDisplay(t)
	env, _, _ := newEnv(t, dpy)
	env = append(env, "ACU_TASK_BASE_URL="+srv.URL, "ACU_TASK_API_KEY="+llmtest.Key, "ACU_TASK_OCR=false",
		"ACU_TASK_PLANNER_MODEL="+model, "ACU_TASK_MAX_COST_USD=0.25", "ACU_LOG_LEVEL=warn")

	_, stderr, code := acu(t, env, "run", "open the Files dialog")
	for _, want := range []string{"ACU_TASK_MAX_COST_USD=0.25", `model "` + model + `"`, "ACU_MODEL_PRICES=" + model + "=IN:OUT", "ACU_TASK_MAX_COST_USD=0 for no limit"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("acu run with a cost limit on an unpriced model: stderr does not say %q:\n%s", want, stderr)
		}
	}
	if code == 0 || strings.Contains(stderr, dpy) {
		t.Errorf("acu run exit %d, stderr:\n%s\nwant a refusal before the display is opened", code, stderr)
	}
	if srv.Calls() != 0 {
		t.Errorf("%d model calls, want none before the refusal", srv.Calls())
	}

	_, stderr, code = acu(t, append(env, "ACU_MODEL_PRICES="+model+"=3:15"), "run", "open the Files dialog")
	if code == 0 || strings.Contains(stderr, "ACU_TASK_MAX_COST_USD") || !strings.Contains(stderr, dpy) {
		t.Errorf("acu run with the model priced: exit %d, stderr:\n%s\nwant it past the cost check, stopped at the display %s", code, stderr, dpy)
	}
}

// absentDisplay is an X display name with no server's socket.
func absentDisplay(t *testing.T) string {
	t.Helper()
	for n := 4093; n > 3000; n-- {
		if _, err := os.Stat(fmt.Sprintf("/tmp/.X11-unix/X%d", n)); os.IsNotExist(err) {
			return fmt.Sprintf(":%d", n)
		}
	}
	t.Fatal("no display number without an X socket")
	return ""
}
