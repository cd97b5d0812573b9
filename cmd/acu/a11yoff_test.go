package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/llm/llmtest"
)

// ACU_JUDGE_A11Y=off: a condition the accessibility tree of a running GTK
// application would decide (its Install button is disabled: the tree says
// NO) goes, whole, to the vision model, which the test's fake answers YES;
// --explain and the run's result say which judge decided and why.
func TestWaitAccessibilityOff(t *testing.T) {
	dpy := startDisplay(t)
	s := atspitest.Start(t, dpy)
	model := llmtest.NewOpenAI(t, func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.Text(), "CONDITION: the Install button is enabled") {
			return llmtest.Reply{Text: "YES: the Install button is shown enabled."}
		}
		return llmtest.Reply{Text: "NO: not the condition asked."}
	})
	env, dataDir, port := newEnv(t, dpy)
	env = append(env, "ACU_VISION_BACKEND=openai", "ACU_VISION_BASE_URL="+model.URL, "ACU_VISION_MODEL="+llmtest.Model,
		"OPENAI_API_KEY="+model.Key(), "ACU_LOG_LEVEL=info", "DBUS_SESSION_BUS_ADDRESS="+s.SessionBus, "ACU_JUDGE_A11Y=off")
	d := startDaemon(t, env, dataDir, port)
	s.StartFixture(t, atspitest.GTK, "Acu Fixture")
	w := startWait(t, env, "the Install button is enabled", "--timeout", "60", "--explain", "--json")
	if code := w.result(t); code != 0 {
		t.Fatalf("acu wait: exit %d\nstdout: %s\nstderr: %s", code, w.out.String(), w.err.String())
	}
	explain := w.err.String()
	for _, want := range []string{"fallback: the accessibility judge is off (ACU_JUDGE_A11Y=off)",
		`plan: "the Install button is enabled" -> openai`, "decided by: openai"} {
		if !strings.Contains(explain, want) {
			t.Errorf("--explain (stderr with --json) lacks %q:\n%s", want, explain)
		}
	}
	if strings.Contains(explain, "-> a11y") || strings.Contains(explain, "decided by: a11y") {
		t.Errorf("--explain names the accessibility judge, which is off:\n%s", explain)
	}
	var job api.Wait
	if err := json.Unmarshal([]byte(w.out.String()), &job); err != nil {
		t.Fatalf("acu wait --json: %v\n%s", err, w.out.String())
	}
	rc := runResult(t, d, job.ID)
	if rc.Judges["a11y"] != 0 || rc.Judges["openai"] == 0 || rc.ModelCalls == 0 {
		t.Errorf("run result = %+v, want openai judgements and model calls, none by a11y", rc)
	}
	if model.Calls() == 0 {
		t.Error("the vision model was never asked")
	}
}
