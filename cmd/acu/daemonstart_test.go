package main

// A daemon that starts: a port something else holds turns the optional
// listener off, not the daemon; `acu mcp` answers every tool call with the
// reason when no daemon can start; a daemon acu mcp started exits once
// idle (ACU_IDLE_EXIT), never while a run is live or an acu mcp runs.

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/api"
)

// holdPort listens on a free loopback port, closing every connection it
// accepts, until the test ends or release is called.
func holdPort(t *testing.T) (port int, release func()) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	release = func() { l.Close(); <-done }
	t.Cleanup(release)
	return l.Addr().(*net.TCPAddr).Port, release
}

// TestServeRunsWithPortsTaken: the relay's and the agent panel's ports held
// by another process turn those parts off, named with their settings in
// the log, /health and acu doctor; waits and screenshots work.
func TestServeRunsWithPortsTaken(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	relayPort, _ := holdPort(t)
	agentPort, _ := holdPort(t)
	env = append(env, "ACU_RELAY_PORT="+strconv.Itoa(relayPort), "ACU_AGENT_ENABLED=true", "ACU_AGENT_PORT="+strconv.Itoa(agentPort),
		"ACU_AGENT_API_URL=http://127.0.0.1:9/v1", "ACU_AGENT_MODEL=none")
	d := startDaemon(t, env, dataDir, port)

	h, err := d.client.Health(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"relay": "ACU_RELAY_PORT", "agent": "ACU_AGENT_PORT"}
	ports := map[string]int{"relay": relayPort, "agent": agentPort}
	if h.Status != "degraded" || len(h.Degraded) != 2 {
		t.Fatalf("health = %+v, want degraded with the relay and the agent", h)
	}
	for _, p := range h.Degraded {
		if p.Setting != want[p.Component] || p.Addr != "127.0.0.1:"+strconv.Itoa(ports[p.Component]) || !strings.Contains(p.Error, "address already in use") {
			t.Errorf("degraded part %+v, want component relay or agent, its port, its setting, the bind error", p)
		}
		logged := false
		for _, line := range strings.Split(d.log.String(), "\n") {
			logged = logged || strings.Contains(line, "WARN") && strings.Contains(line, p.Addr) && strings.Contains(line, p.Setting)
		}
		if !logged {
			t.Errorf("no warning naming %s and %s in the log", p.Addr, p.Setting)
		}
	}
	// The fields /health had before are all still there.
	resp, err := http.Get(d.client.BaseURL() + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	err = json.NewDecoder(resp.Body).Decode(&raw)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"status", "version", "epoch", "started", "liveRuns", "judge", "problems", "degraded"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("/health has no %q: %v", k, raw)
		}
	}

	// The rest runs: a wait resolves, a screenshot is taken.
	xtermShowing(t, dpy, "ready", "All systems go", 0)
	w, err := d.client.CreateWait(t.Context(), api.CreateWait{Criteria: `"All systems go" is visible`, Timeout: 120, Target: "window:ready"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.client.WaitRun(t.Context(), w.ID, 90*time.Second)
	if err != nil || r.Status != "resolved" {
		t.Fatalf("WaitRun(%s) = %+v, %v; want resolved", w.ID, r, err)
	}
	if shot, err := d.client.Screenshot(t.Context(), "", "screen", "png"); err != nil || shot.Width == 0 {
		t.Errorf("Screenshot = %+v, %v", shot.Width, err)
	}

	out, errOut, _ := acu(t, env, "doctor")
	for _, c := range []string{"relay", "agent"} {
		found := false
		for _, line := range strings.Split(out, "\n") {
			found = found || strings.HasPrefix(line, "warn "+c) && strings.Contains(line, want[c]) && strings.Contains(line, strconv.Itoa(ports[c]))
		}
		if !found {
			t.Errorf("acu doctor has no warn line for the %s naming %s and its port:\n%s\n%s", c, want[c], out, errOut)
		}
	}
}

// TestMCPSaysWhyNoDaemon: with the daemon's port held by something that is
// not acu, `acu mcp` still initializes and lists its tools, and a tool call
// answers with an error naming the setting and quoting the daemon's log;
// once the port is free the next call starts the daemon and runs.
func TestMCPSaysWhyNoDaemon(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	stopDetachedAtCleanup(t, dataDir)
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan struct{})
	go func() {
		defer close(held)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	t.Cleanup(func() { l.Close(); <-held })

	p := startMCP(t, env) // initialize completes
	tools, err := p.session.ListTools(t.Context(), nil)
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("ListTools = %v, %v", tools, err)
	}
	res, err := p.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "smart_wait",
		Arguments: map[string]any{"wake_when": `"x" is visible`, "timeout": 30}})
	if err != nil {
		t.Fatalf("smart_wait: %v (want a tool error result, not a protocol failure)", err)
	}
	text := resultText(res)
	for _, want := range []string{"ACU_DAEMON_PORT", "address already in use", filepath.Join(dataDir, "daemon.log"), "smart_wait did not run"} {
		if !res.IsError || !strings.Contains(text, want) {
			t.Errorf("smart_wait = error %v %q; want an error containing %q", res.IsError, text, want)
		}
	}
	if pid := detachedPid(t, dataDir); pid != 0 && !processGone(pid) {
		t.Errorf("a daemon (pid %d) runs though it could not listen", pid)
	}

	l.Close()
	<-held
	res, out := callTool(t, p.session, "smart_wait", map[string]any{"wake_when": `"x" is visible`, "timeout": 30})
	if res.IsError || out["id"] == nil {
		t.Fatalf("smart_wait once the port is free = %q %v, want a wait", resultText(res), out)
	}
}

// TestDetachedDaemonIdleExit: a daemon acu mcp started with ACU_IDLE_EXIT
// set stays while an acu mcp runs and while a wait is live, and exits by
// itself once neither is; a daemon the user runs never exits for idleness.
func TestDetachedDaemonIdleExit(t *testing.T) {
	dpy := startDisplay(t)
	const idle = 2 * time.Second
	// A few idle periods: a daemon that wrongly exits has had the time to.
	const watch = 5 * idle
	idleEnv := func(t *testing.T) ([]string, string, int) {
		env, dataDir, port := newEnv(t, dpy)
		return append(env, "ACU_IDLE_EXIT="+idle.String()), dataDir, port
	}
	gone := func(t *testing.T, dataDir string, pid int) {
		t.Helper()
		eventually(t, 2*time.Minute, "the idle daemon's exit", func() bool { return processGone(pid) })
		b, _ := os.ReadFile(filepath.Join(dataDir, "daemon.log"))
		if !strings.Contains(string(b), "no live run and no client for ACU_IDLE_EXIT") {
			t.Errorf("daemon.log does not say why it exited:\n%s", b)
		}
	}

	t.Run("client", func(t *testing.T) {
		t.Parallel()
		env, dataDir, port := idleEnv(t)
		stopDetachedAtCleanup(t, dataDir)
		p := startMCP(t, env)
		cl := apiClient(t, dataDir, port)
		var pid int
		eventually(t, time.Minute, "the detached daemon", func() bool {
			_, err := cl.Health(t.Context())
			pid = detachedPid(t, dataDir)
			return err == nil && pid != 0
		})
		time.Sleep(watch)
		if processGone(pid) {
			t.Fatalf("the daemon exited for idleness while acu mcp ran")
		}
		p.kill()
		gone(t, dataDir, pid)
	})

	t.Run("live wait", func(t *testing.T) {
		t.Parallel()
		env, dataDir, port := idleEnv(t)
		stopDetachedAtCleanup(t, dataDir)
		p := startMCP(t, env)
		res, job := callTool(t, p.session, "smart_wait", map[string]any{"wake_when": `"never shown anywhere" is visible`, "timeout": 600})
		id, _ := job["id"].(string)
		if res.IsError || id == "" {
			t.Fatalf("smart_wait = %q %v", resultText(res), job)
		}
		pid := detachedPid(t, dataDir)
		p.kill()
		time.Sleep(watch)
		if processGone(pid) {
			t.Fatalf("the daemon exited for idleness with a live wait")
		}
		cl := apiClient(t, dataDir, port)
		if _, err := cl.CancelWait(t.Context(), id, "test done"); err != nil {
			t.Fatal(err)
		}
		gone(t, dataDir, pid)
	})

	t.Run("user's daemon", func(t *testing.T) {
		t.Parallel()
		env, dataDir, port := idleEnv(t)
		d := startDaemon(t, env, dataDir, port)
		time.Sleep(watch)
		select {
		case <-d.done:
			t.Fatalf("acu serve (not detached) exited with ACU_IDLE_EXIT=%s:\n%s", idle, d.log)
		default:
		}
		if strings.Contains(d.log.String(), "ACU_IDLE_EXIT") {
			t.Errorf("acu serve (not detached) applies ACU_IDLE_EXIT:\n%s", d.log)
		}
	})
}

// TestMCPForeignDaemon: a daemon of another data directory (another
// user's) on the configured port answers /health but refuses this data
// directory's token: acu mcp's tool calls say so and name the setting,
// and start no daemon of their own.
func TestMCPForeignDaemon(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	startDaemon(t, env, dataDir, port)

	env2, dataDir2, _ := newEnv(t, dpy)
	env2 = append(env2, "ACU_DAEMON_PORT="+strconv.Itoa(port))
	stopDetachedAtCleanup(t, dataDir2)
	p := startMCP(t, env2)
	res, err := p.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "wait_status", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	text := resultText(res)
	for _, want := range []string{"refuses this data directory's token", "ACU_DAEMON_PORT", filepath.Join(dataDir2, "token")} {
		if !res.IsError || !strings.Contains(text, want) {
			t.Errorf("wait_status = error %v %q; want an error containing %q", res.IsError, text, want)
		}
	}
	if pid := detachedPid(t, dataDir2); pid != 0 {
		t.Errorf("acu mcp started a daemon (pid %d) though one answers on its port", pid)
	}
}
