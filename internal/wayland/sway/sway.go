// Package sway starts and stops headless sway compositors: the Wayland
// desktop of `acu display start --wayland` and of the Wayland backend's
// tests, as internal/xvfb is the X11 one. A compositor runs with
// WLR_BACKENDS=headless and the pixman renderer (no GPU, no input
// devices), one output of the asked size, in a runtime directory
// (XDG_RUNTIME_DIR) of its own that holds its Wayland socket and its IPC
// socket.
//
// sway refuses to run as root. When acu is root, the compositor runs as an
// unprivileged system user (DefaultUser, created by
// scripts/install-deps.sh) that owns the runtime directory; root reaches
// the socket through its absolute path, which WAYLAND_DISPLAY may hold.
//
// It does not speak the Wayland protocol beyond waiting until the socket
// answers (internal/wayland does).
package sway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/acu-dev/acu/internal/daemonproc"
	"github.com/acu-dev/acu/internal/wayland"
)

// DefaultUser is the system user a root acu runs the compositor as.
const DefaultUser = "acu-compositor"

// Options configures Start.
type Options struct {
	// Width and Height of the one output; default 1280x720.
	Width, Height int
	// User runs the compositor when acu is root; default DefaultUser.
	// Ignored when acu is not root (the compositor runs as acu's user).
	User string
	// StateDir, when set, records the compositor there so that List and
	// StopByName work across processes.
	StateDir string
	// Detach keeps the compositor running after this process exits.
	// Otherwise it is killed with its parent.
	Detach bool
	// Binary is the sway executable; default "sway" on PATH.
	Binary string
	// Logger receives lifecycle logs; nil discards.
	Logger *slog.Logger
}

// Compositor is a running headless sway started by Start.
type Compositor struct {
	rec    Record
	opts   Options
	cmd    *exec.Cmd
	done   chan struct{}
	stderr *daemonproc.Tail
	once   sync.Once
	log    *slog.Logger
}

// Record is what the state directory keeps about a started compositor.
type Record struct {
	Socket     string    `json:"socket"`      // absolute path of the Wayland socket: a WAYLAND_DISPLAY value
	RuntimeDir string    `json:"runtime_dir"` // its XDG_RUNTIME_DIR, removed on stop
	IPCSocket  string    `json:"ipc_socket"`  // sway's IPC socket (SWAYSOCK)
	Pid        int       `json:"pid"`
	User       string    `json:"user"`
	Width      int       `json:"width"`
	Height     int       `json:"height"`
	Started    time.Time `json:"started"`
}

// ErrNotFound is returned by StopByName when no recorded compositor has
// the name.
var ErrNotFound = errors.New("no such wayland display recorded")

// IsName reports whether a display name is a Wayland one: a socket named
// "wayland-…" (libwayland's and the compositors' names), bare or as a
// path, as opposed to an X11 ":N" (which has a colon, also in its
// "/tmp/.X11-unix/X0:0" form).
func IsName(name string) bool {
	return strings.HasPrefix(filepath.Base(name), "wayland-") && !strings.Contains(name, ":")
}

// Start starts sway and returns once its Wayland socket answers (or ctx
// ends, or sway exits, with its error output in the error).
func Start(ctx context.Context, opts Options) (*Compositor, error) {
	if opts.Width <= 0 {
		opts.Width = 1280
	}
	if opts.Height <= 0 {
		opts.Height = 720
	}
	if opts.Binary == "" {
		opts.Binary = "sway"
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	bin, err := exec.LookPath(opts.Binary)
	if err != nil {
		return nil, fmt.Errorf("start sway: %w (install the sway package, e.g. with scripts/install-deps.sh)", err)
	}
	cred, username, err := credential(opts.User)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(runtimeBase(cred != nil), "acu-wayland-")
	if err != nil {
		return nil, fmt.Errorf("start sway: runtime dir: %w", err)
	}
	fail := func(err error) (*Compositor, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fail(fmt.Errorf("start sway: give the runtime dir %s to %s: %w", dir, username, err))
		}
	}
	cfg := filepath.Join(dir, "sway.config")
	if err := os.WriteFile(cfg, []byte(config(opts.Width, opts.Height)), 0o644); err != nil {
		return fail(fmt.Errorf("start sway: config: %w", err))
	}

	cmd := exec.Command(bin, "-c", cfg)
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dir,
		"XDG_RUNTIME_DIR=" + dir,
		"WLR_BACKENDS=headless",
		"WLR_LIBINPUT_NO_DEVICES=1",
		"WLR_RENDERER=pixman",
		"WLR_HEADLESS_OUTPUTS=1",
	}
	c := &Compositor{opts: opts, cmd: cmd, done: make(chan struct{}), stderr: daemonproc.NewTail(8 << 10), log: log}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if opts.Detach {
		cmd.SysProcAttr.Setsid = true
	} else {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	if !opts.Detach {
		cmd.Stdout, cmd.Stderr = c.stderr, c.stderr
	} // a detached compositor outlives this process: its output goes to a file or nowhere, never to a pipe
	var logFile *os.File
	if opts.Detach && opts.StateDir != "" {
		if err := os.MkdirAll(opts.StateDir, 0o700); err != nil {
			return fail(fmt.Errorf("start sway: state dir: %w", err))
		}
		logFile, err = os.Create(filepath.Join(opts.StateDir, filepath.Base(dir)+".log"))
		if err != nil {
			return fail(fmt.Errorf("start sway: log file: %w", err))
		}
		defer logFile.Close()
		cmd.Stdout, cmd.Stderr = logFile, logFile
	}
	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("start sway: %w", err))
	}
	go func() {
		_ = cmd.Wait()
		close(c.done)
	}()
	c.rec = Record{RuntimeDir: dir, Pid: cmd.Process.Pid, User: username, Width: opts.Width, Height: opts.Height}
	if err := c.waitReady(ctx, logFile); err != nil {
		c.Stop()
		return nil, err
	}
	c.rec.Started = time.Now().UTC()
	log.Info("sway started", "socket", c.rec.Socket, "pid", c.rec.Pid, "user", username,
		"size", fmt.Sprintf("%dx%d", opts.Width, opts.Height))
	if opts.StateDir != "" {
		if err := daemonproc.WriteRecord(recordPath(opts.StateDir, c.rec.RuntimeDir), c.rec); err != nil {
			c.Stop()
			return nil, fmt.Errorf("record wayland display %s: %w", c.rec.Socket, err)
		}
	}
	return c, nil
}

// runtimeBase is where runtime dirs are made: the temporary directory,
// unless the socket path would pass the 108 bytes a Unix socket's name
// may have, or another user (the compositor's) could not reach into it;
// then /tmp.
func runtimeBase(otherUser bool) string {
	base := os.TempDir()
	if len(base) > 60 {
		return "/tmp"
	}
	if otherUser {
		// The compositor's user must reach the directory through every
		// parent (a TMPDIR of 0777 under a home or work directory of
		// 0700 is not reachable): /tmp always is.
		return "/tmp"
	}
	return base
}

// config is the compositor's configuration: one output of the asked size,
// no Xwayland (acu's X11 backend has Xvfb for X clients), no bar.
func config(w, h int) string {
	return fmt.Sprintf("output HEADLESS-1 resolution %dx%d position 0 0\nxwayland disable\n", w, h)
}

// credential returns who runs the compositor: nil (acu's own user) unless
// acu is root, then the unprivileged user name.
func credential(name string) (*syscall.Credential, string, error) {
	if os.Geteuid() != 0 {
		u, err := user.Current()
		if err != nil {
			return nil, strconv.Itoa(os.Geteuid()), nil
		}
		return nil, u.Username, nil
	}
	if name == "" {
		name = DefaultUser
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, "", fmt.Errorf("start sway: sway refuses to run as root, so acu runs it as the user %q, which does not exist: create it with scripts/install-deps.sh (useradd --system %s) or run acu as a normal user: %w", name, name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil || uid == 0 {
		return nil, "", fmt.Errorf("start sway: the user %q must be an unprivileged user (uid %s)", name, u.Uid)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{uint32(gid)}}, name, nil
}

// waitReady waits until a Wayland socket appears in the runtime dir and
// answers a registry round trip.
func (c *Compositor) waitReady(ctx context.Context, logFile *os.File) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-c.done:
			out := c.errorOutput()
			if logFile != nil {
				if b, err := os.ReadFile(logFile.Name()); err == nil {
					out = tail(string(b), 2000)
				}
			}
			return fmt.Errorf("start sway: it exited before its socket was ready: %s", out)
		case <-ctx.Done():
			return fmt.Errorf("start sway: %w", ctx.Err())
		case <-tick.C:
		}
		socks, _ := filepath.Glob(filepath.Join(c.rec.RuntimeDir, "wayland-*"))
		for _, s := range socks {
			if strings.HasSuffix(s, ".lock") {
				continue
			}
			dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			conn, err := wayland.Dial(dctx, s)
			cancel()
			if err != nil {
				continue
			}
			_, hasOutput := conn.Global("wl_output")
			conn.Close()
			if !hasOutput {
				continue
			}
			c.rec.Socket = s
			if ipc, _ := filepath.Glob(filepath.Join(c.rec.RuntimeDir, "sway-ipc.*.sock")); len(ipc) > 0 {
				c.rec.IPCSocket = ipc[0]
			}
			return nil
		}
	}
}

// Socket returns the absolute path of the Wayland socket, a value for
// WAYLAND_DISPLAY.
func (c *Compositor) Socket() string { return c.rec.Socket }

// RuntimeDir returns the compositor's XDG_RUNTIME_DIR.
func (c *Compositor) RuntimeDir() string { return c.rec.RuntimeDir }

// IPCSocket returns sway's IPC socket (SWAYSOCK), empty if none was seen.
func (c *Compositor) IPCSocket() string { return c.rec.IPCSocket }

// Pid returns the compositor's process id.
func (c *Compositor) Pid() int { return c.rec.Pid }

// User returns the user the compositor runs as.
func (c *Compositor) User() string { return c.rec.User }

// Env returns the environment a client of this compositor needs
// (WAYLAND_DISPLAY, XDG_RUNTIME_DIR, SWAYSOCK).
func (c *Compositor) Env() []string {
	env := []string{"WAYLAND_DISPLAY=" + c.rec.Socket, "XDG_RUNTIME_DIR=" + c.rec.RuntimeDir}
	if c.rec.IPCSocket != "" {
		env = append(env, "SWAYSOCK="+c.rec.IPCSocket)
	}
	return env
}

// Done is closed when the compositor has exited.
func (c *Compositor) Done() <-chan struct{} { return c.done }

// stopGrace is how long a compositor gets to exit after SIGTERM before it
// is killed.
const stopGrace = 5 * time.Second

// Stop terminates the compositor (SIGTERM, then SIGKILL after 5s), removes
// its runtime dir and its state record. Safe to call more than once.
func (c *Compositor) Stop() error {
	c.once.Do(func() {
		daemonproc.Terminate(c.cmd.Process, c.done, stopGrace)
		os.RemoveAll(c.rec.RuntimeDir)
		if c.opts.StateDir != "" {
			removeRecord(c.opts.StateDir, c.rec.RuntimeDir)
		}
		c.log.Info("sway stopped", "socket", c.rec.Socket)
	})
	return nil
}

func (c *Compositor) errorOutput() string {
	out := strings.TrimSpace(tail(c.stderr.String(), 2000))
	if out == "" {
		return "no output"
	}
	return out
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func recordPath(dir, runtimeDir string) string {
	return filepath.Join(dir, filepath.Base(runtimeDir)+".json")
}

func removeRecord(dir, runtimeDir string) {
	_ = os.Remove(recordPath(dir, runtimeDir))
	_ = os.Remove(filepath.Join(dir, filepath.Base(runtimeDir)+".log"))
}

// List returns the compositors recorded in stateDir that still run. Records
// of compositors that are gone are removed, with their runtime dirs.
func List(stateDir string) ([]Record, error) {
	out, err := daemonproc.List(filepath.Join(stateDir, "acu-wayland-*.json"),
		func(r Record) int { return r.Pid }, alive,
		func(r Record) { cleanup(stateDir, r) })
	if err != nil {
		return nil, fmt.Errorf("list wayland displays in %s: %w", stateDir, err)
	}
	return out, nil
}

func cleanup(stateDir string, r Record) {
	if strings.HasPrefix(filepath.Base(r.RuntimeDir), "acu-wayland-") {
		os.RemoveAll(r.RuntimeDir)
	}
	removeRecord(stateDir, r.RuntimeDir)
}

// alive reports whether pid runs a sway (guards against pid reuse).
func alive(pid int) bool {
	return daemonproc.Running(pid, func(program string) bool { return program == "sway" })
}

// StopByName stops the recorded compositor whose socket is name (its
// absolute path, or its "wayland-N" name when only one recorded compositor
// has it): SIGTERM, then SIGKILL after 5s or when ctx ends; its runtime dir
// and record are removed.
func StopByName(ctx context.Context, stateDir, name string) error {
	recs, err := List(stateDir)
	if err != nil {
		return err
	}
	var match []Record
	for _, r := range recs {
		if r.Socket == name || filepath.Base(r.Socket) == name {
			match = append(match, r)
		}
	}
	switch {
	case len(match) == 0:
		return fmt.Errorf("stop wayland display %s: %w (see `acu display list`)", name, ErrNotFound)
	case len(match) > 1:
		return fmt.Errorf("stop wayland display %s: %d compositors have a socket of that name: give the socket's absolute path (see `acu display list`)", name, len(match))
	}
	r := match[0]
	daemonproc.Stop(ctx, r.Pid, stopGrace, alive)
	cleanup(stateDir, r)
	return nil
}
