package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image/jpeg"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
)

// zenityForm starts a two-entry zenity form on a display with its
// accessibility bus and returns it once its widgets are on the bus.
func zenityForm(t *testing.T, dpy string, session *atspitest.Session, title string) *atspitest.App {
	t.Helper()
	app := session.StartApp(t, "zenity", "--forms", "--title="+title, "--text=Acu form", "--add-entry=Name", "--add-entry=City")
	tree, err := atspi.Connect(t.Context(), atspi.Options{SessionBus: session.SessionBus})
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := atspitest.WaitApp(ctx, tree, "zenity"); err != nil {
		t.Fatal(err)
	}
	return app
}

var stateLine = regexp.MustCompile(`(?m)^\[(\w+)\] (\w+)( "[^"]*")?`)

// fillFormOverMCP fills the form by element ids read from desktop_state,
// then submits it, all through MCP tools, and checks zenity's own output.
func fillFormOverMCP(t *testing.T, s *mcp.ClientSession, app *atspitest.App) {
	t.Helper()
	var inputs []string
	ok := ""
	for range 30 {
		res, _ := callTool(t, s, "desktop_state", map[string]any{"labels": true})
		text := resultText(res)
		inputs, ok = nil, ""
		for _, m := range stateLine.FindAllStringSubmatch(text, -1) {
			if m[2] == "input" {
				inputs = append(inputs, m[1])
			}
			if m[2] == "button" && m[3] == ` "OK"` {
				ok = m[1]
			}
		}
		var img *mcp.ImageContent
		for _, c := range res.Content {
			if ic, isImg := c.(*mcp.ImageContent); isImg {
				img = ic
			}
		}
		if img == nil {
			t.Fatalf("desktop_state labels=true returned no image")
		}
		if _, err := jpeg.Decode(bytes.NewReader(img.Data)); err != nil {
			t.Fatalf("desktop_state image does not decode: %v", err)
		}
		if len(inputs) >= 2 && ok != "" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(inputs) < 2 || ok == "" {
		t.Fatalf("desktop_state shows inputs %v and OK %q", inputs, ok)
	}
	for i, text := range []string{"Ada Lovelace", "Zürich"} {
		res, _ := callTool(t, s, "type_text", map[string]any{"element": inputs[i], "text": text})
		if res.IsError {
			t.Fatalf("type_text: %s", resultText(res))
		}
	}
	res, out := callTool(t, s, "click", map[string]any{"element": ok, "screenshot": true})
	if res.IsError || out["ok"] != true {
		t.Fatalf("click OK: %s", resultText(res))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	got, err := app.Wait(ctx)
	if err != nil || got != "Ada Lovelace|Zürich\n" {
		t.Fatalf("zenity printed %q (%v), want the form's two fields", got, err)
	}
}

// TestMCPActOverStdioAndHTTP fills a zenity form through the MCP SDK's
// own client: over stdio (acu mcp) and over streamable HTTP (the daemon's
// /mcp), proven by zenity's stdout; the tools carry MCP annotations.
func TestMCPActOverStdioAndHTTP(t *testing.T) {
	dpy := startDisplay(t)
	session := atspitest.Start(t, dpy)
	env, dataDir, port := newEnv(t, dpy)
	env = append(env, "DBUS_SESSION_BUS_ADDRESS="+session.SessionBus, "ACU_ACT_USER_QUIET=200ms")
	d := startDaemon(t, env, dataDir, port)

	client := mcp.NewClient(&mcp.Implementation{Name: "acu-test", Version: "1"}, nil)
	hs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: d.client.BaseURL() + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{tokenOf(t, dataDir), http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hs.Close()
	tools, err := hs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ann := map[string]*mcp.ToolAnnotations{}
	for _, tl := range tools.Tools {
		ann[tl.Name] = tl.Annotations
		if b, _ := tl.InputSchema.(map[string]any); b != nil && strings.Contains(toJSON(b), `"null"`) {
			t.Errorf("tool %s input schema has a nullable type: %s", tl.Name, toJSON(b))
		}
		if tl.OutputSchema != nil && strings.Contains(toJSON(tl.OutputSchema), `"null"`) {
			t.Errorf("tool %s output schema has a nullable type", tl.Name)
		}
	}
	for _, name := range []string{"act", "click", "type_text", "press_key", "scroll", "drag", "move_pointer", "wait_cancel", "run_task",
		"computer_anthropic", "computer_openai", "computer_uitars"} {
		if a := ann[name]; a == nil || a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint {
			t.Errorf("tool %s annotations %+v, want destructive", name, a)
		}
	}
	for _, name := range []string{"screenshot", "desktop_state", "wait_status", "settle", "task_status"} {
		if a := ann[name]; a == nil || !a.ReadOnlyHint {
			t.Errorf("tool %s annotations %+v, want read-only", name, a)
		}
	}
	fillFormOverMCP(t, hs, zenityForm(t, dpy, session, "Acu HTTP"))

	// The same over stdio: acu mcp relays to the running daemon.
	cmd := exec.Command(acuBin, "mcp")
	cmd.Env = env
	ss, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	fillFormOverMCP(t, ss, zenityForm(t, dpy, session, "Acu Stdio"))

	// A screenshot's pixels, clicked through its id.
	res, info := callTool(t, ss, "screenshot", map[string]any{"max_width": 640})
	if res.IsError || info["id"] == "" || info["image_width"] != float64(640) {
		t.Fatalf("screenshot max_width=640: %s %v", resultText(res), info)
	}
	res, _ = callTool(t, ss, "click", map[string]any{"x": 320, "y": 200, "shot": info["id"]})
	if res.IsError {
		t.Errorf("click on screenshot pixels: %s", resultText(res))
	}
	// The computer-use dialects, relayed: an Anthropic tool_use block in,
	// its tool_result out; an OpenAI call held by its safety check.
	res, info = callTool(t, ss, "computer_anthropic", map[string]any{"item": map[string]any{"type": "tool_use", "id": "toolu_x", "name": "computer",
		"input": map[string]any{"action": "screenshot"}}, "limit": "1024x768"})
	if r, _ := info["result"].(map[string]any); res.IsError || info["status"] != "acted" || r["type"] != "tool_result" || r["tool_use_id"] != "toolu_x" {
		t.Errorf("computer_anthropic screenshot: %v %s", info["status"], resultText(res))
	}
	res, info = callTool(t, ss, "computer_openai", map[string]any{"item": map[string]any{"type": "computer_call", "call_id": "c1",
		"action": map[string]any{"type": "click", "button": "left", "x": 1, "y": 1}, "pending_safety_checks": []any{map[string]any{"id": "sc1", "code": "sensitive_domain"}}}})
	if res.IsError || info["status"] != "safety_check" || !strings.Contains(resultText(res), "sc1") {
		t.Errorf("computer_openai with a pending safety check: %v %s", info["status"], resultText(res))
	}
	// A bad element id is a tool error naming it.
	res, _ = callTool(t, ss, "click", map[string]any{"element": "btn_no_such_thing"})
	if !res.IsError || !strings.Contains(resultText(res), "btn_no_such_thing") {
		t.Errorf("click on an unknown element: %q (error %v)", resultText(res), res.IsError)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestMCPStreamPriming: the daemon's /mcp answers a streamed request with a
// priming event (a retry field and an id, no data) before the response, as
// the MCP conformance suite recommends, so a broken stream can resume.
func TestMCPStreamPriming(t *testing.T) {
	env, dataDir, port := newEnv(t, ":0")
	d := startDaemon(t, env, dataDir, port)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	req, _ := http.NewRequest("POST", d.client.BaseURL()+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tokenOf(t, dataDir))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	text := string(b)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("content type %s, want an event stream", resp.Header.Get("Content-Type"))
	}
	first := strings.SplitN(text, "\n\n", 2)[0]
	if !strings.HasPrefix(first, "retry: 3000\n") || !strings.Contains(first, "id: ") || strings.Contains(first, `"result"`) {
		t.Errorf("first event %q: want a priming event (retry and an id, no result)", first)
	}
	if !strings.Contains(text, `"serverInfo"`) {
		t.Errorf("no initialize result in %q", text)
	}
}
