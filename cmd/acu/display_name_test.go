package main

import (
	"errors"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/api"
)

// TestBadDisplayNamesDoNotKillDaemon (issue 17, vulnerability 1): display
// names with a '/' after the last ':' made xgb panic in a goroutine with no
// recover, so one request with the token killed the daemon; HOST:N made it
// dial TCP to HOST. Every way in gets a 400 naming the display field, no
// TCP connection is made, and the daemon keeps serving.
func TestBadDisplayNamesDoNotKillDaemon(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	d := startDaemon(t, env, dataDir, port)
	ctx := t.Context()

	// A listener where HOST:N would connect: 127.0.0.1:6000+N.
	var l net.Listener
	var n int
	for n = 40; n < 400; n++ {
		var err error
		if l, err = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(6000+n)); err == nil {
			break
		}
	}
	if l == nil {
		t.Skip("no free port in 6040..6399")
	}
	defer l.Close()
	dialed := make(chan struct{}, 1)
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Close()
			dialed <- struct{}{}
		}
	}()
	remote := "127.0.0.1:" + strconv.Itoa(n)

	want400 := func(what string, err error) {
		t.Helper()
		var se *api.StatusError
		if !errors.As(err, &se) || se.Status != http.StatusBadRequest || se.Field != "display" {
			t.Errorf("%s: %v, want 400 naming the display field", what, err)
		}
	}
	for _, name := range []string{":0/x", dpy + "/x", remote, "tcp/127.0.0.1:0", "/tmp/.X11-unix/X0:0"} {
		_, err := d.client.CreateWait(ctx, api.CreateWait{Criteria: `"x" is visible`, Timeout: 5, Display: name})
		want400("POST /v1/waits display="+name, err)
		_, err = d.client.Settle(ctx, api.SettleRequest{Display: name, Quiet: 0.1, Timeout: 1})
		want400("POST /v1/settle display="+name, err)
		_, err = d.client.Screenshot(ctx, name, "screen", "jpeg")
		want400("GET /v1/screenshot display="+name, err)
	}

	// The MCP screenshot tool, through the daemon's /mcp.
	client := mcp.NewClient(&mcp.Implementation{Name: "acu-test", Version: "1"}, nil)
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.client.BaseURL() + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{tokenOf(t, dataDir), http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "screenshot", Arguments: map[string]any{"display": ":0/x"}})
	if err != nil {
		t.Fatalf("MCP screenshot: %v", err)
	}
	if !res.IsError {
		t.Errorf("MCP screenshot with display :0/x succeeded: %s", resultText(res))
	}

	// Still alive and still working on its real display.
	if _, err := d.client.Health(ctx); err != nil {
		t.Fatalf("daemon died: %v\n%s", err, d.log)
	}
	if _, err := d.client.Screenshot(ctx, dpy, "screen", "jpeg"); err != nil {
		t.Errorf("screenshot of the real display after the bad ones: %v", err)
	}
	select {
	case <-dialed:
		t.Errorf("the daemon opened a TCP connection for display %s", remote)
	case <-time.After(200 * time.Millisecond):
	}
}
