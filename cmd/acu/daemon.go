package main

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/store"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/acu-dev/acu/internal/config"
	"github.com/acu-dev/acu/internal/secret"
)

// newLogger builds the process logger from the configuration.
func newLogger(c *config.Config, w io.Writer) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(c.LogLevel))
	opts := &slog.HandlerOptions{Level: lvl}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// ensureToken returns the API token: ACU_TOKEN when set, else the token in
// ACU_DATA_DIR/token, generated (0600) at first start. It refuses a data
// directory others can write to and a token file others can read.
func ensureToken(c *config.Config) (secret.String, error) {
	if err := checkDataDir(c.DataDir); err != nil {
		return "", err
	}
	if c.Token.Set() {
		return c.Token, nil
	}
	return ensureTokenFile(c.TokenPath())
}

// ensureTokenFile returns the token kept in path, first generating it
// (0600, in a 0700 directory) when the file is missing or empty. Processes
// that start together agree on one token: a new file appears by a hard
// link, which fails when another process made it first, and then that
// process's token is read.
func ensureTokenFile(path string) (secret.String, error) {
	if err := checkPrivateFile(path, "token file"); err != nil {
		return "", err
	}
	b, err := os.ReadFile(path)
	if err == nil {
		if t := strings.TrimSpace(string(b)); t != "" {
			return secret.String(t), nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read token %s: %w", path, err)
	}
	empty := err == nil
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("create data directory: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	tok := base64.RawURLEncoding.EncodeToString(raw)
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return "", fmt.Errorf("write token: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(tok + "\n")
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("write token: %w", err)
	}
	if empty {
		err = os.Rename(tmp.Name(), path)
	} else if err = os.Link(tmp.Name(), path); err != nil && !errors.Is(err, os.ErrExist) {
		// A file system without hard links: a rename, as before.
		err = os.Rename(tmp.Name(), path)
	}
	if errors.Is(err, os.ErrExist) {
		// Another process made the file first: use its token.
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("read token %s: %w", path, err)
		}
		if t := strings.TrimSpace(string(b)); t != "" {
			return secret.String(t), nil
		}
		return "", fmt.Errorf("token file %s is empty: delete it to have a new token generated", path)
	}
	if err != nil {
		return "", fmt.Errorf("write token %s: %w", path, err)
	}
	return secret.String(tok), nil
}

// checkDataDir refuses, as ssh does, a data directory that users other
// than its owner can write to: they could replace the database or the
// token. A missing directory is fine (it is created 0700).
func checkDataDir(dir string) error {
	st, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check data directory %s: %w", dir, err)
	}
	if m := st.Mode().Perm(); m&0o022 != 0 {
		return fmt.Errorf("data directory %s is writable by group or others (mode %04o): anyone who can write there can replace acu's database or token; run chmod 700 %s (or set ACU_DATA_DIR to a private directory)", dir, m, dir)
	}
	return nil
}

// checkPrivateFile refuses, as ssh does, a secret file that group or
// others can read or write. A missing file is fine.
func checkPrivateFile(path, what string) error {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check %s %s: %w", what, path, err)
	}
	if m := st.Mode().Perm(); m&0o077 != 0 {
		return fmt.Errorf("%s %s is accessible to group or others (mode %04o): anyone who can read it controls this desktop through acu; run chmod 600 %s", what, path, m, path)
	}
	return nil
}

// workParts are what every acu process that runs work opens: the store,
// the run registry on it (owning its runs under a lease, and following
// other processes' events), and a capture hub. Close releases them.
type workParts struct {
	db   *store.DB
	runs *runs.Registry
	hub  *capture.Hub

	release  func()             // ends the ownership lease
	stopTail context.CancelFunc // stops following other processes' events
	tailDone chan struct{}
}

// openWorkParts opens the store at ACU_DB, a run registry and a capture hub
// configured from c; metrics go to reg when it is not nil. The registry
// owns the runs it starts as program ("serve", "agent", "task",
// "computer") under a heartbeat lease, so no other process ends or resumes
// them while this one runs, and it delivers other processes' events to its
// subscribers. It never calls Recover: a running daemon owns that.
func openWorkParts(ctx context.Context, c *config.Config, log *slog.Logger, reg prometheus.Registerer, program string) (*workParts, error) {
	resample, err := frame.ParseMode(c.FrameResize)
	if err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, c.DB, store.Options{Logger: log.With("component", "store")})
	if err != nil {
		return nil, err
	}
	hub, err := capture.NewHub(capture.Options{Logger: log.With("component", "capture"), Exclude: c.ExcludeWindows, AllowRemote: c.AllowRemoteX,
		Resample: resample, Registerer: reg})
	if err != nil {
		db.Close()
		return nil, err
	}
	p := &workParts{db: db, runs: runs.New(db, runs.Options{Logger: log.With("component", "runs"), Registerer: reg}), hub: hub}
	self := runs.Self(program, c.HostID)
	if c.Display != "" {
		self.Displays = []string{c.Display}
	}
	if self.Machine, err = runs.MachineID(c.MachineID, c.DataDir); err != nil {
		hub.Close()
		db.Close()
		return nil, err
	}
	if p.release, err = p.runs.Own(ctx, self, c.OwnerLease); err != nil {
		hub.Close()
		db.Close()
		return nil, err
	}
	tctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	p.stopTail, p.tailDone = stop, make(chan struct{})
	tail := runs.DefaultTailInterval
	if store.IsPostgres(c.DB) {
		tail = time.Second // a backstop: notifications wake the tail at once
	}
	go func() {
		defer close(p.tailDone)
		p.runs.Tail(tctx, tail)
	}()
	return p, nil
}

// Close stops following events, ends the ownership lease, closes the hub,
// then the store.
func (p *workParts) Close() {
	p.stopTail()
	<-p.tailDone
	p.release()
	p.hub.Close()
	p.db.Close()
}
