package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/jpeg"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The origin relay's clients, sinain-hud's own code (testdata/sinain-hud,
// its commit in the README there), against a real `acu relay`: they send
// no token, so they work under ACU_RELAY_AUTH=none and get 401 by default.

// relayProc is a real `acu relay` process.
type relayProc struct {
	base    string
	dataDir string
	env     []string
	log     *syncBuffer
}

// startRelay starts `acu relay` (analysis loop off) with extra settings
// and waits until it answers.
func startRelay(t *testing.T, extra ...string) *relayProc {
	t.Helper()
	dataDir := t.TempDir()
	port := freePort(t)
	env := append(os.Environ(), "HOME="+dataDir, "XDG_CONFIG_HOME="+dataDir, "ACU_DATA_DIR="+dataDir,
		"ACU_RELAY_PORT="+strconv.Itoa(port), "AGENT_ENABLED=false", "ACU_LOG_LEVEL=debug")
	env = append(env, extra...)
	p := &relayProc{base: fmt.Sprintf("http://127.0.0.1:%d", port), dataDir: dataDir, env: env, log: &syncBuffer{}}
	cmd := exec.Command(acuBin, "relay")
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = p.log, p.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Errorf("acu relay did not stop on SIGTERM within 15s")
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("relay log:\n%s", p.log)
		}
	})
	eventually(t, 30*time.Second, "acu relay to answer", func() bool {
		select {
		case <-done:
			t.Fatalf("acu relay exited early:\n%s", p.log)
		default:
		}
		resp, err := http.Get(p.base + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return true
	})
	return p
}

// get reads path with the relay's token.
func (p *relayProc) get(t *testing.T, path string, v any) {
	t.Helper()
	tok, err := os.ReadFile(filepath.Join(p.dataDir, "relay-token"))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(t.Context(), "GET", p.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s = %d %s", path, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v in %s", path, err, b)
	}
}

// originDir is where sinain-hud's files and the harness are.
func originDir(t *testing.T, name string) string {
	t.Helper()
	d, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// hudPush runs sinain-hud's hud-push.sh. The script's one setting, its
// hard-coded RELAY="http://localhost:18791", is pointed at the test's
// relay; every other line runs as written (bash, curl, python3).
func hudPush(t *testing.T, base string, args ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(originDir(t, "sinain-hud"), "server", "scripts", "hud-push.sh"))
	if err != nil {
		t.Fatal(err)
	}
	const line = `RELAY="http://localhost:18791"`
	if strings.Count(string(b), line) != 1 {
		t.Fatalf("hud-push.sh has no single %s line", line)
	}
	port := base[strings.LastIndex(base, ":")+1:]
	script := filepath.Join(t.TempDir(), "hud-push.sh")
	if err := os.WriteFile(script, []byte(strings.Replace(string(b), line, `RELAY="http://localhost:`+port+`"`, 1)), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), "bash", append([]string{script}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("hud-push.sh %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// sensePython is a python3 that has what sinain-hud's sense client
// imports (requests, PIL): the one on PATH, else the system's.
func sensePython(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(py, "-c", "import requests, PIL").Run() == nil {
			return py
		}
	}
	t.Fatal("no python3 with requests and PIL for sinain-hud's sense client: run scripts/install-deps.sh (python3-requests, python3-pil)")
	return ""
}

// senseSend posts one event with sinain-hud's SenseSender and returns
// what its send returned.
func senseSend(t *testing.T, base string) bool {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), sensePython(t), filepath.Join(originDir(t, "sinain-harness"), "sense.py"), base)
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1") // nothing written into testdata
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sense.py: %v\n%s", err, out)
	}
	var r struct{ OK bool }
	if err := json.Unmarshal(lastLine(out), &r); err != nil {
		t.Fatalf("sense.py said %s", out)
	}
	return r.OK
}

type bridgeCall struct {
	Method, URL string
	Status      int
}

type bridgeResult struct {
	Sent      bool
	Connected bool
	Feed      []struct{ Text, Priority string }
	Sense     []map[string]any
	Calls     []bridgeCall
	Done      bool
}

// bridge runs sinain-hud's bridge pollers (harness bridge.mjs).
func bridge(t *testing.T, base, mode string, env ...string) bridgeResult {
	t.Helper()
	harness := originDir(t, "sinain-harness")
	if _, err := os.Stat(filepath.Join(harness, "node_modules", "typescript")); err != nil {
		t.Fatalf("the TypeScript compiler for sinain-hud's bridge is not installed in %s: run scripts/install-deps.sh", harness)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(harness, "bridge.mjs"), base, t.TempDir(), mode)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bridge.mjs: %v\n%s%s", err, out, stderr.Bytes())
	}
	var r bridgeResult
	if err := json.Unmarshal(lastLine(out), &r); err != nil {
		t.Fatalf("bridge.mjs said %s%s", out, stderr.Bytes())
	}
	return r
}

func lastLine(b []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	return lines[len(lines)-1]
}

func TestRelayAuthNoneOriginClients(t *testing.T) {
	p := startRelay(t, "ACU_RELAY_AUTH=none")
	if !strings.Contains(p.log.String(), "ACU_RELAY_AUTH=none: the relay at 127.0.0.1:") {
		t.Errorf("acu relay with ACU_RELAY_AUTH=none logged no warning:\n%s", p.log)
	}

	out := hudPush(t, p.base, "hello from hud-push", "urgent")
	var pushed struct {
		OK bool
		ID int64
	}
	if err := json.Unmarshal([]byte(out), &pushed); err != nil || !pushed.OK || pushed.ID == 0 {
		t.Errorf("hud-push.sh printed %q, want {ok:true, id}", out)
	}

	if !senseSend(t, p.base) {
		t.Errorf("sinain-hud's SenseSender.send = False, want True")
	}

	r := bridge(t, p.base, "open", `EXPECT_FEED=["hello from hud-push","bridge says hi"]`, "EXPECT_APP=idea")
	if !r.Sent || !r.Done || !r.Connected {
		t.Fatalf("bridge: sent %v, connected %v, got everything %v; feed %v, sense %v, first calls %v", r.Sent, r.Connected, r.Done, r.Feed, r.Sense, r.Calls[:min(len(r.Calls), 5)])
	}
	for _, f := range r.Feed {
		if f.Text == "hello from hud-push" && f.Priority != "urgent" || f.Text == "bridge says hi" && f.Priority != "high" {
			t.Errorf("bridge feed item %+v: wrong priority", f)
		}
	}
	for _, e := range r.Sense {
		meta, _ := e["meta"].(map[string]any)
		if e["type"] != "text" || meta["windowTitle"] != "hud-relay.mjs" || e["roi"] != nil && e["roi"].(map[string]any)["data"] != nil {
			t.Errorf("bridge's sense event %v: want type text, meta.windowTitle, and no roi.data (meta_only)", e)
		}
	}

	// The relay holds what they posted, as they posted it.
	var feed struct {
		Messages []struct{ Text, Priority string }
	}
	p.get(t, "/feed", &feed)
	if len(feed.Messages) != 2 || feed.Messages[0].Text != "hello from hud-push" || feed.Messages[1].Text != "bridge says hi" {
		t.Errorf("GET /feed messages = %+v, want hud-push's and the bridge's", feed.Messages)
	}
	var sense struct {
		Events []struct {
			Type string
			OCR  string
			Meta struct {
				App, WindowTitle string
				SSIM             float64
			}
			ROI struct {
				Data string
				BBox []int
			}
		}
	}
	p.get(t, "/sense", &sense)
	if len(sense.Events) != 1 {
		t.Fatalf("GET /sense events = %+v, want the sense client's one", sense.Events)
	}
	ev := sense.Events[0]
	if ev.Meta.App != "idea" || ev.Meta.WindowTitle != "hud-relay.mjs" || ev.Meta.SSIM != 0.85 || !strings.HasPrefix(ev.OCR, "export function") {
		t.Errorf("sense event = %+v", ev)
	}
	jpg, err := base64.StdEncoding.DecodeString(ev.ROI.Data)
	if err != nil {
		t.Fatalf("roi.data: %v", err)
	}
	if img, err := jpeg.Decode(bytes.NewReader(jpg)); err != nil || img.Bounds().Dx() != 160 {
		t.Errorf("roi.data is not the sense client's 160-pixel JPEG: %v", err)
	}
}

func TestRelayDefaultRefusesOriginClients(t *testing.T) {
	p := startRelay(t)
	if strings.Contains(p.log.String(), "ACU_RELAY_AUTH") {
		t.Errorf("acu relay by default warned about ACU_RELAY_AUTH:\n%s", p.log)
	}

	out := hudPush(t, p.base, "hello from hud-push")
	if !strings.Contains(out, `"unauthorized"`) || !strings.Contains(out, "missing or wrong token") {
		t.Errorf("hud-push.sh against the default relay printed %q, want the 401 error", out)
	}
	if senseSend(t, p.base) {
		t.Errorf("sinain-hud's SenseSender.send against the default relay = True, want False (401)")
	}
	r := bridge(t, p.base, "refused")
	if r.Sent || r.Connected || len(r.Feed) != 0 || len(r.Sense) != 0 || !r.Done {
		t.Errorf("bridge against the default relay: sent %v, connected %v, feed %v, sense %v", r.Sent, r.Connected, r.Feed, r.Sense)
	}
	for _, c := range r.Calls {
		if c.Status != http.StatusUnauthorized {
			t.Errorf("bridge's %s %s = %d, want 401", c.Method, c.URL, c.Status)
		}
	}
	if len(r.Calls) < 5 {
		t.Errorf("bridge made %d calls, want its POST and 2 polls of each poller: %v", len(r.Calls), r.Calls)
	}

	var feed struct{ Messages []any }
	p.get(t, "/feed", &feed)
	var sense struct{ Events []any }
	p.get(t, "/sense", &sense)
	if len(feed.Messages) != 0 || len(sense.Events) != 0 {
		t.Errorf("the default relay took posts without a token: feed %v, sense %v", feed.Messages, sense.Events)
	}
}

// ACU_RELAY_AUTH=none beyond loopback stops `acu relay` and `acu serve`
// at start; `acu serve` warns about it at start as `acu relay` does
// (TestRelayAuthNoneOriginClients), and `acu doctor` warns too.
func TestRelayAuthNoneChecks(t *testing.T) {
	dataDir := t.TempDir()
	daemonPort := freePort(t)
	env := append(os.Environ(), "HOME="+dataDir, "XDG_CONFIG_HOME="+dataDir, "ACU_DATA_DIR="+dataDir, "AGENT_ENABLED=false",
		"ACU_RELAY_PORT="+strconv.Itoa(freePort(t)), "ACU_DAEMON_PORT="+strconv.Itoa(daemonPort), "ACU_VISION_BACKEND=ocr")
	_, stderr, code := acu(t, append(env, "ACU_RELAY_AUTH=none", "ACU_RELAY_HOST=0.0.0.0"), "serve")
	if code == 0 || !strings.Contains(stderr, "ACU_RELAY_AUTH") || !strings.Contains(stderr, "loopback") {
		t.Errorf("acu serve with ACU_RELAY_AUTH=none on 0.0.0.0: exit %d, stderr %q; want a refusal naming ACU_RELAY_AUTH and loopback", code, stderr)
	}
	d := startDaemon(t, append(env, "ACU_RELAY_AUTH=none"), dataDir, daemonPort)
	eventually(t, 30*time.Second, "acu serve's relay to start", func() bool { return strings.Contains(d.log.String(), "relay serving") })
	if !strings.Contains(d.log.String(), "ACU_RELAY_AUTH=none: the relay at") {
		t.Errorf("acu serve with ACU_RELAY_AUTH=none logged no warning:\n%s", d.log)
	}
	d.stop()
	_, stderr, code = acu(t, append(env, "ACU_RELAY_AUTH=none", "ACU_RELAY_HOST=0.0.0.0"), "relay")
	if code == 0 || !strings.Contains(stderr, "ACU_RELAY_AUTH") || !strings.Contains(stderr, "loopback") {
		t.Errorf("acu relay with ACU_RELAY_AUTH=none on 0.0.0.0: exit %d, stderr %q; want a refusal naming ACU_RELAY_AUTH and loopback", code, stderr)
	}
	stdout, _, _ := acu(t, append(env, "ACU_RELAY_AUTH=none"), "doctor")
	if !strings.Contains(stdout, "warn relay") || !strings.Contains(stdout, "ACU_RELAY_AUTH=none") {
		t.Errorf("acu doctor with ACU_RELAY_AUTH=none printed no relay warning:\n%s", stdout)
	}
	stdout, _, _ = acu(t, env, "doctor")
	if strings.Contains(stdout, "warn relay") {
		t.Errorf("acu doctor warned about the relay by default:\n%s", stdout)
	}
}
