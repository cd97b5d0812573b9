package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/dialect"
	"github.com/acu-dev/acu/internal/llm/llmtest"
)

// bgProc is an acu command running in the background.
type bgProc struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	errs *syncBuffer
	done chan struct{}
	code int
}

func startAcu(t *testing.T, env []string, args ...string) *bgProc {
	t.Helper()
	p := &bgProc{out: &syncBuffer{}, errs: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(acuBin, args...)
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.errs
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := p.cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.code = ee.ExitCode()
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// exit waits for the process's end and returns its exit code.
func (p *bgProc) exit(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(limit):
		t.Fatalf("acu %v still running after %s\nstdout:\n%s\nstderr:\n%s", p.cmd.Args[1:], limit, p.out, p.errs)
	}
	return -1
}

// waitingRun waits for the computer run's needs_user line (-json) and
// returns the run id and the event's data.
func (p *bgProc) waitingRun(t *testing.T) (string, api.ControlEvent) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		for _, line := range strings.Split(p.out.String(), "\n") {
			var ev struct {
				RunID  string           `json:"runId"`
				Stream string           `json:"stream"`
				Data   api.ControlEvent `json:"data"`
			}
			if json.Unmarshal([]byte(line), &ev) == nil && ev.Stream == "needs_user" {
				return ev.RunID, ev.Data
			}
		}
		select {
		case <-p.done:
			t.Fatalf("acu computer ended (exit %d) without waiting for the user\nstdout:\n%s\nstderr:\n%s", p.code, p.out, p.errs)
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("acu computer did not wait for the user\nstdout:\n%s\nstderr:\n%s", p.out, p.errs)
	return "", api.ControlEvent{}
}

// TestComputerResumeSafetyCheck: an OpenAI action with a pending safety
// check stops the run, which waits; resuming without acknowledging, or
// acknowledging with an act token, is refused; `acu runs resume
// --acknowledge` runs the same call acknowledged and the form is filled.
func TestComputerResumeSafetyCheck(t *testing.T) {
	dpy := startDisplay(t)
	session := atspitest.Start(t, dpy)
	env, dataDir, port := newEnv(t, dpy)
	env = append(env, "DBUS_SESSION_BUS_ADDRESS="+session.SessionBus, "ACU_COMPUTER_API_KEY="+llmtest.Key, "ACU_LOG_LEVEL=warn",
		"ACU_ACT_USER_QUIET=200ms")
	d := startDaemon(t, env, dataDir, port)
	title := "Acu Resume openai"
	app := zenityForm(t, dpy, session, title)
	tool, err := d.client.ComputerTool(t.Context(), "openai", api.ComputerQuery{Limit: "1024x768"})
	if err != nil {
		t.Fatal(err)
	}
	fields := formFields(t, d.client, title)
	img, screen := dialect.Size{W: tool.Image[0], H: tool.Image[1]}, dialect.Size{W: tool.Screen[0], H: tool.Screen[1]}
	var pts [3][2]int
	for i := range pts {
		pts[i][0], pts[i][1] = dialect.FromScreen(fields[i][0], fields[i][1], img, screen)
	}
	f := openaiFake(t, pts[0], pts[1], pts[2])
	p := startAcu(t, env, "computer", "-json", "--provider", "openai", "--limit", "1024x768", "--base-url", f.URL+"/v1",
		"Enter Ada Lovelace as the name and London as the city, then press OK")
	runID, ask := p.waitingRun(t)
	if ask.Reason != "safety_check" || !strings.Contains(ask.Message, "malicious_instructions") || !strings.Contains(string(ask.Pending), "cu_sc_1") {
		t.Errorf("needs_user = %+v, want the safety check", ask)
	}
	// The run is live, and says why it waits.
	evs, err := d.client.EventsAfter(t.Context(), api.EventQuery{RunID: runID, Streams: []string{api.StreamControl}})
	if err != nil || len(evs.Events) != 1 || !strings.Contains(string(evs.Events[0].Data), `"needs_user"`) {
		t.Errorf("control events = %+v (%v)", evs, err)
	}

	// Without --acknowledge: refused, saying what to do.
	_, errOut, code := acu(t, env, "runs", "resume", runID)
	if code == 0 || !strings.Contains(errOut, "acknowledge") {
		t.Errorf("resume without --acknowledge: exit %d, %q", code, errOut)
	}
	// An act token may not accept safety checks.
	out, errOut, code := acu(t, env, "token", "create", "--scope", "act", "--name", "agent")
	if code != 0 {
		t.Fatalf("acu token create: %s", errOut)
	}
	agent := api.NewClient(d.client.BaseURL(), strings.TrimSpace(out))
	var ae *api.StatusError
	if _, err := agent.ResumeRun(t.Context(), runID, api.ResumeRequest{Acknowledge: true}); !errors.As(err, &ae) || ae.Status != 403 {
		t.Errorf("act token acknowledging: %v, want 403", err)
	}
	select {
	case <-p.done:
		t.Fatalf("acu computer ended before the user answered (exit %d)\n%s", p.code, p.out)
	default:
	}

	out, errOut, code = acu(t, env, "runs", "resume", runID, "--acknowledge")
	if code != 0 {
		t.Fatalf("acu runs resume --acknowledge: exit %d: %s", code, errOut)
	}
	var rr api.ResumeResult
	var ce api.ControlEvent
	if err := json.Unmarshal([]byte(out), &rr); err != nil || rr.Event.Stream != api.StreamControl || json.Unmarshal(rr.Event.Data, &ce) != nil ||
		ce.Action != "resume" || !ce.Acknowledge || ce.By != "token-file" {
		t.Errorf("resume printed %q (%v)", out, err)
	}
	if code := p.exit(t, 2*time.Minute); code != 0 {
		t.Fatalf("acu computer exit %d after the resume\nstdout:\n%s\nstderr:\n%s", code, p.out, p.errs)
	}
	f.check(t) // turn 3 came back acknowledging cu_sc_1
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if got, err := app.Wait(ctx); err != nil || got != "Ada Lovelace|London\n" {
		t.Errorf("zenity printed %q (%v)", got, err)
	}
	// Resuming an ended run: a conflict naming it.
	if _, errOut, code := acu(t, env, "runs", "resume", runID); code == 0 || !strings.Contains(errOut, "ended") {
		t.Errorf("resume of an ended run: exit %d, %q", code, errOut)
	}
}

// TestComputerResumeCallUser: UI-TARS's call_user() hands the run to the
// user; the message given with `acu runs resume` reaches the model with a
// fresh screenshot. A cancel while waiting ends the run cancelled (exit
// 130), and nobody answering within --user-timeout ends it with exit 3.
func TestComputerResumeCallUser(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	env = append(env, "ACU_COMPUTER_API_KEY="+llmtest.Key, "ACU_LOG_LEVEL=warn")
	d := startDaemon(t, env, dataDir, port)
	var mu sync.Mutex
	var heard []string
	srv := llmtest.NewOpenAI(t, func(r llmtest.Request) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		last := r.Messages[len(r.Messages)-1]
		if strings.HasPrefix(last.Text, "The user answered: ") {
			heard = append(heard, last.Text)
			if len(last.Images) != 1 || last.Images[0].Image == nil {
				t.Errorf("the user's answer came with %d images, want the screen as it is now", len(last.Images))
			}
			return llmtest.Reply{Text: "Thought: The user logged in.\nAction: finished(content='done after the user helped')"}
		}
		return llmtest.Reply{Text: "Thought: This needs a password I do not have.\nAction: call_user()"}
	})
	args := []string{"computer", "-json", "--provider", "uitars", "--base-url", srv.URL}

	t.Run("resume", func(t *testing.T) {
		p := startAcu(t, env, append(args, "log in to the mail client")...)
		runID, ask := p.waitingRun(t)
		if ask.Reason != "call_user" {
			t.Errorf("needs_user = %+v", ask)
		}
		if _, errOut, code := acu(t, env, "runs", "resume", runID, "--message", "I typed the password"); code != 0 {
			t.Fatalf("acu runs resume: exit %d: %s", code, errOut)
		}
		if code := p.exit(t, time.Minute); code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, p.out, p.errs)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(heard) != 1 || heard[0] != "The user answered: I typed the password" {
			t.Errorf("the model heard %q", heard)
		}
		if !strings.Contains(p.out.String(), "done after the user helped") {
			t.Errorf("no finished result:\n%s", p.out)
		}
	})
	t.Run("mcp", func(t *testing.T) {
		// The same answer through the daemon's MCP tool run_resume, as an
		// agent supervising the run would give it.
		client := mcp.NewClient(&mcp.Implementation{Name: "acu-test", Version: "1"}, nil)
		s, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: d.client.BaseURL() + "/mcp",
			HTTPClient: &http.Client{Transport: bearer{tokenOf(t, dataDir), http.DefaultTransport}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if res, _ := callTool(t, s, "run_resume", map[string]any{"run_id": "computer_nosuchrun"}); !res.IsError {
			t.Errorf("run_resume of an unknown run: %q, want an error", resultText(res))
		}
		p := startAcu(t, env, append(args, "log in to the mail client")...)
		runID, _ := p.waitingRun(t)
		res, out := callTool(t, s, "run_resume", map[string]any{"run_id": runID, "message": "I typed it over MCP"})
		if res.IsError || out["run_id"] != runID || out["cursor"] == nil {
			t.Fatalf("run_resume: %q %v", resultText(res), out)
		}
		if code := p.exit(t, time.Minute); code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, p.out, p.errs)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(heard) != 2 || heard[1] != "The user answered: I typed it over MCP" {
			t.Errorf("the model heard %q", heard)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		p := startAcu(t, env, append(args, "log in to the mail client")...)
		runID, _ := p.waitingRun(t)
		if _, errOut, code := acu(t, env, "runs", "cancel", runID, "--reason", "not today"); code != 0 {
			t.Fatalf("acu runs cancel: exit %d: %s", code, errOut)
		}
		if code := p.exit(t, time.Minute); code != 130 {
			t.Errorf("exit %d after a cancel, want 130\n%s\n%s", code, p.out, p.errs)
		}
		run, err := d.client.Run(t.Context(), runID)
		if err != nil || run.Status != "cancelled" {
			t.Errorf("run = %+v (%v), want cancelled", run, err)
		}
	})
	t.Run("nobody answers", func(t *testing.T) {
		stdout, stderr, code := acu(t, env, append(args, "--user-timeout", "1s", "log in to the mail client")...)
		if code != 3 || !strings.Contains(stdout, `"status":"needs_user"`) {
			t.Errorf("exit %d, want 3 with status needs_user\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
	})
	t.Run("not waiting", func(t *testing.T) {
		w, err := d.client.CreateWait(t.Context(), api.CreateWait{Criteria: `"never shown" is visible`, Timeout: 30})
		if err != nil {
			t.Fatal(err)
		}
		_, errOut, code := acu(t, env, "runs", "resume", w.ID)
		if code == 0 || !strings.Contains(errOut, "not waiting for the user") {
			t.Errorf("resume of a wait: exit %d, %q", code, errOut)
		}
		_, _ = d.client.CancelWait(t.Context(), w.ID, "test over")
	})
}
