package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/config"
	"github.com/acu-dev/acu/internal/mcpserver"
)

// runMCP serves the MCP tools over stdio. It talks to the running daemon;
// when none answers, it starts an embedded one (same database and
// configuration) on a private loopback port for as long as it runs.
func runMCP(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "mcp", "[--embedded=auto|always|never]")
	mode := fs.String("embedded", "auto", "auto: use the running daemon, else start an embedded engine; always; never")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := loadConfig(e)
	if err != nil {
		return err
	}
	log := newLogger(c, e.stderr) // stdout carries the protocol: logs go to stderr
	var backend *api.Client
	if *mode != "always" {
		if cl, _, err := newClient(e); err == nil {
			hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			_, herr := cl.Health(hctx)
			cancel()
			if herr == nil {
				backend = cl
			}
		}
	}
	if backend == nil {
		if *mode == "never" {
			return fmt.Errorf("no daemon answers at %s: start `acu serve`, or run `acu mcp --embedded=auto`", c.Addr())
		}
		cl, stop, err := startEmbedded(ctx, c, e)
		if err != nil {
			return err
		}
		defer stop()
		backend = cl
		log.Info("acu mcp: no daemon running, started an embedded engine", "addr", cl.BaseURL())
	}
	srv := mcpserver.New(backend, mcpserver.Options{Version: Version, Logger: log})
	err = srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(e.stdin), Writer: nopWriteCloser{e.stdout}})
	if ctx.Err() != nil || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// startEmbedded runs the daemon's parts in this process on a free loopback
// port and returns a client for it.
func startEmbedded(ctx context.Context, c *config.Config, e *env) (*api.Client, func(), error) {
	log := newLogger(c, e.stderr)
	applyMemoryLimit(c, e.getenv, log)
	d, err := openDaemon(ctx, c, log)
	if err != nil {
		return nil, nil, err
	}
	d.sessionBus = e.getenv("DBUS_SESSION_BUS_ADDRESS")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		d.close()
		return nil, nil, err
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := d.run(rctx, l, log); err != nil && !errors.Is(err, context.Canceled) {
			log.Error("embedded engine stopped", "err", err)
		}
	}()
	stop := func() { cancel(); <-done; d.close() }
	return api.NewClient("http://"+l.Addr().String(), d.token.Reveal()), stop, nil
}
