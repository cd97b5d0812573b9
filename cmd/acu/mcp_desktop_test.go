package main

import (
	"context"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPDesktopTools drives the window, launch and clipboard tools with
// the MCP SDK's client over the daemon's /mcp, checked by independent X
// clients (xclip, the window itself), and a read token's refusals.
func TestMCPDesktopTools(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	d := startDaemon(t, env, dataDir, port)
	connect := func(tok string) *mcp.ClientSession {
		client := mcp.NewClient(&mcp.Implementation{Name: "acu-test", Version: "1"}, nil)
		s, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: d.client.BaseURL() + "/mcp",
			HTTPClient: &http.Client{Transport: bearer{tok, http.DefaultTransport}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	s := connect(tokenOf(t, dataDir))

	res, launched := callTool(t, s, "launch_app", map[string]any{"argv": []string{"xterm", "-title", "mcp-launched", "-e", "sleep 600"}, "wait_window": true, "timeout": 20})
	if res.IsError || launched["window"] == nil {
		t.Fatalf("launch_app = %q %v", resultText(res), launched)
	}
	res, list := callTool(t, s, "list_windows", map[string]any{})
	if !strings.Contains(resultText(res), "mcp-launched") {
		t.Errorf("list_windows = %q %v", resultText(res), list)
	}
	res, moved := callTool(t, s, "window", map[string]any{"window": "mcp-launched", "op": "move", "x": 40, "y": 50})
	w, _ := moved["window"].(map[string]any)
	if res.IsError || w == nil || w["x"] != float64(40) || w["y"] != float64(50) {
		t.Errorf("window move = %q %v", resultText(res), moved)
	}
	if res, _ := callTool(t, s, "focus_window", map[string]any{"window": "mcp-launched"}); res.IsError {
		t.Errorf("focus_window = %q", resultText(res))
	}

	// The clipboard, both ways, with xclip as the other client.
	if res, _ := callTool(t, s, "clipboard_set", map[string]any{"text": "héllo from MCP"}); res.IsError {
		t.Fatalf("clipboard_set = %q", resultText(res))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "xclip", "-display", dpy, "-selection", "clipboard", "-o").Output()
	if err != nil || string(out) != "héllo from MCP" {
		t.Errorf("xclip read %q (%v) after clipboard_set", out, err)
	}
	owner := exec.Command("xclip", "-display", dpy, "-selection", "clipboard", "-i", "-quiet")
	owner.Stdin = strings.NewReader("set by xclip")
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { owner.Process.Kill(); owner.Wait() })
	eventually(t, 10*time.Second, "clipboard_get to read xclip's text", func() bool {
		res, _ := callTool(t, s, "clipboard_get", map[string]any{})
		return resultText(res) == "set by xclip"
	})

	// A read token: windows listed, everything else refused with the scope.
	tokOut, errOut, code := acu(t, env, "token", "create", "--scope", "read")
	if code != 0 {
		t.Fatalf("acu token create: %s", errOut)
	}
	r := connect(strings.TrimSpace(tokOut))
	if res, _ := callTool(t, r, "list_windows", map[string]any{}); res.IsError {
		t.Errorf("list_windows with a read token = %q", resultText(res))
	}
	for tool, args := range map[string]map[string]any{
		"window":        {"window": "mcp-launched", "op": "close"},
		"launch_app":    {"argv": []string{"true"}},
		"clipboard_get": {},
		"clipboard_set": {"text": "x"},
	} {
		res, err := r.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil || !res.IsError || !strings.Contains(resultText(res), "scope") {
			t.Errorf("%s with a read token = %v %q, want a refusal naming the scope", tool, err, resultText(res))
		}
	}

	res, closed := callTool(t, s, "window", map[string]any{"window": "mcp-launched", "op": "close", "kill": true})
	if res.IsError || closed["window"] != nil {
		t.Errorf("window close = %q %v", resultText(res), closed)
	}
}
