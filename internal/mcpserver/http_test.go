package mcpserver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// headers adds fixed headers to a client's requests.
type headers struct {
	h    map[string]string
	base http.RoundTripper
}

func (t headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}

// TestBindSessions: a session answers only the identity that opened it
// (another gets 403 and its tool call does not run); a caller without an
// Authorization header (a page's session) is bound too, and the handler
// behind never sees the stand-in header.
func TestBindSessions(t *testing.T) {
	var runs atomic.Int64
	var mu sync.Mutex
	seenAuth := map[string]string{} // identity -> Authorization the handler saw
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "count"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		runs.Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "counted"}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		mu.Lock()
		seenAuth[r.Header.Get("X-Who")] = r.Header.Get("Authorization")
		mu.Unlock()
		return srv
	}, nil)
	ts := httptest.NewServer(BindSessions(h, func(r *http.Request) string { return r.Header.Get("X-Who") }))
	t.Cleanup(ts.Close) // after the sessions close (cleanups run last first)

	connect := func(h map[string]string) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
		s, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL,
			HTTPClient: &http.Client{Transport: headers{h, http.DefaultTransport}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	alice := connect(map[string]string{"X-Who": "alice", "Authorization": "Bearer alice-token"})
	if _, err := alice.CallTool(t.Context(), &mcp.CallToolParams{Name: "count"}); err != nil || runs.Load() != 1 {
		t.Fatalf("alice's call = %v, runs %d", err, runs.Load())
	}

	req, _ := http.NewRequest("POST", ts.URL, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"count","arguments":{}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", alice.ID())
	req.Header.Set("X-Who", "bob")
	req.Header.Set("Authorization", "Bearer bob-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), MismatchMessage) {
		t.Errorf("bob on alice's session = %d %q, want 403 saying %q", resp.StatusCode, b, MismatchMessage)
	}
	if runs.Load() != 1 {
		t.Errorf("bob's call on alice's session ran (runs %d)", runs.Load())
	}

	page := connect(map[string]string{"X-Who": "page"})
	if _, err := page.CallTool(t.Context(), &mcp.CallToolParams{Name: "count"}); err != nil || runs.Load() != 2 {
		t.Fatalf("the page's call = %v, runs %d", err, runs.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	if got := seenAuth["page"]; got != "" {
		t.Errorf("the handler saw Authorization %q for a caller that sent none", got)
	}
	if got := seenAuth["alice"]; got != "Bearer alice-token" {
		t.Errorf("the handler saw Authorization %q for alice, want her own", got)
	}
}
