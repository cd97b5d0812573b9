package main

// Identities that hold: MCP sessions bound to their token, a revoked
// token's streams ended, launched programs without the daemon's secrets,
// unique token names, host ids that cannot collide. Real acu processes,
// a real Xvfb, real SQLite.

import (
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/pgtest"
)

// createToken runs `acu token create` and returns the secret.
func createToken(t *testing.T, env []string, scope, name string) string {
	t.Helper()
	out, errOut, code := acu(t, env, "token", "create", "--scope", scope, "--name", name)
	if code != 0 {
		t.Fatalf("acu token create --scope %s --name %s: %d %s", scope, name, code, errOut)
	}
	return strings.TrimSpace(out)
}

// mcpPost sends one JSON-RPC message to /mcp with tok and session id, and
// returns the status and body.
func mcpPost(t *testing.T, base, tok, session, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", base+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestMCPSessionBoundToToken: a read token sending an admin's
// Mcp-Session-Id gets 403 and its launch_app does not run; it cannot end
// that session either; the admin's own call on the session runs.
func TestMCPSessionBoundToToken(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	d := startDaemon(t, env, dataDir, port)
	read := createToken(t, env, "read", "viewer")
	base := d.client.BaseURL()

	admin := mcp.NewClient(&mcp.Implementation{Name: "acu-test-admin", Version: "1"}, nil)
	adminTok, _ := os.ReadFile(filepath.Join(dataDir, "token"))
	s, err := admin.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{strings.TrimSpace(string(adminTok)), http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.ID() == "" {
		t.Fatal("the admin's MCP session has no id")
	}

	hijacked := filepath.Join(t.TempDir(), "hijacked")
	call := func(mark string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"launch_app","arguments":{"argv":["sh","-c","touch %s"]}}}`, mark)
	}
	code, body := mcpPost(t, base, read, s.ID(), call(hijacked))
	if code != http.StatusForbidden || !strings.Contains(body, "opened with another token") {
		t.Errorf("read token on the admin's session: POST /mcp = %d %q, want 403 saying the session is another token's", code, body)
	}
	req, _ := http.NewRequestWithContext(t.Context(), "DELETE", base+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+read)
	req.Header.Set("Mcp-Session-Id", s.ID())
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("read token: DELETE the admin's session = %v, %v, want 403", resp, err)
	} else {
		resp.Body.Close()
	}

	// The admin's own launch on its session runs (so the one above would
	// have, had it been let through): its file appears.
	mine := filepath.Join(t.TempDir(), "admin")
	res, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "launch_app", Arguments: map[string]any{"argv": []string{"sh", "-c", "touch " + mine}}})
	if err != nil || res.IsError {
		t.Fatalf("admin launch_app = %v, %v", resultText(res), err)
	}
	waitFile(t, mine)
	if _, err := os.Stat(hijacked); err == nil {
		t.Error("the read token's launch_app on the admin's session ran")
	}
}

// waitFile waits (generously: the machine is shared) for path to exist.
func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within 30s", path)
		}
	}
}

// openStream opens a GET stream with tok and returns its body once the
// response headers came.
func openStream(t *testing.T, url, tok string, header map[string]string) io.ReadCloser {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("GET %s = %d %s", url, resp.StatusCode, b)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp.Body
}

// mcpVersion is the protocol version the hand-made MCP sessions speak.
const mcpVersion = "2025-06-18"

// mcpInit opens an MCP session at /mcp with tok by hand (initialize, then
// notifications/initialized) and returns its id.
func mcpInit(t *testing.T, base, tok string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", base+"/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+mcpVersion+`","capabilities":{},"clientInfo":{"name":"acu-test","version":"1"}}}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("MCP initialize = %d (session %q) %s", resp.StatusCode, id, b)
	}
	if code, body := mcpPost(t, base, tok, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
		t.Fatalf("MCP notifications/initialized = %d %s", code, body)
	}
	return id
}

// TestRevokeEndsStreams: `acu token revoke`, another process writing the
// database, ends the token's open /v1/events stream, live-frame stream and
// MCP stream; the daemon's own token's stream goes on.
func TestRevokeEndsStreams(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	d := startDaemon(t, env, dataDir, port)
	read := createToken(t, env, "read", "watcher")
	base := d.client.BaseURL()

	// An MCP session of the read token, opened by hand so the test holds
	// its standalone GET stream.
	session := mcpInit(t, base, read)
	sse := map[string]string{"Accept": "text/event-stream"}
	streams := map[string]io.ReadCloser{
		"/v1/events":      openStream(t, base+"/v1/events", read, sse),
		"/v1/live/frames": openStream(t, base+"/v1/live/frames?max_fps=2", read, sse),
		"/mcp GET": openStream(t, base+"/mcp", read, map[string]string{"Accept": "text/event-stream",
			"Mcp-Session-Id": session, "Mcp-Protocol-Version": mcpVersion}),
	}
	adminTok, err := os.ReadFile(filepath.Join(dataDir, "token"))
	if err != nil {
		t.Fatal(err)
	}
	adminEvents := openStream(t, base+"/v1/events", strings.TrimSpace(string(adminTok)), sse)
	ended := make(chan string, len(streams)+1)
	for name, body := range streams {
		go func() {
			_, _ = io.Copy(io.Discard, body)
			ended <- name
		}()
	}
	adminEnded := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, adminEvents); close(adminEnded) }()
	select {
	case name := <-ended:
		t.Fatalf("%s ended before the token was revoked", name)
	case <-time.After(time.Second):
	}

	start := time.Now()
	if _, e, code := acu(t, env, "token", "revoke", "watcher"); code != 0 {
		t.Fatalf("acu token revoke: %s", e)
	}
	var gone []string
	for range streams {
		select {
		case name := <-ended:
			gone = append(gone, name)
			t.Logf("%s ended %v after `acu token revoke` started", name, time.Since(start).Round(time.Millisecond))
		case <-time.After(10 * time.Second):
			t.Fatalf("after revoking the token, only %v of its streams ended within 10s", gone)
		}
	}
	// The session itself is closed too (after its stream ended).
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(d.log.String(), "closed an MCP session of a revoked token"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the daemon did not close the revoked token's MCP session within 10s")
		}
	}
	select {
	case <-adminEnded:
		t.Error("the daemon token's /v1/events stream ended with the revoked token's")
	default:
	}
}

// TestLaunchedProgramsGetNoSecrets: an act token launches `sh -c 'env >
// file'` (an argv, and a desktop entry) on a daemon whose environment holds
// model keys, the webhook secret, a database URL and ACU_* settings: the
// program sees none of them, but does see the request's env and the
// variable ACU_LAUNCH_ENV_ALLOW names.
func TestLaunchedProgramsGetNoSecrets(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	secrets := map[string]string{
		"OPENROUTER_API_KEY": "sk-or-v1-leak1", "ANTHROPIC_API_KEY": "sk-ant-leak2", "ACU_WEBHOOK_SECRET": "leak3",
		"DATABASE_URL": "postgres://acu:leak4@db/acu", "PGPASSWORD": "leak5", "GITHUB_TOKEN": "ghp_leak6",
		"AGENT_API_KEY": "leak7", "ACU_PROBE_LEAK_VALUE": "leak8",
	}
	for k, v := range secrets {
		env = append(env, k+"="+v)
	}
	// ACU_LAUNCH_ARGV=act: the act token launches an argv too.
	env = append(env, "DEPLOY_TOKEN=wanted", "ACU_LAUNCH_ENV_ALLOW=DEPLOY_TOKEN", "ACU_LAUNCH_ARGV=act")
	apps := filepath.Join(dataDir, ".local/share/applications")
	if err := os.MkdirAll(apps, 0o700); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	entry := "[Desktop Entry]\nType=Application\nName=Env Dump\nExec=sh -c \"env > " + filepath.Join(out, "entry.env") + "\"\n"
	if err := os.WriteFile(filepath.Join(apps, "envdump.desktop"), []byte(entry), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, env, dataDir, port)
	actor := api.NewClient(d.client.BaseURL(), createToken(t, env, "act", "launcher"))

	if _, err := actor.Launch(t.Context(), api.LaunchRequest{Argv: []string{"sh", "-c", "env > " + filepath.Join(out, "argv.env")},
		Env: map[string]string{"EXTRA_SETTING": "from-the-request"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := actor.Launch(t.Context(), api.LaunchRequest{DesktopEntry: "envdump"}); err != nil {
		t.Fatal(err)
	}
	// acu launch --env, with the daemon's token.
	if _, e, code := acu(t, env, "launch", "--env", "EXTRA_SETTING=from-the-request", "--", "sh", "-c", "env > "+filepath.Join(out, "cli.env")); code != 0 {
		t.Fatalf("acu launch --env: %d %s", code, e)
	}
	for _, f := range []string{"argv.env", "entry.env", "cli.env"} {
		p := filepath.Join(out, f)
		waitFile(t, p)
		var b []byte
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if b, _ = os.ReadFile(p); strings.Contains(string(b), "DISPLAY=") {
				break // written through
			}
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		for _, kv := range lines {
			k, v, _ := strings.Cut(kv, "=")
			if strings.HasPrefix(k, "ACU_") || strings.Contains(v, "leak") {
				t.Errorf("%s: the launched program got %s", f, kv)
			}
		}
		for _, want := range []string{"DISPLAY=" + dpy, "DEPLOY_TOKEN=wanted", "HOME=" + dataDir} {
			if !slices.Contains(lines, want) {
				t.Errorf("%s: the launched program lacks %s", f, want)
			}
		}
		if f != "entry.env" && !slices.Contains(lines, "EXTRA_SETTING=from-the-request") {
			t.Errorf("%s: the request's env did not reach the program", f)
		}
	}
	// A bad env names the variable.
	_, err := actor.Launch(t.Context(), api.LaunchRequest{Argv: []string{"true"}, Env: map[string]string{"BAD-NAME": "x"}})
	if err == nil || !strings.Contains(err.Error(), "BAD-NAME") {
		t.Errorf("launch with env BAD-NAME = %v, want an error naming it", err)
	}
}

// TestTokenNames: `acu token create` refuses a name a valid token has (and
// one shaped like an id); `acu token revoke NAME` refuses when tokens made
// before names were unique share it, listing their ids, and revokes
// nothing: both still work.
func TestTokenNames(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	d := startDaemon(t, env, dataDir, port)
	createToken(t, env, "read", "ci")
	if _, e, code := acu(t, env, "token", "create", "--scope", "read", "--name", "ci"); code == 0 || !strings.Contains(e, `already named "ci"`) {
		t.Errorf("acu token create of a taken name: exit %d, %q; want a refusal naming it", code, e)
	}
	if _, e, code := acu(t, env, "token", "create", "--scope", "read", "--name", "tok_123"); code == 0 || !strings.Contains(e, "looks like a token id") {
		t.Errorf("acu token create --name tok_123: exit %d, %q; want a refusal", code, e)
	}
	list, _, _ := acu(t, env, "token", "list")
	if n := strings.Count(list, " ci "); n != 1 {
		t.Errorf("acu token list shows %d tokens named ci, want 1:\n%s", n, list)
	}

	// Two valid tokens named "shared", as an older acu could make them.
	db, err := sql.Open("sqlite", filepath.Join(dataDir, "acu.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	secrets := map[string]string{"tok_old1": "acu_old_secret_1", "tok_old2": "acu_old_secret_2"}
	for id, sec := range secrets {
		if _, err := db.ExecContext(t.Context(), `INSERT INTO tokens (id, name, hash, scopes, created_at) VALUES (?, 'shared', ?, 'read', ?)`,
			id, tokenHash(sec), time.Now().UnixMilli()); err != nil {
			t.Fatal(err)
		}
	}
	_, e, code := acu(t, env, "token", "revoke", "shared")
	if code == 0 || !strings.Contains(e, "tok_old1") || !strings.Contains(e, "tok_old2") {
		t.Errorf("acu token revoke shared: exit %d, %q; want a refusal listing tok_old1 and tok_old2", code, e)
	}
	for id, sec := range secrets {
		if _, err := api.NewClient(d.client.BaseURL(), sec).Runs(t.Context(), api.RunQuery{}); err != nil {
			t.Errorf("token %s after the refused revoke: %v, want it still valid", id, err)
		}
	}
	if _, e, code := acu(t, env, "token", "revoke", "tok_old1"); code != 0 {
		t.Fatalf("acu token revoke tok_old1: %s", e)
	}
	if _, e, code := acu(t, env, "token", "revoke", "shared"); code != 0 {
		t.Errorf("acu token revoke shared with one left: %s", e)
	}
}

// TestHostIDClash: two daemons on one database (two data directories and
// ports sharing one SQLite file) with one ACU_HOST_ID but different machine
// ids: the second refuses to start, naming both machines; with its own
// host id it starts.
func TestHostIDClash(t *testing.T) {
	hostIDClash(t, filepath.Join(t.TempDir(), "fleet.db"))
}

// TestHostIDClashOnPostgres: the same for two daemons of a fleet on one
// PostgreSQL database.
func TestHostIDClashOnPostgres(t *testing.T) {
	hostIDClash(t, pgtest.DSN(t))
}

func hostIDClash(t *testing.T, shared string) {
	dpy := startDisplay(t)
	envA, dirA, portA := newEnv(t, dpy)
	envA = append(envA, "ACU_DB="+shared, "ACU_HOST_ID=clone", "ACU_MACHINE_ID=machine-aaaa")
	startDaemon(t, envA, dirA, portA)

	envB, dirB, portB := newEnv(t, dpy)
	envB = append(envB, "ACU_DB="+shared, "ACU_HOST_ID=clone", "ACU_MACHINE_ID=machine-bbbb")
	cmd := exec.Command(acuBin, "serve")
	cmd.Env = envB
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var errOut syncBuffer
	cmd.Stdout, cmd.Stderr = &errOut, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	done := make(chan struct{})
	go func() { exited <- cmd.Wait(); close(done) }()
	defer func() {
		select {
		case <-done:
		default:
			cmd.Process.Kill()
			<-done
		}
	}()
	health := "http://127.0.0.1:" + strconv.Itoa(portB) + "/health"
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		select {
		case err := <-exited:
			if err == nil {
				t.Fatalf("the refused daemon exited 0:\n%s", errOut.String())
			}
		default:
			if resp, err := http.Get(health); err == nil {
				resp.Body.Close()
				t.Fatalf("a second daemon with host id clone on another machine started:\n%s", errOut.String())
			}
			if time.Now().After(deadline) {
				t.Fatalf("the second daemon neither started nor exited within a minute:\n%s", errOut.String())
			}
			continue
		}
		break
	}
	msg := errOut.String()
	for _, want := range []string{`"clone"`, "machine-aaaa", "machine-bbbb", "ACU_HOST_ID"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal does not name %s:\n%s", want, msg)
		}
	}

	// With a host id of its own it starts beside the first.
	envB = append(envB, "ACU_HOST_ID=clone-2")
	startDaemon(t, envB, dirB, portB)
}
