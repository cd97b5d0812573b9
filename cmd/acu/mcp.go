package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/config"
	"github.com/acu-dev/acu/internal/mcpserver"
)

// runMCP serves the MCP tools over stdio as a skin over the daemon's API.
// When no daemon answers it starts one, detached (see startDetached), and
// relays to it: the engine never lives inside the MCP process, so a wait it
// accepted outlives it when the MCP client retires the process.
func runMCP(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "mcp", "[--start=true|false]")
	start := fs.Bool("start", true, "when no daemon answers, start `acu serve` detached on the same data directory and configuration; false: fail instead")
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
	var backend *api.Client
	if cl, ok := daemonAnswers(ctx, e); ok {
		backend = cl
	} else if !*start {
		return fmt.Errorf("no daemon answers at %s: start `acu serve` (or `acu install --user`), or drop --start=false", c.Addr())
	} else {
		sctx, cancel := context.WithTimeout(ctx, daemonStartTimeout)
		cl, started, err := ensureDaemon(sctx, c, e, log)
		cancel()
		if err != nil {
			return err
		}
		backend = cl
		if started {
			log.Info("acu mcp: no daemon answered; started one, detached", "addr", cl.BaseURL(), "log", daemonLogPath(c))
		}
	}
	if c.MCP().Conformance {
		log.Warn(config.ConformanceWarning)
	}
	srv := mcpserver.New(backend, mcpserver.Options{Version: Version, Logger: log, Conformance: c.MCP().Conformance})
	err = srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(e.stdin), Writer: nopWriteCloser{e.stdout}})
	if ctx.Err() != nil || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// daemonStartTimeout bounds how long `acu mcp` waits for a daemon it (or
// a concurrent `acu mcp`) started to answer.
const daemonStartTimeout = 90 * time.Second

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
