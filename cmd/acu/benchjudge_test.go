package main

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/acu-dev/acu/internal/judge"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/llm/llmtest"
)

// TestBenchJudgeModels: `acu bench judge --model a,b` runs the same
// labelled set (the OCR set's screens, sampled with --limit) through each
// model of a vision backend, here a fake server speaking OpenAI's wire format, and
// ends with a line per model: accuracy, false YES, cost (known for a
// priced model, "unknown" for the other) and latency.
func TestBenchJudgeModels(t *testing.T) {
	srv := llmtest.NewOpenAI(t, func(r llmtest.Request) llmtest.Reply {
		if len(r.Images()) != 1 {
			t.Errorf("request with %d images, want the case's screen", len(r.Images()))
		}
		rep := llmtest.Reply{Text: "NO: not there.", Usage: llm.Usage{InputTokens: 1000, OutputTokens: 10}}
		if r.Model == "fake-yes" {
			rep.Text = "YES: it is there."
		}
		return rep
	})
	env, _, _ := newEnv(t, ":0")
	env = append(env, "ACU_VISION_BACKEND=openai", "OPENAI_API_KEY="+llmtest.Key, "ACU_VISION_BASE_URL="+srv.URL, "ACU_MODEL_PRICES=fake-yes=1:2")
	const limit = 30
	cmd := exec.CommandContext(t.Context(), acuBin, "bench", "judge", "--set", "ocr", "--limit", fmt.Sprint(limit), "--model", "fake-yes,fake-no")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("acu bench judge: %v\n%s", err, out)
	}
	set, err := judge.BuiltinOCRSet()
	if err != nil {
		t.Fatal(err)
	}
	yes := 0
	for _, c := range judge.Sample(set, limit) {
		if c.Expect {
			yes++
		}
	}
	no := limit - yes
	if srv.Calls() != 2*limit {
		t.Errorf("model calls = %d, want %d (%d cases, 2 models)", srv.Calls(), 2*limit, limit)
	}
	models := map[string]int{}
	for _, r := range srv.Requests() {
		models[r.Model]++
	}
	if models["fake-yes"] != limit || models["fake-no"] != limit {
		t.Errorf("calls per model = %v, want %d each", models, limit)
	}
	// One summary line per model; fake-yes costs 1000 input tokens at $1
	// and 10 output tokens at $2 a million: $0.00102 a call.
	lineOf := func(model string) string {
		re := regexp.MustCompile(`(?m)^openai\s+` + model + `\s+.*$`)
		return re.FindString(string(out))
	}
	yesLine, noLine := lineOf("fake-yes"), lineOf("fake-no")
	wantYes := fmt.Sprintf(`^openai\s+fake-yes\s+%d\s+%.1f%%\s+100\.0%%\s+%d \(100\.0%%\)\s+0\s+0\s+\d+ms\s+\d+ms\s+\$%.6f\s+\$0\.001020$`, limit, 100*float64(yes)/limit, no, 0.00102*limit)
	if !regexp.MustCompile(wantYes).MatchString(yesLine) {
		t.Errorf("summary line of fake-yes = %q, want to match %s\n%s", yesLine, wantYes, out)
	}
	wantNo := fmt.Sprintf(`^openai\s+fake-no\s+%d\s+%.1f%%\s+0\.0%%\s+0 \(0\.0%%\)\s+0\s+0\s+\d+ms\s+\d+ms\s+unknown \(%d of %d calls unpriced\)\s+unknown$`, limit, 100*float64(no)/limit, limit, limit)
	if !regexp.MustCompile(wantNo).MatchString(noLine) {
		t.Errorf("summary line of fake-no = %q, want to match %s\n%s", noLine, wantNo, out)
	}
	if !strings.Contains(string(out), `judge openai (model "fake-yes")`) {
		t.Errorf("no header for fake-yes in:\n%s", out)
	}
	// A model list without a backend to run it says what to add.
	env2, _, _ := newEnv(t, ":0")
	cmd = exec.CommandContext(t.Context(), acuBin, "bench", "judge", "--backend", "", "--model", "m1,,m2")
	cmd.Env = env2
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "empty name") {
		t.Errorf("--model m1,,m2: %v\n%s", err, out)
	}
}
