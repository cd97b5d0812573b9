package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/config"
	"github.com/acu-dev/acu/internal/mcpserver"
)

// runMCP serves the MCP tools over stdio as a skin over the daemon's API.
// When no daemon answers it starts one, detached (see startDetached), and
// relays to it: the engine never lives inside the MCP process, so a wait it
// accepted outlives it when the MCP client retires the process. It serves
// the protocol even when no daemon can start: each tool call then answers
// with the reason (see daemonGate).
func runMCP(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "mcp", "[--start=true|false]")
	start := fs.Bool("start", true, "when no daemon answers, start `acu serve` detached on the same data directory and configuration; false: tool calls answer that no daemon runs")
	embedded := fs.String("embedded", "", "deprecated: acu mcp no longer runs the engine in-process; never is --start=false, auto and always are --start=true")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := loadConfig(e)
	if err != nil {
		return err
	}
	log := newLogger(c, e.stderr) // stdout carries the protocol: logs go to stderr
	switch *embedded {
	case "":
	case "never":
		*start = false
	case "auto", "always":
		log.Warn("acu mcp: --embedded is deprecated: the engine runs in a detached daemon, never in the MCP process", "embedded", *embedded)
	default:
		return fmt.Errorf("--embedded %q: deprecated; use --start=true or --start=false", *embedded)
	}
	// The MCP client gets its answers whatever the daemon's state: the
	// daemon is reached (or started) for each tool call, and a call no
	// daemon can serve answers with the reason (see daemonGate).
	g := newDaemonGate(c, e, log, *start)
	if g.broken == nil {
		// A running acu mcp is a client: a daemon it started does not exit
		// for idleness (ACU_IDLE_EXIT) while it runs.
		release, err := holdClientLock(ctx, daemonClientsPath(c))
		if err != nil {
			log.Warn("acu mcp: the daemon cannot see this client; a daemon started by acu mcp may exit after ACU_IDLE_EXIT while it runs (the next call starts one again)", "err", err)
		} else {
			defer release()
		}
	}
	// Reach or start the daemon at once, so the first call finds it up.
	gctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := g.ready(gctx); err != nil && gctx.Err() == nil {
			log.Error("acu mcp: no daemon yet; each tool call tries again and answers with the reason", "err", err)
		}
	})
	defer wg.Wait()
	defer cancel()
	backend := g.cl
	if c.MCP().Conformance {
		log.Warn(config.ConformanceWarning)
	}
	srv := mcpserver.New(backend, mcpserver.Options{Version: Version, Logger: log, Conformance: c.MCP().Conformance})
	srv.AddReceivingMiddleware(g.middleware)
	err = srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(e.stdin), Writer: nopWriteCloser{e.stdout}})
	if ctx.Err() != nil || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// newDaemonGate is the gate to the daemon of c's data directory, with the
// token a daemon started there uses; broken says why no daemon can be
// reached or started from here.
func newDaemonGate(c *config.Config, e *env, log *slog.Logger, start bool) *daemonGate {
	g := &daemonGate{c: c, e: e, log: log, start: start}
	tok, err := ensureToken(c)
	if err != nil {
		g.broken = fmt.Errorf("%w; then restart the MCP server", err)
	}
	g.cl = api.NewClient("http://"+c.DialAddr(), tok.Reveal())
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil && g.broken == nil {
		g.broken = fmt.Errorf("create ACU_DATA_DIR %s: %w; then restart the MCP server", c.DataDir, err)
	}
	return g
}

// daemonStartTimeout bounds how long `acu mcp` waits for a daemon it (or
// a concurrent `acu mcp`) started to answer.
const daemonStartTimeout = 90 * time.Second

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
