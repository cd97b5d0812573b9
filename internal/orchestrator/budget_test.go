package orchestrator_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/orchestrator"
	"github.com/acu-dev/acu/internal/runs"
)

// TestCostBudgetEndsTask: a task's model calls count against its cost
// budget (Options.MaxCost, ACU_TASK_MAX_COST_USD) through the session
// harness; the fast agent's call that spends it ends the task before its
// steps run, and the run ends failed, its error naming the budget.
func TestCostBudgetEndsTask(t *testing.T) {
	d := newDesktop(t)
	d.entry(t)
	m := newModels(t, func(r llmtest.Request) llmtest.Reply {
		if isCheck(r) {
			return llmtest.Reply{Text: progressing(true).Text, CostUSD: llmtest.Cost(0.004)}
		}
		return llmtest.Reply{Text: stepsJSON(false, typeStep("txt_missing", "x")), CostUSD: llmtest.Cost(0.004)}
	}, unusable, doneReply)
	// Priced (free) models, so the budget can be kept; the fast agent's
	// endpoint reports each call's cost, as OpenRouter does.
	priced := func(o *llm.Options) { o.MaxRetries = -1; o.Prices = llm.PriceTable{"llmtest-model": {}} }
	or := d.orchestrator(t, m, func(o *orchestrator.Options) {
		o.MaxCost = 0.01
		o.Fast, o.Planner, o.Verifier = m.fast.Client(t, priced), m.planner.Client(t, priced), m.verifier.Client(t, priced)
	})
	res := run(t, or, 20)
	if res.Status != orchestrator.StatusFailed || !strings.Contains(res.Error, "cost limit of $0.0100 reached ($0.0120 spent)") ||
		!strings.Contains(res.Error, "ACU_TASK_MAX_COST_USD") {
		t.Fatalf("result = %s: %q, want failed on the cost limit of $0.01, naming ACU_TASK_MAX_COST_USD", res.Status, res.Error)
	}
	if res.Iterations != 3 || m.fast.Calls() != 3 || res.CostUSD < 0.0119 {
		t.Errorf("ended after %d iterations, %d fast calls, $%.4f; want 3, 3, $0.012 (the third call spent the budget)", res.Iterations, m.fast.Calls(), res.CostUSD)
	}
	iters := events[iterEv](t, d, res.RunID, orchestrator.StreamIteration)
	if last := iters[len(iters)-1]; last.Iteration != 3 || len(last.Steps) != 0 || !strings.Contains(last.Error, "cost limit") {
		t.Errorf("last iteration = %+v, want iteration 3 with no steps carried out and the cost limit as its error", last)
	}
	run, err := d.reg.Get(t.Context(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != orchestrator.StatusFailed || !strings.Contains(run.Error, "ACU_TASK_MAX_COST_USD") {
		t.Errorf("run ended %s: %q, want failed naming the budget", run.Status, run.Error)
	}
}

// TestCostBudgetRefusesUnpricedModel: a cost budget on a model whose calls'
// cost cannot be known (no price, no provider figure, not a local server)
// is refused before any task starts, as the agent and computer loops do.
func TestCostBudgetRefusesUnpricedModel(t *testing.T) {
	unpriced, err := llm.New(llm.Options{Provider: llm.OpenAI, BaseURL: "https://models.example.com/v1", Model: "no-price-model", Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	o := orchestrator.Options{Elements: (*elements.Extractor)(nil), Runs: (*runs.Registry)(nil), Fast: unpriced}
	if _, err := orchestrator.New(o); err != nil {
		t.Fatalf("New without a cost budget = %v, want nil", err)
	}
	o.MaxCost = 1
	if _, err := orchestrator.New(o); !errors.Is(err, llm.ErrUnpriced) || !strings.Contains(err.Error(), "no-price-model") {
		t.Errorf("New with a cost budget on an unpriced model = %v, want ErrUnpriced naming the model", err)
	}
}
