package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/config"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/secret"
	"github.com/acu-dev/acu/internal/server"
	"github.com/acu-dev/acu/internal/smartwait"
	"github.com/acu-dev/acu/internal/store"
)

// readClient returns a client for the read-only commands (acu runs list,
// show and wait; acu events; acu waits list and show): the daemon's when it
// answers, otherwise the same API served by this process over the database
// on a private loopback port with a one-off token, so these commands work
// without a daemon and show exactly what it would. It follows other
// processes' events (a standalone `acu agent`'s) from the store. close
// stops the private server. It reads nothing when there is neither a daemon
// nor a database.
func readClient(ctx context.Context, e *env) (cl *api.Client, close func(), err error) {
	c, err := loadConfig(e)
	if err != nil {
		return nil, nil, err
	}
	if tok, err := readToken(c); err == nil {
		cl := api.NewClient("http://"+c.DialAddr(), tok)
		hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, herr := cl.Health(hctx)
		cancel()
		if herr == nil || !daemonAbsent(herr) {
			return cl, func() {}, nil
		}
	}
	if _, err := os.Stat(c.DB); err != nil && !store.IsPostgres(c.DB) {
		return nil, nil, fmt.Errorf("no daemon answers at %s and there is no database at %s: start one with `acu serve`", c.Addr(), c.DB)
	}
	db, err := store.Open(ctx, c.DB, store.Options{})
	if err != nil {
		return nil, nil, err
	}
	reg := runs.New(db, runs.Options{})
	tok := make([]byte, 24)
	rand.Read(tok)
	srv := server.New(server.Options{
		Token: secret.String(hex.EncodeToString(tok)), ListenHost: "127.0.0.1", Version: Version, Epoch: reg.Epoch(),
		Runs:  reg,
		Fleet: reg,
		Waits: smartwait.New(smartwait.Options{Runs: reg, Logger: slog.New(slog.DiscardHandler)}),
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("serve the database to this command: %w", err)
	}
	sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{}, 2)
	go func() { reg.Tail(sctx, 0); done <- struct{}{} }()
	go func() { _ = srv.Serve(sctx, l, time.Second); done <- struct{}{} }()
	fmt.Fprintf(e.stderr, "acu serve is not running: reading the database %s directly\n", config.RedactDB(c.DB))
	return api.NewClient("http://"+l.Addr().String(), hex.EncodeToString(tok)), func() {
		stop()
		<-done
		<-done
		db.Close()
	}, nil
}

// clientFor is readClient for a command that only reads (read), and the
// daemon's client (newClient) for one that changes something, which needs
// the daemon.
func clientFor(ctx context.Context, e *env, read bool) (*api.Client, func(), error) {
	if read {
		return readClient(ctx, e)
	}
	cl, _, err := newClient(e)
	return cl, func() {}, err
}

// daemonAbsent reports whether err means no daemon answered at its
// address (nothing listens, or nothing answered in time), as opposed to a
// daemon that answered with an error: then the database is read directly.
func daemonAbsent(err error) bool {
	var se *api.StatusError
	return !errors.As(err, &se)
}
