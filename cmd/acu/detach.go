package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/config"
)

// maxDaemonLog is the size past which a starting daemon's log is moved to
// daemon.log.1.
const maxDaemonLog = 16 << 20

// The files of a daemon in its data directory.
func daemonPidPath(c *config.Config) string  { return filepath.Join(c.DataDir, "daemon.pid") }
func daemonLogPath(c *config.Config) string  { return filepath.Join(c.DataDir, "daemon.log") }
func daemonLockPath(c *config.Config) string { return filepath.Join(c.DataDir, "daemon.lock") }

// daemonAnswers returns a client for the configured daemon when it answers
// /health.
func daemonAnswers(ctx context.Context, e *env) (*api.Client, bool) {
	quiet := &env{getenv: e.getenv, environ: e.environ, stdin: e.stdin, stdout: e.stdout, stderr: discard{}}
	cl, _, err := newClient(quiet) // its configuration warnings were printed by the caller
	if err != nil {
		return nil, false
	}
	hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := cl.Health(hctx); err != nil {
		return nil, false
	}
	return cl, true
}

// ensureDaemon returns a client for a daemon that answers, starting one
// detached when none does (started is then true). Concurrent callers on
// one data directory start one daemon between them: the first takes the
// lock file and holds it until its daemon answers; the others wait for the
// lock, then find that daemon answering.
func ensureDaemon(ctx context.Context, c *config.Config, e *env, log *slog.Logger) (cl *api.Client, started bool, err error) {
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return nil, false, fmt.Errorf("create ACU_DATA_DIR %s: %w", c.DataDir, err)
	}
	unlock, err := lockFile(ctx, daemonLockPath(c))
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	if cl, ok := daemonAnswers(ctx, e); ok {
		return cl, false, nil // another acu mcp started it while this one waited
	}
	if err := startDetached(ctx, c, e, log); err != nil {
		return nil, false, err
	}
	cl, ok := daemonAnswers(ctx, e)
	if !ok {
		return nil, false, fmt.Errorf("the daemon started but does not answer at %s: see %s", c.Addr(), daemonLogPath(c))
	}
	return cl, true, nil
}

// lockFile takes an exclusive flock on path, polling until ctx ends. The
// descriptor is close-on-exec, so a daemon started under it does not
// inherit the lock.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the daemon lock %s: %w", path, err)
	}
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("wait for another acu starting the daemon (lock %s): %w", path, ctx.Err())
		case <-t.C:
		}
	}
}

// startDetached starts `acu serve --detached` on c's data directory, with
// this process's environment (so the same configuration), in a session of
// its own (setsid: no controlling terminal, its own process group, so the
// MCP client's signals to this process's group do not reach it), with
// stdin from /dev/null and stdout and stderr appended to daemon.log in the
// data directory. It returns once the daemon answers /health, or with an
// error (and the log's tail) when it exits first or ctx ends.
func startDetached(ctx context.Context, c *config.Config, e *env, log *slog.Logger) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the acu binary to start the daemon: %w", err)
	}
	logPath := daemonLogPath(c)
	if fi, err := os.Stat(logPath); err == nil && fi.Size() > maxDaemonLog {
		_ = os.Rename(logPath, logPath+".1") // one old log kept
	}
	lf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open the daemon log: %w", err)
	}
	defer lf.Close()
	start, _ := lf.Seek(0, 2)
	dataDir, err := filepath.Abs(c.DataDir)
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "serve", "--detached")
	cmd.Env = append(append([]string(nil), e.environ...), "ACU_DATA_DIR="+dataDir)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the daemon: %w", err)
	}
	log.Info("acu mcp: starting the daemon", "pid", cmd.Process.Pid, "log", logPath)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reaps it if it dies while this process lives
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		if _, ok := daemonAnswers(ctx, e); ok {
			return nil
		}
		select {
		case err := <-exited:
			if _, ok := daemonAnswers(ctx, e); ok {
				return nil // another daemon (systemd's?) won the port
			}
			return fmt.Errorf("the daemon exited (%v) before answering; its log %s ends:\n%s", err, logPath, logTail(logPath, start))
		case <-ctx.Done():
			return fmt.Errorf("the daemon (pid %d) did not answer at %s: %w; see %s", cmd.Process.Pid, c.Addr(), ctx.Err(), logPath)
		case <-t.C:
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// logTail returns the last lines written to path from offset on.
func logTail(path string, from int64) string {
	b, err := os.ReadFile(path)
	if err != nil || int64(len(b)) < from {
		return ""
	}
	b = bytes.TrimSpace(b[from:])
	lines := strings.Split(string(b), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

// lockServe takes the data directory's serve lock for as long as the
// daemon runs, or says which daemon holds it.
func lockServe(c *config.Config) (unlock func(), err error) {
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create ACU_DATA_DIR %s: %w", c.DataDir, err)
	}
	path := filepath.Join(c.DataDir, "serve.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the serve lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		pid, _ := os.ReadFile(daemonPidPath(c))
		return nil, fmt.Errorf("another acu serve (pid %s) runs on the data directory %s: stop it, or set ACU_DATA_DIR", strings.TrimSpace(string(pid)), c.DataDir)
	}
	return func() { f.Close() }, nil
}

// writePidFile records the daemon's pid in the data directory; the
// returned function removes it if it still names this process.
func writePidFile(c *config.Config) (remove func(), err error) {
	path := daemonPidPath(c)
	pid := strconv.Itoa(os.Getpid())
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(pid+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("write the pid file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("write the pid file: %w", err)
	}
	return func() {
		if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) == pid {
			os.Remove(path)
		}
	}, nil
}
