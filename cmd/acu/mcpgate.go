package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/config"
)

// daemonGate stands between the MCP client's tool calls and the daemon.
// `acu mcp` answers initialize and tools/list at once, whatever the
// daemon's state, and each tools/call first makes sure a daemon answers
// (starting one detached, as configured): when none can, the call's result
// is an error that says why (the daemon's last log lines, the setting to
// change) instead of the MCP client seeing its server's pipe close. The
// next call tries again, so fixing the cause needs no restart of the host.
type daemonGate struct {
	c     *config.Config
	e     *env
	log   *slog.Logger
	start bool // start a daemon when none answers (--start)
	cl    *api.Client
	// broken is a problem no retry fixes (the token cannot be had); the
	// host must restart acu mcp once it is fixed.
	broken error

	mu       sync.Mutex // one look (and start) at a time
	verified string     // the epoch of the daemon that accepted cl's token
}

// ready returns nil when a daemon that accepts this client's token
// answers, starting one when allowed, else an error saying what to do.
func (g *daemonGate) ready(ctx context.Context) error {
	if g.broken != nil {
		return g.broken
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	h, err := g.cl.Health(hctx)
	cancel()
	if err != nil {
		if !g.start {
			return fmt.Errorf("no daemon answers at %s: start `acu serve` (or `acu install --user`), or drop --start=false so acu mcp starts one", g.c.Addr())
		}
		sctx, cancel := context.WithTimeout(ctx, daemonStartTimeout)
		_, started, err := ensureDaemon(sctx, g.c, g.e, g.log)
		cancel()
		if err != nil {
			return err
		}
		if started {
			g.log.Info("acu mcp: no daemon answered; started one, detached", "addr", g.cl.BaseURL(), "log", daemonLogPath(g.c))
		}
		hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		h, err = g.cl.Health(hctx)
		cancel()
		if err != nil {
			return fmt.Errorf("the daemon at %s stopped answering: %w; see %s", g.c.Addr(), err, daemonLogPath(g.c))
		}
	}
	if h.Epoch != "" && h.Epoch == g.verified {
		return nil
	}
	// /health needs no token: a daemon of another user or another data
	// directory on this port answers it too, then refuses every call.
	vctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_, err = g.cl.Runs(vctx, api.RunQuery{Limit: 1})
	cancel()
	if se, ok := errors.AsType[*api.StatusError](err); ok && se.Status == http.StatusUnauthorized {
		return fmt.Errorf("a daemon answers at %s but refuses this data directory's token (%s): it belongs to another user or another ACU_DATA_DIR. Give this one a port of its own: set ACU_DAEMON_PORT (and ACU_RELAY_PORT) to free ports, or set ACU_TOKEN to that daemon's token",
			g.c.Addr(), g.c.TokenPath())
	}
	if err != nil {
		return err
	}
	g.verified = h.Epoch
	return nil
}

// middleware gates tools/call on ready; every other method (initialize,
// tools/list, ping) is answered without the daemon.
func (g *daemonGate) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		if err := g.ready(ctx); err != nil {
			name := "the tool"
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
				name = p.Name
			}
			g.log.Error("acu mcp: no daemon to serve a tool call", "tool", name, "err", err)
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(
				"acu's daemon is not available, so %s did not run: %v\n\nFix that and call again: acu mcp tries to reach (or start) the daemon on every call. `acu doctor` checks the set-up; the daemon's log is %s.",
				name, err, daemonLogPath(g.c))}}}, nil
		}
		return next(ctx, method, req)
	}
}
