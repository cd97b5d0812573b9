package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/llm/llmtest"
)

// lifecyclePhases returns the phases of a run's lifecycle events, in order.
func lifecyclePhases(t *testing.T, cl *api.Client, runID string) string {
	t.Helper()
	evs, err := cl.EventsAfter(t.Context(), api.EventQuery{RunID: runID, Streams: []string{"lifecycle"}})
	if err != nil {
		t.Fatal(err)
	}
	var phases []string
	for _, e := range evs.Events {
		var lc api.Lifecycle
		json.Unmarshal(e.Data, &lc)
		phases = append(phases, lc.Phase)
	}
	return strings.Join(phases, ",")
}

// TestRunOwnership runs real processes on one SQLite database: standalone
// `acu computer` runs (waiting for the user, so they stay live) and the
// daemon. The daemon started beside a live computer run leaves it to its
// owner (the daemon `acu computer` started detached was killed first),
// streams its events live and wakes a waiter on its end; without a
// daemon `acu runs` reads the database and names the owner; kill -9 of the
// computer process ends its run once, by the daemon, naming the dead
// owner; kill -9 of the daemon leaves the computer's run to the computer.
func TestRunOwnership(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	env = append(env, "ACU_COMPUTER_API_KEY="+llmtest.Key, "ACU_OWNER_LEASE=3s")
	srv := llmtest.NewOpenAI(t, func(r llmtest.Request) llmtest.Reply {
		if last := r.Messages[len(r.Messages)-1]; strings.HasPrefix(last.Text, "The user answered: ") {
			return llmtest.Reply{Text: "Thought: Done.\nAction: finished(content='finished after the user answered')"}
		}
		return llmtest.Reply{Text: "Thought: I need the user.\nAction: call_user()"}
	})
	computer := func() (*bgProc, string) {
		p := startAcu(t, env, "computer", "-json", "--provider", "uitars", "--base-url", srv.URL, "log in to the mail client")
		id, _ := p.waitingRun(t)
		return p, id
	}
	ctx := t.Context()

	// acu computer starts a daemon, detached, when none answers; kill it
	// (-9): a computer run with no daemon beside it.
	p1, run1 := computer()
	killed := detachedPid(t, dataDir)
	if killed == 0 {
		t.Fatal("acu computer started no detached daemon")
	}
	syscall.Kill(killed, syscall.SIGKILL)
	eventually(t, 10*time.Second, "the detached daemon gone", func() bool { return processGone(killed) })

	// No daemon: the computer owns its run, and `acu runs` reads the
	// database to say so.
	out, errOut, code := acu(t, env, "runs", "list", "--live")
	want := fmt.Sprintf("computer pid %d on ", p1.cmd.Process.Pid)
	if code != 0 || !strings.Contains(out, run1) || !strings.Contains(out, want) || !strings.Contains(errOut, "reading the database") {
		t.Fatalf("acu runs list --live without a daemon: exit %d\n%s\n%s\nwant %s owned by %q", code, out, errOut, run1, want)
	}
	if out, _, code := acu(t, env, "events", "--run", run1, "--follow=false"); code != 0 || !strings.Contains(out, `"needs_user"`) {
		t.Errorf("acu events --run without a daemon: exit %d\n%s", code, out)
	}
	if out, errOut, code := acu(t, env, "waits", "list"); code != 0 || !strings.Contains(out, "CRITERIA") {
		t.Errorf("acu waits list without a daemon: exit %d\n%s\n%s", code, out, errOut)
	}
	if out, _, code := acu(t, env, "runs", "show", run1); code != 0 || !strings.Contains(out, `"program": "computer"`) {
		t.Errorf("acu runs show without a daemon: exit %d\n%s", code, out)
	}

	// The daemon starts beside it and leaves the run alone.
	d := startDaemon(t, env, dataDir, port)
	r1, err := d.client.Run(ctx, run1)
	if err != nil {
		t.Fatal(err)
	}
	if r1.EndedAt != nil || r1.Owner == nil || r1.Owner.Program != "computer" || r1.Owner.PID != p1.cmd.Process.Pid || !r1.Owner.Alive {
		t.Fatalf("computer run after the daemon started = %+v owner %+v, want live, owned by the computer process", r1, r1.Owner)
	}
	// The daemon streams the other process's events live and wakes a
	// waiter on its end.
	follow := startAcu(t, env, "events", "--run", run1)
	waited := make(chan api.WaitResult, 1)
	go func() {
		res, err := d.client.WaitRun(ctx, run1, 2*time.Minute)
		if err != nil {
			t.Errorf("WaitRun on the computer's run: %v", err)
		}
		waited <- res
	}()
	time.Sleep(500 * time.Millisecond) // the follower and the waiter are in place
	if _, errOut, code := acu(t, env, "runs", "resume", run1, "--message", "done it"); code != 0 {
		t.Fatalf("acu runs resume: exit %d: %s", code, errOut)
	}
	if code := p1.exit(t, time.Minute); code != 0 {
		t.Fatalf("acu computer: exit %d\n%s\n%s", code, p1.out, p1.errs)
	}
	select {
	case res := <-waited:
		if res.Status != "completed" {
			t.Errorf("waited result = %+v, want completed", res)
		}
	case <-time.After(time.Minute):
		t.Fatal("the daemon's run wait did not wake on the computer's end")
	}
	eventually(t, 30*time.Second, "the computer's turn and end in `acu events` through the daemon", func() bool {
		s := follow.out.String()
		return strings.Contains(s, `"stream":"turn"`) && strings.Contains(s, `"phase":"end"`)
	})
	if got := lifecyclePhases(t, d.client, run1); got != "start,end" {
		t.Errorf("computer run lifecycle = %s, want start,end", got)
	}

	// kill -9 of the computer: the daemon ends its run, once, naming it.
	p2, run2 := computer()
	pid2 := p2.cmd.Process.Pid
	p2.cmd.Process.Kill()
	<-p2.done
	var r2 api.Run
	eventually(t, 30*time.Second, "the killed computer's run ended by the daemon", func() bool {
		r2, err = d.client.Run(ctx, run2)
		return err == nil && r2.EndedAt != nil
	})
	if r2.Status != "error" || !strings.Contains(r2.Error, fmt.Sprintf("acu computer, pid %d", pid2)) {
		t.Errorf("killed computer's run = %s %q, want error naming its owner", r2.Status, r2.Error)
	}
	if got := lifecyclePhases(t, d.client, run2); got != "start,error" {
		t.Errorf("killed computer's run lifecycle = %s, want start,error", got)
	}

	// kill -9 of the daemon: the computer keeps its run and ends it itself.
	p3, run3 := computer()
	d.kill9()
	d2 := startDaemon(t, env, dataDir, port)
	r3, err := d2.client.Run(ctx, run3)
	if err != nil || r3.EndedAt != nil || r3.Owner == nil || r3.Owner.PID != p3.cmd.Process.Pid {
		t.Fatalf("computer run after the daemon's kill and restart = %+v %v, want live and the computer's", r3, err)
	}
	if _, errOut, code := acu(t, env, "runs", "resume", run3, "--message", "done it"); code != 0 {
		t.Fatalf("acu runs resume: exit %d: %s", code, errOut)
	}
	if code := p3.exit(t, time.Minute); code != 0 {
		t.Fatalf("acu computer: exit %d\n%s\n%s", code, p3.out, p3.errs)
	}
	if got := lifecyclePhases(t, d2.client, run3); got != "start,end" {
		t.Errorf("computer run across the daemon's kill = %s, want start,end", got)
	}
}
