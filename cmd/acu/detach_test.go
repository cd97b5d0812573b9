package main

// `acu mcp` never runs the engine itself: with no daemon answering, it
// starts `acu serve` detached and relays to it, so a wait outlives the MCP
// process that accepted it.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/store"
	"github.com/acu-dev/acu/internal/testx"
)

// stopDetachedAtCleanup stops, at the test's end, the daemon an `acu mcp`
// of the test started in dataDir (found by its pid file), and fails the
// test if it does not stop.
func stopDetachedAtCleanup(t *testing.T, dataDir string) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(dataDir, "daemon.log")); err == nil {
				t.Logf("daemon.log:\n%s", b)
			}
		}
		stopDetached(t, dataDir)
	})
}

// detachedPid returns the pid in dataDir's daemon.pid, or 0.
func detachedPid(t *testing.T, dataDir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dataDir, "daemon.pid"))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("daemon.pid = %q", b)
	}
	return pid
}

// processGone reports whether pid has exited (a zombie counts: its parent
// is gone, so init reaps it).
func processGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && len(s) > i+2 {
		return s[i+2] == 'Z'
	}
	return false
}

// stopDetached stops the detached daemon of dataDir with SIGTERM and waits
// until it has exited.
func stopDetached(t *testing.T, dataDir string) {
	t.Helper()
	pid := detachedPid(t, dataDir)
	if pid == 0 || processGone(pid) {
		return
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		t.Errorf("stop the detached daemon %d: %v", pid, err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Errorf("the detached daemon %d did not stop on SIGTERM within 20s", pid)
			syscall.Kill(pid, syscall.SIGKILL)
			for !processGone(pid) {
				time.Sleep(50 * time.Millisecond)
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// mcpProc is an `acu mcp` process driven by the SDK's client over stdio.
type mcpProc struct {
	cmd     *exec.Cmd
	session *mcp.ClientSession
}

func startMCP(t *testing.T, env []string) *mcpProc {
	t.Helper()
	cmd := exec.Command(acuBin, "mcp")
	cmd.Env = env
	client := mcp.NewClient(&mcp.Implementation{Name: "acu-test", Version: "1"}, nil)
	s, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &mcpProc{cmd: cmd, session: s}
	t.Cleanup(func() { p.kill() })
	return p
}

// kill ends `acu mcp` with SIGKILL, as a client that retires its MCP
// servers may, and reaps it.
func (p *mcpProc) kill() {
	if p.cmd.ProcessState != nil {
		return
	}
	p.cmd.Process.Kill()
	p.session.Close() // waits for the process
}

// apiClient is a client of the daemon of dataDir, as the CLI builds one.
func apiClient(t *testing.T, dataDir string, port int) *api.Client {
	t.Helper()
	return api.NewClient(fmt.Sprintf("http://127.0.0.1:%d", port), tokenOf(t, dataDir))
}

// xtermOnTrigger starts an xterm titled title that shows "Compiling..."
// and prints text once the file trigger exists.
func xtermOnTrigger(t *testing.T, display, title, text, trigger string) {
	t.Helper()
	script := fmt.Sprintf("echo 'Compiling...'; while [ ! -e '%s' ]; do sleep 0.1; done; echo '%s'; exec sleep 600", trigger, text)
	testx.StartXterm(t, display, testx.XtermSpec{Title: title, Geometry: "70x12+20+20",
		Args: []string{"-fa", "DejaVu Sans Mono", "-fs", "14"}, Command: []string{"sh", "-c", script}})
}

// checkDeliveredOnce stops the daemon of dataDir, then checks that run id's
// wake was delivered exactly once: one line in the exec notifier's file,
// one outbox row, one attempt, delivered.
func checkDeliveredOnce(t *testing.T, dataDir, id string) {
	t.Helper()
	notified := filepath.Join(dataDir, "notified.txt")
	eventually(t, 30*time.Second, "the wake", func() bool { return len(readLines(t, notified)) >= 1 })
	db, err := store.Open(t.Context(), filepath.Join(dataDir, "acu.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The line is written before the notifier's process exits and the
	// attempt is recorded: stopping the daemon in between would interrupt
	// an attempt that had delivered.
	eventually(t, 30*time.Second, "the wake recorded as delivered", func() bool {
		items, err := db.Outbox(t.Context(), id)
		return err == nil && len(items) > 0 && items[0].Delivered()
	})
	stopDetached(t, dataDir) // nothing can deliver a second time once it is down
	items, err := db.Outbox(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || !items[0].Delivered() || items[0].Attempts != 1 {
		t.Fatalf("outbox of %s = %+v, want one item delivered at the first attempt", id, items)
	}
	if lines := readLines(t, notified); len(lines) != 1 || lines[0] != items[0].Message {
		t.Errorf("notified = %q, want exactly [%q]", lines, items[0].Message)
	}
}

// TestMCPWaitOutlivesMCP kills `acu mcp` after it accepted a wait, then
// makes the condition true: the detached daemon it started resolves the
// wait and wakes the agent exactly once.
func TestMCPWaitOutlivesMCP(t *testing.T) {
	dpy := startDisplay(t)

	t.Run("non-blocking", func(t *testing.T) {
		env, dataDir, port := newEnv(t, dpy)
		stopDetachedAtCleanup(t, dataDir)
		trigger := filepath.Join(dataDir, "go")
		xtermOnTrigger(t, dpy, "builder1", "Build succeeded", trigger)

		p := startMCP(t, env)
		res, job := callTool(t, p.session, "smart_wait", map[string]any{
			"wake_when": `"Build succeeded" is visible`, "timeout": 120, "target": "window:builder1"})
		id, _ := job["id"].(string)
		if res.IsError || id == "" || job["state"] != "watching" {
			t.Fatalf("smart_wait = %v %q", job, resultText(res))
		}
		pid := detachedPid(t, dataDir)
		if pid == 0 || pid == p.cmd.Process.Pid {
			t.Fatalf("daemon pid = %d, acu mcp pid = %d: want a daemon of its own", pid, p.cmd.Process.Pid)
		}
		p.kill()

		if err := os.WriteFile(trigger, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		cl := apiClient(t, dataDir, port)
		r, err := cl.WaitRun(t.Context(), id, 90*time.Second)
		if err != nil || r.Status != "resolved" {
			t.Fatalf("WaitRun(%s) = %+v, %v; want resolved", id, r, err)
		}
		if got := detachedPid(t, dataDir); got != pid {
			t.Errorf("daemon pid = %d after acu mcp died, want %d (the same daemon)", got, pid)
		}
		checkDeliveredOnce(t, dataDir, id)
	})

	t.Run("blocking", func(t *testing.T) {
		env, dataDir, port := newEnv(t, dpy)
		stopDetachedAtCleanup(t, dataDir)
		trigger := filepath.Join(dataDir, "go")
		xtermOnTrigger(t, dpy, "builder2", "Tests passed", trigger)

		p := startMCP(t, env)
		var wg sync.WaitGroup
		callErr := make(chan error, 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := p.session.CallTool(context.WithoutCancel(t.Context()), &mcp.CallToolParams{Name: "smart_wait", Arguments: map[string]any{
				"wake_when": `"Tests passed" is visible`, "timeout": 120, "target": "window:builder2", "block_seconds": 55}})
			callErr <- err
		}()
		defer wg.Wait()

		// The blocking call is under way once the daemon has the run live.
		cl := apiClient(t, dataDir, port)
		var id string
		eventually(t, 60*time.Second, "the blocking wait's run", func() bool {
			if detachedPid(t, dataDir) == 0 {
				return false
			}
			l, err := cl.Runs(t.Context(), api.RunQuery{Live: ptr(true)})
			if err != nil || len(l.Runs) != 1 {
				return false
			}
			id = l.Runs[0].ID
			return true
		})
		p.kill()
		if err := <-callErr; err == nil {
			t.Errorf("the blocking smart_wait returned no error though acu mcp was killed under it")
		}

		if err := os.WriteFile(trigger, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := cl.WaitRun(t.Context(), id, 90*time.Second)
		if err != nil || r.Status != "resolved" {
			t.Fatalf("WaitRun(%s) = %+v, %v; want resolved", id, r, err)
		}
		checkDeliveredOnce(t, dataDir, id)
	})
}

// TestMCPStartsOneDaemon starts two `acu mcp` at once with no daemon: one
// daemon starts, detached (a session of its own, SIGHUP ignored), and both
// relay to it.
func TestMCPStartsOneDaemon(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	stopDetachedAtCleanup(t, dataDir)

	var wg sync.WaitGroup
	procs := make([]*mcpProc, 2)
	errs := make([]error, 2)
	for i := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(acuBin, "mcp")
			cmd.Env = env
			client := mcp.NewClient(&mcp.Implementation{Name: "acu-test", Version: "1"}, nil)
			s, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				errs[i] = err
				return
			}
			procs[i] = &mcpProc{cmd: cmd, session: s}
			_, errs[i] = s.CallTool(t.Context(), &mcp.CallToolParams{Name: "wait_status", Arguments: map[string]any{}})
		}()
	}
	wg.Wait()
	for i, p := range procs {
		if p != nil {
			t.Cleanup(p.kill)
		}
		if errs[i] != nil {
			t.Fatalf("acu mcp %d: %v", i, errs[i])
		}
	}
	log, err := os.ReadFile(filepath.Join(dataDir, "daemon.log"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(log), "acu serving"); n != 1 || strings.Contains(string(log), "another acu serve") {
		t.Errorf("daemon.log shows %d daemons serving, want 1:\n%s", n, log)
	}
	pid := detachedPid(t, dataDir)
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if fields[3] != strconv.Itoa(pid) { // session id: the daemon leads a session of its own
		t.Errorf("daemon %d is in session %s, want its own", pid, fields[3])
	}

	// Both MCP processes gone, and a SIGHUP: the daemon stays.
	for _, p := range procs {
		p.kill()
	}
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if _, err := apiClient(t, dataDir, port).Health(t.Context()); err != nil || processGone(pid) {
		t.Errorf("after its acu mcp processes died and a SIGHUP, the daemon answers %v (gone %v)", err, processGone(pid))
	}
}

// TestServeOnePerDataDir: a second daemon on a data directory in use stops
// before it opens the store, even on another port.
func TestServeOnePerDataDir(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	startDaemon(t, env, dataDir, port)
	other := append(append([]string(nil), env...), "ACU_DAEMON_PORT="+strconv.Itoa(freePort(t)))
	_, errOut, code := acu(t, other, "serve")
	if code == 0 || !strings.Contains(errOut, "another acu serve") || !strings.Contains(errOut, strconv.Itoa(detachedPid(t, dataDir))) {
		t.Errorf("a second acu serve on %s = %d %q, want a refusal naming the first one's pid", dataDir, code, errOut)
	}
}
