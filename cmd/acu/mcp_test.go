package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func callTool(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	res, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	var out map[string]any
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &out)
	}
	return res, out
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestMCPStdio drives `acu mcp` with the SDK's own client over stdio, with
// no daemon running: acu mcp starts one, detached, and relays to it.
func TestMCPStdio(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, _ := newEnv(t, dpy)
	stopDetachedAtCleanup(t, dataDir)
	// The text shows once the first progress notification arrived, so the
	// blocking call sees one whatever the machine's speed.
	trigger := filepath.Join(dataDir, "go")
	xtermOnTrigger(t, dpy, "builder", "Build succeeded", trigger)

	var progress atomic.Int64
	client := mcp.NewClient(&mcp.Implementation{Name: "acu-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, _ *mcp.ProgressNotificationClientRequest) {
			if progress.Add(1) == 1 {
				os.WriteFile(trigger, nil, 0o600)
			}
		},
	})
	cmd := exec.Command(acuBin, "mcp")
	cmd.Env = env
	s, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	tools, err := s.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.Description == "" {
			t.Errorf("tool %s has no description", tl.Name)
		}
	}
	if got := strings.Join(names, ","); !strings.Contains(got, "smart_wait") || !strings.Contains(got, "screenshot") || !strings.Contains(got, "settle") {
		t.Errorf("tools = %s", got)
	}

	// smart_wait blocking, with wake_when, and progress notifications.
	params := &mcp.CallToolParams{Name: "smart_wait", Arguments: map[string]any{
		"wake_when": `"Build succeeded" is visible`, "timeout": 60, "target": "window:builder", "block_seconds": 40}}
	params.SetProgressToken("p1")
	res, err := s.CallTool(t.Context(), params)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || !strings.Contains(resultText(res), "[smart_wait resolved]") {
		t.Fatalf("smart_wait = %q (error %v)", resultText(res), res.IsError)
	}
	if progress.Load() == 0 {
		t.Errorf("no progress notification while blocking")
	}

	// screenshot returns an image and the geometry it maps to.
	res, info := callTool(t, s, "screenshot", map[string]any{"target": "window:builder"})
	var img *mcp.ImageContent
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			img = ic
		}
	}
	if img == nil || img.MIMEType != "image/jpeg" || len(img.Data) < 100 {
		t.Fatalf("screenshot content = %+v", res.Content)
	}
	if info["screen_width"] != float64(1024) || info["region_width"].(float64) <= 0 {
		t.Errorf("screenshot info = %v", info)
	}

	// Errors come back as tool errors with the API's message.
	res, _ = callTool(t, s, "smart_wait", map[string]any{"criteria": `"x" is visible`, "target": "window:a|b", "poll_interval": 0.001})
	if !res.IsError || !strings.Contains(resultText(res), "poll_interval") {
		t.Errorf("bad target = %q (error %v)", resultText(res), res.IsError)
	}
}

// TestMCPStreamableHTTP drives the daemon's /mcp endpoint with the SDK's
// streamable HTTP client.
func TestMCPStreamableHTTP(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	d := startDaemon(t, env, dataDir, port)
	endpoint := d.client.BaseURL() + "/mcp"

	// Without the token: refused.
	resp, err := http.Post(endpoint, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/mcp without token = %d, want 401", resp.StatusCode)
	}

	tok := tokenOf(t, dataDir)
	client := mcp.NewClient(&mcp.Implementation{Name: "acu-test", Version: "1"}, nil)
	s, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint,
		HTTPClient: &http.Client{Transport: bearer{tok, http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	_, job := callTool(t, s, "smart_wait", map[string]any{"criteria": `"Never here" is visible`, "timeout": 120})
	id, _ := job["id"].(string)
	if id == "" || job["state"] != "watching" {
		t.Fatalf("smart_wait = %v", job)
	}
	_, st := callTool(t, s, "wait_status", map[string]any{"id": id})
	if st["state"] != "watching" {
		t.Errorf("wait_status = %v", st)
	}
	_, up := callTool(t, s, "wait_update", map[string]any{"id": id, "timeout": 300})
	if up["timeout"] != float64(300) {
		t.Errorf("wait_update = %v", up)
	}
	res, c := callTool(t, s, "wait_cancel", map[string]any{"id": id, "reason": "test over"})
	if c["state"] != "cancelled" {
		t.Errorf("wait_cancel = %v %q", c, resultText(res))
	}
	_, set := callTool(t, s, "settle", map[string]any{"quiet": 0.3, "timeout": 10})
	if set["settled"] != true {
		t.Errorf("settle = %v", set)
	}
}

func tokenOf(t *testing.T, dataDir string) string {
	t.Helper()
	b, err := os.ReadFile(dataDir + "/token")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
