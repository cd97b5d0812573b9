package main

import (
	"bufio"
	"context"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/llm/llmtest"
)

// TestAgentCostLimitNeedsPrices: the shipped binary, with its shipped price
// table (nothing injected), refuses to start `acu agent` with a cost limit
// on a model that has no price and an endpoint that reports no cost,
// naming the model and ACU_MODEL_PRICES; ACU_MODEL_PRICES extends the table
// and the same agent then starts.
func TestAgentCostLimitNeedsPrices(t *testing.T) {
	const model = "some-lab/unpriced-model"
	srv := llmtest.NewOpenAI(t, nil)
	env, _, _ := newEnv(t, startDisplay(t))
	env = append(env, "ACU_AGENT_API_URL="+srv.URL, "ACU_AGENT_API_KEY="+llmtest.Key, "ACU_AGENT_MODEL="+model,
		"ACU_AGENT_MAX_COST_USD=0.5", "ACU_AGENT_PORT="+strconv.Itoa(freePort(t)))

	_, stderr, code := acu(t, env, "agent")
	if code == 0 || !strings.Contains(stderr, `model "`+model+`"`) || !strings.Contains(stderr, "ACU_MODEL_PRICES="+model+"=IN:OUT") ||
		!strings.Contains(stderr, "ACU_AGENT_MAX_COST_USD") {
		t.Errorf("acu agent with a cost limit on an unpriced model: exit %d, stderr:\n%s\nwant a refusal naming the model and ACU_MODEL_PRICES", code, stderr)
	}

	env = append(env, "ACU_MODEL_PRICES="+model+"=3:15")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, acuBin, "agent")
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb syncBuffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started := false
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "panel (one-time link") {
			started = true
			break
		}
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	for sc.Scan() { // drain until it exits
	}
	_ = cmd.Wait()
	if !started {
		t.Errorf("acu agent with ACU_MODEL_PRICES pricing the model did not start; stderr:\n%s", errb.String())
	}
	if srv.Calls() != 0 {
		t.Errorf("%d model calls, want none (the agent waits for /inject)", srv.Calls())
	}
}
