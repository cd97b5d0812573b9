// Package xvfb starts and stops Xvfb virtual X servers, for the
// `acu display` commands and for tests. A started server can be recorded in a
// state directory so that later CLI invocations can list and stop it.
//
// It does not connect to the server beyond waiting for it to be ready; that is
// internal/display's job.
package xvfb

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/acu-dev/acu/internal/daemonproc"
)

// Options configures Start.
type Options struct {
	// Display is the display to start, ":99". Empty lets Xvfb pick a free
	// number (-displayfd).
	Display string
	// Width, Height and Depth of screen 0; defaults 1280x720x24. Xvfb
	// supports depths 8, 15, 16, 24 and 30 for the root window (not 32).
	Width, Height, Depth int
	// NoSHM disables the MIT-SHM extension, as on a remote X server.
	NoSHM bool
	// Args are extra Xvfb arguments.
	Args []string
	// WindowManager starts a light window manager when one is installed
	// (see WindowManagers); none installed is not an error. Start returns
	// once the window manager has announced itself (it has set
	// _NET_SUPPORTING_WM_CHECK on the root window; twm, without EWMH: it
	// owns the WM_S0 selection), and fails when it has not within WMTimeout.
	WindowManager bool
	// WMTimeout bounds the wait for the window manager; default 10s.
	WMTimeout time.Duration
	// StateDir, when set, records the started server there so that List and
	// StopByName work across processes.
	StateDir string
	// Detach keeps the server running after this process exits (the CLI's
	// `acu display start`). Otherwise the server is killed with its parent.
	Detach bool
	// Binary is the Xvfb executable; default "Xvfb" on PATH.
	Binary string
	// Logger receives lifecycle logs; nil discards.
	Logger *slog.Logger
}

// WindowManagers are the light window managers tried, in order, when
// Options.WindowManager is set.
var WindowManagers = []string{"openbox", "fluxbox", "icewm", "xfwm4", "matchbox-window-manager", "twm"}

// Server is a running Xvfb started by Start.
type Server struct {
	name   string
	opts   Options
	cmd    *exec.Cmd
	wm     *exec.Cmd
	wmDone chan struct{} // closed when wm has exited
	done   chan struct{}
	errMu  sync.Mutex
	err    error
	stderr *daemonproc.Tail
	once   sync.Once
	log    *slog.Logger
}

// Record is what the state directory keeps about a started server.
type Record struct {
	Display string    `json:"display"`
	Pid     int       `json:"pid"`
	WMPid   int       `json:"wm_pid,omitempty"`
	WM      string    `json:"wm,omitempty"`
	Width   int       `json:"width"`
	Height  int       `json:"height"`
	Depth   int       `json:"depth"`
	Started time.Time `json:"started"`
}

// ErrNotFound is returned by StopByName when no recorded server has the name.
var ErrNotFound = errors.New("no such display recorded")

// Start starts Xvfb and returns once the server accepts connections (or ctx
// ends, or Xvfb exits, with its error output in the error).
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Width <= 0 {
		opts.Width = 1280
	}
	if opts.Height <= 0 {
		opts.Height = 720
	}
	if opts.Depth <= 0 {
		opts.Depth = 24
	}
	if opts.Binary == "" {
		opts.Binary = "Xvfb"
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Display != "" {
		if _, err := displayNumber(opts.Display); err != nil {
			return nil, err
		}
	}
	bin, err := exec.LookPath(opts.Binary)
	if err != nil {
		return nil, fmt.Errorf("start Xvfb: %w (install the xvfb package)", err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start Xvfb: %w", err)
	}
	defer pr.Close()

	var args []string
	if opts.Display != "" {
		args = append(args, opts.Display)
	}
	args = append(args, "-displayfd", "3",
		"-screen", "0", fmt.Sprintf("%dx%dx%d", opts.Width, opts.Height, opts.Depth),
		"-nolisten", "tcp",
		// Without -noreset Xvfb resets when its last client disconnects,
		// and a client connecting during that reset is refused: a display
		// that acu's commands connect to one after another must not reset.
		"-noreset")
	if opts.NoSHM {
		args = append(args, "-extension", "MIT-SHM")
	}
	args = append(args, opts.Args...)

	cmd := exec.Command(bin, args...)
	cmd.ExtraFiles = []*os.File{pw}
	s := &Server{opts: opts, cmd: cmd, done: make(chan struct{}), stderr: daemonproc.NewTail(8 << 10), log: log}
	var logFile *os.File
	if opts.Detach {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if opts.StateDir != "" {
			if err := os.MkdirAll(opts.StateDir, 0o700); err != nil {
				pw.Close()
				return nil, fmt.Errorf("start Xvfb: state dir: %w", err)
			}
			logFile, err = os.CreateTemp(opts.StateDir, "xvfb-*.log")
			if err != nil {
				pw.Close()
				return nil, fmt.Errorf("start Xvfb: log file: %w", err)
			}
			cmd.Stdout, cmd.Stderr = logFile, logFile
		}
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		cmd.Stderr = s.stderr
		cmd.Stdout = s.stderr
	}
	if err := cmd.Start(); err != nil {
		pw.Close()
		if logFile != nil {
			logFile.Close()
			os.Remove(logFile.Name())
		}
		return nil, fmt.Errorf("start Xvfb: %w", err)
	}
	pw.Close()
	if logFile != nil {
		logFile.Close()
	}
	go func() {
		err := cmd.Wait()
		s.errMu.Lock()
		s.err = err
		s.errMu.Unlock()
		close(s.done)
	}()

	type result struct {
		line string
		err  error
	}
	ready := make(chan result, 1)
	go func() {
		line, err := bufio.NewReader(pr).ReadString('\n')
		ready <- result{strings.TrimSpace(line), err}
	}()
	select {
	case r := <-ready:
		if r.err != nil || r.line == "" {
			<-s.done
			return nil, fmt.Errorf("start Xvfb %s: exited before accepting connections: %s", opts.Display, s.errorOutput())
		}
		if _, err := strconv.Atoi(r.line); err != nil {
			s.kill()
			return nil, fmt.Errorf("start Xvfb: unexpected display number %q", r.line)
		}
		s.name = ":" + r.line
	case <-ctx.Done():
		s.kill()
		pr.Close()
		return nil, fmt.Errorf("start Xvfb %s: %w", opts.Display, ctx.Err())
	}
	if logFile != nil {
		final := filepath.Join(opts.StateDir, "display-"+strings.TrimPrefix(s.name, ":")+".log")
		_ = os.Rename(logFile.Name(), final)
	}
	log.Info("xvfb started", "display", s.name, "pid", cmd.Process.Pid,
		"size", fmt.Sprintf("%dx%dx%d", opts.Width, opts.Height, opts.Depth))

	rec := Record{Display: s.name, Pid: cmd.Process.Pid, Width: opts.Width, Height: opts.Height, Depth: opts.Depth, Started: time.Now().UTC()}
	if opts.WindowManager {
		if err := s.startWM(ctx, &rec); err != nil {
			s.Stop()
			return nil, err
		}
	}
	if opts.StateDir != "" {
		if err := daemonproc.WriteRecord(recordPath(opts.StateDir, s.name), rec); err != nil {
			s.Stop()
			return nil, fmt.Errorf("record display %s: %w", s.name, err)
		}
	}
	return s, nil
}

// Name returns the display name, ":N".
func (s *Server) Name() string { return s.name }

// Pid returns the Xvfb process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Done is closed when the Xvfb process has exited.
func (s *Server) Done() <-chan struct{} { return s.done }

// Wait blocks until the server exits and returns its exit error.
func (s *Server) Wait() error {
	<-s.done
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

// Kill kills the server at once with SIGKILL (tests simulating a crash) and
// waits for it to exit. Its state record is left behind, as after a crash.
func (s *Server) Kill() {
	s.kill()
	<-s.done
}

func (s *Server) kill() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
}

// stopGrace is how long a server and its window manager get to exit after
// SIGTERM before they are killed.
const stopGrace = 5 * time.Second

// Stop terminates the server (SIGTERM, then SIGKILL after 5s), its window
// manager, and removes its state record. Safe to call more than once.
func (s *Server) Stop() error {
	s.once.Do(func() {
		if s.wm != nil {
			_ = s.wm.Process.Signal(syscall.SIGTERM)
		}
		daemonproc.Terminate(s.cmd.Process, s.done, stopGrace)
		if s.wm != nil {
			daemonproc.Terminate(s.wm.Process, s.wmDone, stopGrace)
		}
		if s.opts.StateDir != "" && s.name != "" {
			removeRecord(s.opts.StateDir, s.name)
		}
		s.log.Info("xvfb stopped", "display", s.name)
	})
	return nil
}

func (s *Server) errorOutput() string {
	out := strings.TrimSpace(s.stderr.String())
	if out == "" {
		return "no output"
	}
	return out
}

func findWM() (name, path string) {
	for _, wm := range WindowManagers {
		if p, err := exec.LookPath(wm); err == nil {
			return wm, p
		}
	}
	return "", ""
}

func displayNumber(name string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(name, ":"))
	if !strings.HasPrefix(name, ":") || err != nil || n < 0 {
		return 0, fmt.Errorf("display %q: want a local display name like :99", name)
	}
	return n, nil
}

func recordPath(dir, name string) string {
	return filepath.Join(dir, "display-"+strings.TrimPrefix(name, ":")+".json")
}

func removeRecord(dir, name string) {
	_ = os.Remove(recordPath(dir, name))
	_ = os.Remove(filepath.Join(dir, "display-"+strings.TrimPrefix(name, ":")+".log"))
	_ = os.Remove(filepath.Join(dir, "wm-"+strings.TrimPrefix(name, ":")+".log"))
}

// List returns the servers recorded in stateDir that are still running,
// sorted by display number. Records of servers that are gone are removed.
func List(stateDir string) ([]Record, error) {
	out, err := daemonproc.List(filepath.Join(stateDir, "display-*.json"),
		func(r Record) int { return r.Pid }, alive,
		func(r Record) { removeRecord(stateDir, r.Display) })
	if err != nil {
		return nil, fmt.Errorf("list displays in %s: %w", stateDir, err)
	}
	sortRecords(out)
	return out, nil
}

func sortRecords(rs []Record) {
	num := func(r Record) int { n, _ := displayNumber(r.Display); return n }
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && num(rs[j]) < num(rs[j-1]); j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}

// alive reports whether pid runs an Xvfb (guards against pid reuse).
func alive(pid int) bool {
	return daemonproc.Running(pid, func(program string) bool {
		return strings.Contains(strings.ToLower(program), "xvfb")
	})
}

// StopByName stops the recorded server named name (":99") in stateDir: SIGTERM,
// then SIGKILL after 5s or when ctx ends, and removes its record.
func StopByName(ctx context.Context, stateDir, name string) error {
	if _, err := displayNumber(name); err != nil {
		return err
	}
	b, err := os.ReadFile(recordPath(stateDir, name))
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("stop display %s: %w (see `acu display list`)", name, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("stop display %s: %w", name, err)
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		removeRecord(stateDir, name)
		return fmt.Errorf("stop display %s: corrupt record removed: %w", name, err)
	}
	if r.WMPid > 0 {
		_ = syscall.Kill(r.WMPid, syscall.SIGTERM)
	}
	daemonproc.Stop(ctx, r.Pid, stopGrace, alive)
	removeRecord(stateDir, name)
	return nil
}
