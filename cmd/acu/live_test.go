package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/llm/llmtest"
)

// interventions returns the phases of run's intervention events, read
// from the daemon.
func interventions(t *testing.T, c *api.Client, run string) []string {
	t.Helper()
	evs, err := c.EventsAfter(t.Context(), api.EventQuery{RunID: run, Streams: []string{"intervention"}})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs.Events {
		var d struct{ Phase string }
		_ = json.Unmarshal(e.Data, &d)
		out = append(out, d.Phase)
	}
	return out
}

// TestTakeoverPausesAgent: a human taking a display over in the live view
// (the daemon's POST /v1/live/takeover) pauses a running `acu agent` on it,
// another process, which records the pause as an intervention event on its
// run and calls its (scripted) model no more; the hand-back resumes it.
func TestTakeoverPausesAgent(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Text(`{"observation":"watching","bboxes":[],"actions":[]}`))
	env, dataDir, port := newEnv(t, startDisplay(t))
	d := startDaemon(t, env, dataDir, port)
	env = append(env, "ACU_AGENT_API_URL="+srv.URL, "ACU_AGENT_API_KEY="+llmtest.Key, "ACU_AGENT_MODEL=scripted",
		"ACU_AGENT_BOOT_ENABLED=true", "ACU_AGENT_CAPTURE_DELAY=0.05", "ACU_AGENT_PORT="+strconv.Itoa(freePort(t)))
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
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
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
		}
	}()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("acu agent's log:\n%s", errb.String())
		}
	}()

	var run string
	eventually(t, 30*time.Second, "a running agent session", func() bool {
		list, err := d.client.Runs(t.Context(), api.RunQuery{Kind: "agent"})
		if err == nil && len(list.Runs) > 0 {
			run = list.Runs[0].ID
		}
		return run != "" && srv.Calls() >= 2
	})

	st, err := d.client.TakeOver(t.Context(), "")
	if err != nil || !st.Active {
		t.Fatalf("TakeOver = %+v, %v", st, err)
	}
	eventually(t, 30*time.Second, "the agent's pause", func() bool {
		p := interventions(t, d.client, run)
		return len(p) == 1 && p[0] == "paused"
	})
	calls := srv.Calls()
	time.Sleep(time.Second)
	if n := srv.Calls(); n != calls {
		t.Errorf("the paused agent called its model %d times while the display was held", n-calls)
	}
	if _, err := d.client.HandBack(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the agent's resume", func() bool {
		p := interventions(t, d.client, run)
		return len(p) == 2 && p[1] == "resumed" && srv.Calls() > calls
	})
	// Each turn's annotated frame is kept for the timeline, named by the
	// turn event.
	fr, err := d.client.RunFrames(t.Context(), run)
	if err != nil || len(fr.Frames) == 0 {
		t.Errorf("the agent run's frames = %+v, %v; want its turns' annotated frames", fr, err)
	}
	turns, err := d.client.EventsAfter(t.Context(), api.EventQuery{RunID: run, Streams: []string{"turn"}})
	if err != nil || len(turns.Events) == 0 || !strings.Contains(string(turns.Events[0].Data), `"frameHash":"png-`) {
		t.Errorf("turn events = %v, %v; want a frameHash", turns, err)
	}
	if p := interventions(t, d.client, st.RunID); strings.Join(p, ",") != "taken,handed_back" {
		t.Errorf("the take-over run's events = %v, want taken, handed_back", p)
	}
}
