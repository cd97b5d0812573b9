package taskbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Engine runs one task's prompt on a prepared desktop.
type Engine interface {
	// Name is the engine as reports show it: run, agent, computer:<vendor>.
	Name() string
	Run(ctx context.Context, j Job) Outcome
}

// Job is what an engine gets: the acu binary, the task, the desktop's
// environment (DISPLAY, the session bus) and a data directory of its own.
type Job struct {
	Bin     string
	Task    Task
	Display string
	Env     []string
	DataDir string
	// Log receives the engine's output.
	Log io.Writer
}

// Outcome is how the engine's run ended, as the engine reports it; the
// checker, not the engine, decides success.
type Outcome struct {
	Status      string  `json:"status"` // the engine's own: completed, failed, ...
	Steps       int     `json:"steps"`
	ModelMs     float64 `json:"modelMs"`
	CostUSD     float64 `json:"costUsd"`
	CostUnknown bool    `json:"costUnknown,omitempty"`
	Summary     string  `json:"summary,omitempty"`
	Error       string  `json:"error,omitempty"`
}

// Orchestrator is `acu run`: the fast agent, planner and verifier of
// ACU_TASK_* (Env adds settings to the environment, such as the models).
type Orchestrator struct{ Env []string }

func (Orchestrator) Name() string { return "run" }

func (o Orchestrator) Run(ctx context.Context, j Job) Outcome {
	env := append(append(j.Env, o.Env...), "ACU_DATA_DIR="+j.DataDir, "ACU_TASK_DISPLAY="+j.Display, "ACU_LOG_LEVEL=warn")
	var out Outcome
	var gotResult bool
	err := runLines(ctx, j, env, []string{"run", "-json", "-max-iterations", strconv.Itoa(j.Task.StepLimit), j.Task.Prompt}, func(ev event) {
		out.ModelMs += sumKey(ev.Data, "latencyMs")
		if ev.Stream != "result" {
			return
		}
		var r struct {
			Status      string  `json:"status"`
			Iterations  int     `json:"iterations"`
			CostUSD     float64 `json:"costUsd"`
			CostUnknown bool    `json:"costUnknown"`
			Summary     string  `json:"summary"`
			Error       string  `json:"error"`
		}
		if json.Unmarshal(ev.Data, &r) == nil {
			gotResult = true
			out.Status, out.Steps, out.CostUSD, out.CostUnknown, out.Summary, out.Error = r.Status, r.Iterations, r.CostUSD, r.CostUnknown, r.Summary, r.Error
		}
	})
	return finish(out, gotResult, err)
}

// Computer is `acu computer --provider Provider`: a vendor's computer-use
// model. It runs against an `acu serve` the job starts on its own data
// directory and port, stopped after the task.
type Computer struct {
	Provider string
	Model    string
	BaseURL  string
	Env      []string
}

func (c Computer) Name() string { return "computer:" + c.Provider }

func (c Computer) Run(ctx context.Context, j Job) Outcome {
	port, err := freePort()
	if err != nil {
		return Outcome{Status: "error", Error: err.Error()}
	}
	relay, err := freePort()
	if err != nil {
		return Outcome{Status: "error", Error: err.Error()}
	}
	env := append(append(j.Env, c.Env...), "ACU_DATA_DIR="+j.DataDir, "ACU_DAEMON_PORT="+strconv.Itoa(port), "ACU_LOG_LEVEL=warn",
		"ACU_RELAY_PORT="+strconv.Itoa(relay))
	stop, err := startDaemon(ctx, j, env, port)
	if err != nil {
		return Outcome{Status: "error", Error: err.Error()}
	}
	defer stop()
	args := []string{"computer", "-json", "--provider", c.Provider, "--max-steps", strconv.Itoa(j.Task.StepLimit), "--display", j.Display}
	if c.Model != "" {
		args = append(args, "--model", c.Model)
	}
	if c.BaseURL != "" {
		args = append(args, "--base-url", c.BaseURL)
	}
	var out Outcome
	var gotResult bool
	err = runLines(ctx, j, env, append(args, j.Task.Prompt), func(ev event) {
		switch ev.Stream {
		case "turn":
			out.ModelMs += sumKey(ev.Data, "model_ms")
		case "result":
			var r struct {
				Status   string  `json:"status"`
				Turns    int     `json:"turns"`
				CostUSD  float64 `json:"cost_usd"`
				Unpriced int     `json:"unpriced_calls"`
				Summary  string  `json:"summary"`
				Error    string  `json:"error"`
			}
			if json.Unmarshal(ev.Data, &r) == nil {
				gotResult = true
				out.Status, out.Steps, out.CostUSD, out.CostUnknown, out.Summary, out.Error = r.Status, r.Turns, r.CostUSD, r.Unpriced > 0, r.Summary, r.Error
			}
		}
	})
	return finish(out, gotResult, err)
}

// Agent is `acu agent`, the stateless vision loop of ACU_AGENT_*: the task
// goes in as the boot output's observation, the session ends at the step
// limit (the loop has no completion of its own). It reports turns and the
// session's cost and model time (read from the loop's GET /state when the
// session ends).
type Agent struct{ Env []string }

func (Agent) Name() string { return "agent" }

func (a Agent) Run(ctx context.Context, j Job) Outcome {
	port, err := freePort()
	if err != nil {
		return Outcome{Status: "error", Error: err.Error()}
	}
	boot, _ := json.Marshal(map[string]any{"observation": "Task: " + j.Task.Prompt + " Nothing done yet.", "bboxes": []any{}, "actions": []any{}})
	runsDir := filepath.Join(j.DataDir, "agent-runs")
	env := append(append(j.Env, a.Env...), "ACU_DATA_DIR="+j.DataDir, "ACU_AGENT_DISPLAY="+j.Display, "ACU_AGENT_PORT="+strconv.Itoa(port),
		"ACU_AGENT_BOOT_ENABLED=true", "ACU_AGENT_BOOT_VLM_OUTPUT="+string(boot), "ACU_AGENT_MAX_TURNS="+strconv.Itoa(j.Task.StepLimit),
		"ACU_AGENT_RUNS_DIR="+runsDir, "ACU_AGENT_LOG_LEVEL=info", "ACU_LOG_FORMAT=json")
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := Outcome{CostUnknown: true}
	ended := false
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.CommandContext(actx, j.Bin, "agent")
	cmd.Env = env
	cmd.Stdout = j.Log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return Outcome{Status: "error", Error: err.Error()}
	}
	if err := cmd.Start(); err != nil {
		return Outcome{Status: "error", Error: fmt.Sprintf("start acu agent: %v", err)}
	}
	scanLines(stderr, func(b []byte) {
		if j.Log != nil {
			_, _ = j.Log.Write(append(append([]byte(nil), b...), '\n'))
		}
		var l struct {
			Msg    string `json:"msg"`
			Status string `json:"status"`
			Reason string `json:"reason"`
		}
		if json.Unmarshal(b, &l) == nil && l.Msg == "agent session ended" && !ended {
			ended = true
			out.Status, out.Summary = l.Status, l.Reason
			if st, err := agentState(ctx, base, filepath.Join(j.DataDir, "token")); err == nil {
				out.CostUSD, out.CostUnknown, out.ModelMs = st.CostUSD, st.CostUnknown, st.ModelMs
			} else if j.Log != nil {
				fmt.Fprintf(j.Log, "read the agent's cost: %v\n", err)
			}
			cancel()
		}
	})
	werr := cmd.Wait()
	out.Steps = countTurns(runsDir)
	if !ended {
		out.Status = "error"
		if ctx.Err() != nil {
			out.Status, out.Error = "timeout", "the time limit ended the run"
		} else {
			out.Error = fmt.Sprintf("acu agent ended before its session did: %v", werr)
		}
	}
	return out
}

type agentStateReply struct {
	CostUSD     float64 `json:"cost_usd"`
	CostUnknown bool    `json:"cost_unknown"`
	ModelMs     float64 `json:"model_ms"`
}

// agentState reads the agent loop's GET /state with the daemon's token.
func agentState(ctx context.Context, base, tokenFile string) (agentStateReply, error) {
	var st agentStateReply
	tok, err := os.ReadFile(tokenFile)
	if err != nil {
		return st, err
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, base+"/state", nil)
	if err != nil {
		return st, err
	}
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("GET /state: %s", resp.Status)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// countTurns is the highest turn number in the agent's run directories
// (turns.jsonl may hold more than one line a turn).
func countTurns(dir string) int {
	files, _ := filepath.Glob(filepath.Join(dir, "*", "turns.jsonl"))
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			var t struct {
				Turn int `json:"turn"`
			}
			if json.Unmarshal([]byte(line), &t) == nil {
				n = max(n, t.Turn)
			}
		}
	}
	return n
}

type event struct {
	Stream string          `json:"stream"`
	Data   json.RawMessage `json:"data"`
}

// runLines runs `acu args...` and hands each JSON line of its stdout to fn.
func runLines(ctx context.Context, j Job, env, args []string, fn func(event)) error {
	cmd := exec.CommandContext(ctx, j.Bin, args...)
	cmd.Env = env
	cmd.Stderr = j.Log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = 10 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start acu %s: %w", args[0], err)
	}
	var mu sync.Mutex
	scanLines(stdout, func(b []byte) {
		if j.Log != nil {
			_, _ = j.Log.Write(append(append([]byte(nil), b...), '\n'))
		}
		var ev event
		if json.Unmarshal(b, &ev) == nil {
			mu.Lock()
			fn(ev)
			mu.Unlock()
		}
	})
	err = cmd.Wait()
	if ctx.Err() != nil {
		return errTimeout
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return nil // the exit status only repeats the result
	}
	return err
}

var errTimeout = errors.New("the time limit ended the run")

func finish(out Outcome, gotResult bool, err error) Outcome {
	switch {
	case errors.Is(err, errTimeout):
		out.Status, out.Error = "timeout", err.Error()
	case err != nil:
		out.Status, out.Error = "error", err.Error()
	case !gotResult:
		out.Status, out.Error = "error", "the engine printed no result (see its log)"
	}
	return out
}

// sumKey adds every number under key anywhere in the JSON value.
func sumKey(raw json.RawMessage, key string) float64 {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return 0
	}
	var walk func(any) float64
	walk = func(v any) float64 {
		s := 0.0
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if f, ok := x.(float64); ok && k == key {
					s += f
				} else {
					s += walk(x)
				}
			}
		case []any:
			for _, x := range v {
				s += walk(x)
			}
		}
		return s
	}
	return walk(v)
}

// startDaemon starts `acu serve` for the job and waits until it answers.
func startDaemon(ctx context.Context, j Job, env []string, port int) (stop func(), err error) {
	cmd := exec.Command(j.Bin, "serve")
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = j.Log, j.Log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start acu serve: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	stop = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/health", port)
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			return stop, nil
		}
		select {
		case <-done:
			return nil, errors.New("acu serve exited early (see the log)")
		case <-ctx.Done():
			stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("acu serve did not answer at %s within 30 s", url)
		}
	}
}
