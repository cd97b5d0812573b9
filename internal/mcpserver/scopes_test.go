package mcpserver_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/mcpserver"
	"github.com/acu-dev/acu/internal/secret"
	"github.com/acu-dev/acu/internal/server"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

const (
	adminToken = "scopes-admin-token-0123456789"
	readToken  = "scopes-read-token-0123456789"
)

// session connects an MCP client to acu's tools over c (one token).
func session(t *testing.T, c *api.Client) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcpserver.New(c, mcpserver.Options{}).Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "scopes-test", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestToolTable: every tool the daemon's sessions offer is in the tool
// table and every row is offered; each row's routes are in the route
// table, and its scope, Others and desktop class follow from them.
func TestToolTable(t *testing.T) {
	cs := session(t, api.NewClient("http://127.0.0.1:1", adminToken))
	var offered []string
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		offered = append(offered, tool.Name)
	}
	routes := map[string]server.RouteInfo{}
	for _, r := range server.Routes() {
		routes[r.Key()] = r
	}
	table := map[string]mcpserver.ToolInfo{}
	for _, ti := range mcpserver.Tools() {
		table[ti.Name] = ti
		if !slices.Contains(offered, ti.Name) {
			t.Errorf("tool table row %s: no such tool is offered", ti.Name)
		}
		scope, others, desktop := "", "", ""
		for _, key := range ti.Routes {
			r, ok := routes[key]
			if !ok {
				t.Errorf("tool %s calls %s, which is not in the route table", ti.Name, key)
				continue
			}
			if api.ScopeRank(r.Scope) > api.ScopeRank(scope) {
				scope = r.Scope
			}
			if api.ScopeRank(r.Others) > api.ScopeRank(others) {
				others = r.Others
			}
			switch {
			case r.Desktop == server.DesktopEffect:
				desktop = r.Desktop
			case r.Desktop == server.DesktopRead && desktop == "":
				desktop = r.Desktop
			}
		}
		if ti.Scope != scope || ti.Others != others || ti.Desktop != desktop {
			t.Errorf("tool %s = scope %q, others %q, desktop %q; its routes say %q, %q, %q", ti.Name, ti.Scope, ti.Others, ti.Desktop, scope, others, desktop)
		}
	}
	for _, name := range offered {
		if _, ok := table[name]; !ok {
			t.Errorf("tool %s is offered but not in the tool table (internal/mcpserver/tooltable.go)", name)
		}
	}
}

// TestReadTokenActTools: a session with a read token calling each tool
// that needs act gets a tool error naming the scope (not a protocol
// error), over a real server on a real display, and nothing happens: no
// launch, the clipboard, the pointer and the window unchanged.
func TestReadTokenActTools(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 800, Height: 600})
	testx.StartWM(t, dpy)
	dir := t.TempDir()
	marker := filepath.Join(dir, "launched")
	svc := gate.New(gate.Options{DefaultDisplay: dpy, AppDirs: []string{dir}, Env: os.Environ()})
	t.Cleanup(svc.Close)
	srv := httptest.NewServer(server.New(server.Options{Token: secret.String(adminToken), Desktop: svc,
		LookupToken: func(_ context.Context, s string) (server.Principal, bool) {
			return server.Principal{ID: "reader", Scope: api.ScopeRead}, s == readToken
		}}))
	t.Cleanup(srv.Close)
	admin := api.NewClient(srv.URL, adminToken)
	ctx := t.Context()
	xt := testx.StartXterm(t, dpy, testx.XtermSpec{Title: "scopes-mcp", Geometry: "30x8+40+40"})
	if _, err := admin.SetClipboard(ctx, api.Clipboard{Text: "kept"}); err != nil {
		t.Fatal(err)
	}
	before, err := admin.Pointer(ctx, "")
	if err != nil {
		t.Fatal(err)
	}

	args := map[string]map[string]any{
		"act":                {"actions": []map[string]any{{"kind": "click", "at": map[string]any{"x": 500, "y": 500}}}},
		"click":              {"x": 500, "y": 500},
		"type_text":          {"text": "pwned"},
		"press_key":          {"keys": "ctrl+q"},
		"scroll":             {"x": 500, "y": 500, "dy": 3},
		"drag":               {"from": map[string]any{"x": 100, "y": 100}, "to": map[string]any{"x": 600, "y": 600}},
		"move_pointer":       {"x": 900, "y": 900},
		"computer_anthropic": {"item": map[string]any{"action": "mouse_move", "coordinate": []int{700, 500}}},
		"computer_openai":    {"item": map[string]any{"type": "computer_call", "call_id": "c1", "action": map[string]any{"type": "move", "x": 700, "y": 500}}},
		"computer_uitars":    {"item": "Action: click(start_box='(700,500)')"},
		"focus_window":       {"window": xt.Title},
		"window":             {"window": xt.Title, "op": "close", "kill": true},
		"launch_app":         {"argv": []string{"touch", marker}},
		"clipboard_get":      {},
		"clipboard_set":      {"text": "pwned"},
		"gui_agent":          {"instruction": "close every window"},
		"run_task":           {"task": "close every window"},
	}
	rs := session(t, api.NewClient(srv.URL, readToken))
	for _, ti := range mcpserver.Tools() {
		if api.ScopeRank(ti.Scope) <= api.ScopeRank(api.ScopeRead) {
			continue
		}
		a, ok := args[ti.Name]
		if !ok {
			t.Errorf("tool %s needs %s: give it arguments here that would act", ti.Name, ti.Scope)
			continue
		}
		res, err := rs.CallTool(ctx, &mcp.CallToolParams{Name: ti.Name, Arguments: a})
		if err != nil {
			t.Errorf("%s with a read token: protocol error %v, want a tool error", ti.Name, err)
			continue
		}
		if !res.IsError || !strings.Contains(text(res), "scope") {
			t.Errorf("%s with a read token = %v %q, want a tool error naming the scope", ti.Name, res.IsError, text(res))
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("a refused launch_app ran")
	}
	if c, err := admin.GetClipboard(ctx, "", "", ""); err != nil || c.Text != "kept" {
		t.Errorf("clipboard after refused tools = %q, %v", c.Text, err)
	}
	if p, err := admin.Pointer(ctx, ""); err != nil || p.X != before.X || p.Y != before.Y {
		t.Errorf("pointer after refused tools = %d,%d (%v), want %d,%d", p.X, p.Y, err, before.X, before.Y)
	}
	l, err := admin.Windows(ctx, "")
	if err != nil || !slices.ContainsFunc(l.Windows, func(w api.Window) bool { return w.Title == xt.Title }) {
		t.Errorf("windows after refused tools = %+v, %v; want %q open", l.Windows, err, xt.Title)
	}
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
