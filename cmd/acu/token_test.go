package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/api"
)

// actRoutes are the routes that need the act scope (input on the desktop).
var actRoutes = []struct{ method, path, body string }{
	{"POST", "/v1/tasks", `{"task":"open the menu"}`},
	{"POST", "/v1/actions", `{"actions":[{"kind":"move","at":{"x":500,"y":500}}]}`},
}

// TestTokenScopes: `acu token create --scope read` makes a token that can
// look (runs, screenshots, waits, MCP smart_wait) but gets 403 naming the
// scope on every act and admin route, and whose act tools fail over MCP;
// a revoked token is 401.
func TestTokenScopes(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	d := startDaemon(t, env, dataDir, port)
	out, errOut, code := acu(t, env, "token", "create", "--scope", "read", "--name", "viewer")
	if code != 0 {
		t.Fatalf("acu token create: %d %s", code, errOut)
	}
	read := strings.TrimSpace(out)
	if !strings.HasPrefix(read, "acu_") || !strings.Contains(errOut, "scope read") {
		t.Fatalf("acu token create printed %q / %q", out, errOut)
	}
	call := func(tok, method, path, body string) int {
		req, _ := http.NewRequest(method, d.client.BaseURL()+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/v1/runs", ""}, {"GET", "/v1/screenshot?display=" + dpy, ""},
		{"POST", "/v1/waits", `{"criteria":"\"x\" is visible","timeout":5}`}, {"GET", "/metrics", ""},
	} {
		if got := call(read, r.method, r.path, r.body); got/100 != 2 {
			t.Errorf("read token: %s %s = %d, want 2xx", r.method, r.path, got)
		}
	}
	for _, r := range append(actRoutes, struct{ method, path, body string }{"POST", "/v1/auth/link", `{}`}) {
		if got := call(read, r.method, r.path, r.body); got != http.StatusForbidden {
			t.Errorf("read token: %s %s = %d, want 403", r.method, r.path, got)
		}
	}

	// Over MCP at the daemon's /mcp, the tools run with the caller's token.
	client := mcp.NewClient(&mcp.Implementation{Name: "acu-test", Version: "1"}, nil)
	s, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: d.client.BaseURL() + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{read, http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, job := callTool(t, s, "smart_wait", map[string]any{"criteria": `"Never here" is visible`, "timeout": 30})
	if job["state"] != "watching" {
		t.Errorf("smart_wait with a read token = %v", job)
	}
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"run_task", map[string]any{"task": "open the menu"}},
		{"act", map[string]any{"actions": []any{map[string]any{"kind": "move", "at": map[string]any{"x": 500, "y": 500}}}}},
		{"click", map[string]any{"x": 500, "y": 500}},
		{"type_text", map[string]any{"text": "hello"}},
		{"press_key", map[string]any{"keys": "Return"}},
		{"scroll", map[string]any{"dy": 3}},
		{"drag", map[string]any{"from": map[string]any{"x": 100, "y": 100}, "to": map[string]any{"x": 200, "y": 200}}},
		{"move_pointer", map[string]any{"x": 10, "y": 10}},
	} {
		res, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: call.tool, Arguments: call.args})
		if err != nil {
			t.Errorf("%s: %v", call.tool, err)
		} else if !res.IsError || !strings.Contains(resultText(res), "scope") {
			t.Errorf("%s with a read token: %q (error %v), want a refusal naming the scope", call.tool, resultText(res), res.IsError)
		}
	}

	// An act token acts, and the audit on its session run names it.
	out, errOut, code = acu(t, env, "token", "create", "--scope", "act", "--name", "actor")
	if code != 0 {
		t.Fatalf("acu token create --scope act: %s", errOut)
	}
	actor := api.NewClient(d.client.BaseURL(), strings.TrimSpace(out))
	resp, err := actor.Act(t.Context(), api.ActRequest{Actions: []api.Action{{Kind: api.ActMove, At: api.Pt(500, 500)}}})
	if err != nil || !resp.OK || resp.SessionRun == "" {
		t.Fatalf("act token: POST /v1/actions = %+v, %v", resp, err)
	}
	evs, err := d.client.EventsAfter(t.Context(), api.EventQuery{RunID: resp.SessionRun, Streams: []string{"action"}})
	if err != nil || len(evs.Events) == 0 || !strings.Contains(string(evs.Events[0].Data), "(actor)") {
		t.Errorf("audit events of %s = %+v (%v), want the token named", resp.SessionRun, evs, err)
	}

	// Revoked: 401.
	if _, e, code := acu(t, env, "token", "revoke", "viewer"); code != 0 {
		t.Fatalf("acu token revoke: %s", e)
	}
	if got := call(read, "GET", "/v1/runs", ""); got != http.StatusUnauthorized {
		t.Errorf("revoked token: GET /v1/runs = %d, want 401", got)
	}
	list, _, _ := acu(t, env, "token", "list")
	if !strings.Contains(list, "viewer") || !strings.Contains(list, "(token file)") {
		t.Errorf("acu token list:\n%s", list)
	}
}
