// Package atspitest starts a private desktop session for tests of AT-SPI
// clients: a session D-Bus, the accessibility bus (at-spi-bus-launcher) for
// one X display, and accessible GTK applications on them. Every process is
// started in its own process group and killed with it when the test ends,
// so nothing is left running.
//
// It is imported only from *_test.go files. Helpers fail the test when a
// required program is missing; they never skip.
package atspitest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/acu-dev/acu/internal/atspi"
)

// LauncherPath is where Debian's at-spi2-core installs the bus launcher.
const LauncherPath = "/usr/libexec/at-spi-bus-launcher"

// Session is a private session bus with an accessibility bus, bound to one
// X display.
type Session struct {
	Display    string // ":N"
	SessionBus string // session bus address
	A11yBus    string // accessibility bus address
	dir        string
}

// Start starts a session D-Bus and the accessibility bus for display.
// Both are stopped when the test ends.
func Start(t testing.TB, display string) *Session {
	t.Helper()
	dir := t.TempDir()
	s := &Session{Display: display, dir: dir}
	reaperOnce.Do(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) })
	// A session bus without service activation: the session's own
	// at-spi-bus-launcher is the only one (activation would race it and
	// start a second one), and GTK programs cannot start other services.
	conf := filepath.Join(dir, "session.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(sessionConf, busEscape(dir))), 0o600); err != nil {
		t.Fatal(err)
	}
	daemon := exec.Command("dbus-daemon", "--config-file="+conf, "--nofork", "--print-address=1")
	daemon.Env = s.baseEnv()
	daemon.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := daemon.StdoutPipe()
	if err != nil {
		t.Fatalf("dbus-daemon pipe: %v", err)
	}
	if err := daemon.Start(); err != nil {
		t.Fatalf("start dbus-daemon (install dbus): %v", err)
	}
	t.Cleanup(func() { killGroup(daemon) })
	line, err := readLine(out, 10*time.Second)
	if err != nil {
		t.Fatalf("read session bus address from dbus-daemon: %v", err)
	}
	s.SessionBus = line

	launcher := exec.Command(LauncherPath, "--launch-immediately")
	launcher.Env = s.Env()
	launcher.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := launcher.Start(); err != nil {
		t.Fatalf("start %s (install at-spi2-core): %v", LauncherPath, err)
	}
	t.Cleanup(func() { killGroup(launcher) })

	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	for {
		addr, err := atspi.BusAddress(ctx, s.SessionBus, time.Second)
		if err == nil {
			s.A11yBus = addr
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("accessibility bus did not come up: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return s
}

const sessionConf = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir=%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`

// reaperOnce makes the test process the reaper of its orphaned
// descendants, so that the helpers the bus launcher and the buses start
// (reparented when their parent dies first) are reaped by killGroup
// instead of lingering as zombies.
var reaperOnce sync.Once

func readLine(r interface{ Read([]byte) (int, error) }, timeout time.Duration) (string, error) {
	ch := make(chan string, 1)
	errc := make(chan error, 1)
	go func() {
		l, err := bufio.NewReader(r).ReadString('\n')
		if err != nil {
			errc <- err
			return
		}
		ch <- strings.TrimSpace(l)
	}()
	select {
	case l := <-ch:
		return l, nil
	case err := <-errc:
		return "", err
	case <-time.After(timeout):
		return "", fmt.Errorf("no output within %v", timeout)
	}
}

func killGroup(c *exec.Cmd) {
	if c.Process == nil {
		return
	}
	_ = syscall.Kill(-c.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = c.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		<-done
	}
	// Descendants that outlived their parent (the accessibility bus and
	// its registry) are killed, and reaped: as the subreaper they are ours.
	pgid := c.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-pgid, &ws, syscall.WNOHANG, nil)
		if err != nil { // ECHILD: none left in the group
			return
		}
		if pid == 0 {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func (s *Session) baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "AT_SPI_BUS", "GTK_MODULES", "NO_AT_BRIDGE",
			"GNOME_ACCESSIBILITY", "XDG_RUNTIME_DIR", "GSETTINGS_BACKEND", "WAYLAND_DISPLAY", "GDK_BACKEND",
			"QT_ACCESSIBILITY", "QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "QT_QPA_PLATFORM":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "DISPLAY="+s.Display, "XDG_RUNTIME_DIR="+s.dir)
}

// Env is the environment for programs of the session: DISPLAY, the session
// bus, accessibility on (GNOME_ACCESSIBILITY=1, no NO_AT_BRIDGE or
// GTK_MODULES), settings in memory.
func (s *Session) Env() []string {
	return append(s.baseEnv(), "DBUS_SESSION_BUS_ADDRESS="+s.SessionBus, "GNOME_ACCESSIBILITY=1",
		"GSETTINGS_BACKEND=memory", "GDK_BACKEND=x11",
		"QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1", "QT_QPA_PLATFORM=xcb")
}

// WaylandEnv is Env for an application that draws on the Wayland
// compositor at socket (GDK_BACKEND=wayland, QT_QPA_PLATFORM=wayland, no
// DISPLAY) while its accessibility stays on the session's bus.
func (s *Session) WaylandEnv(socket string) []string {
	var env []string
	for _, kv := range s.Env() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "DISPLAY", "GDK_BACKEND", "QT_QPA_PLATFORM":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "WAYLAND_DISPLAY="+socket, "GDK_BACKEND=wayland", "QT_QPA_PLATFORM=wayland", "QT_ACCESSIBILITY=1")
}

// App is an application started in a session.
type App struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	stdout bytes.Buffer
	stderr bytes.Buffer
	done   chan struct{}
	err    error
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// StartApp starts name with args in the session; it is killed when the
// test ends.
func (s *Session) StartApp(t testing.TB, name string, args ...string) *App {
	t.Helper()
	return s.StartAppEnv(t, s.Env(), name, args...)
}

// StartAppEnv starts name with args in env (Env, WaylandEnv); it is
// killed when the test ends.
func (s *Session) StartAppEnv(t testing.TB, env []string, name string, args ...string) *App {
	t.Helper()
	a := &App{}
	a.cmd = exec.Command(name, args...)
	a.cmd.Env = env
	a.cmd.Stdout = lockedWriter{&a.mu, &a.stdout}
	a.cmd.Stderr = lockedWriter{&a.mu, &a.stderr}
	done, err := startInGroup(t, a.cmd, func(err error) { a.err = err })
	if err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	a.done = done
	return a
}

// startInGroup starts cmd in a process group of its own, killed with its
// parent and, with the whole group, when the test ends. The returned
// channel is closed once cmd has exited and exited has been given
// cmd.Wait's error.
func startInGroup(t testing.TB, cmd *exec.Cmd, exited func(error)) (chan struct{}, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() { exited(cmd.Wait()); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	return done, nil
}

// writeScript writes a program's source to a file named name in a
// temporary directory of the test and returns its path.
func writeScript(t testing.TB, name string, src []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Wait waits for the application to exit and returns its stdout and exit
// error.
func (a *App) Wait(ctx context.Context) (string, error) {
	select {
	case <-a.done:
	case <-ctx.Done():
		return a.Stdout(), fmt.Errorf("wait for %s: %w (stderr: %s)", a.cmd.Path, ctx.Err(), a.Stderr())
	}
	return a.Stdout(), a.err
}

// Pid returns the application's process id.
func (a *App) Pid() int { return a.cmd.Process.Pid }

// Exited reports whether the application has exited.
func (a *App) Exited() bool {
	select {
	case <-a.done:
		return true
	default:
		return false
	}
}

// Stdout returns what the application wrote to stdout so far.
func (a *App) Stdout() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stdout.String()
}

// Stderr returns what the application wrote to stderr so far.
func (a *App) Stderr() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stderr.String()
}

// WaitApp waits until an application whose accessible name contains name
// shows a window with at least one showing widget, and returns the tree.
func WaitApp(ctx context.Context, c *atspi.Client, name string) ([]atspi.Node, error) {
	for {
		nodes, err := c.Tree(ctx)
		if err == nil {
			for _, n := range nodes {
				if n.Depth > 1 && strings.Contains(n.App, name) && n.States.Has(atspi.StateShowing) && !n.Bounds.Empty() {
					return nodes, nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return nodes, fmt.Errorf("wait for accessible application %q: %w (last error: %v)", name, ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// busEscape escapes a value for a D-Bus address: a test's directory holds
// its name, and a subtest's name may hold a comma, which would end the
// value.
func busEscape(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_/.*", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02x", c)
		}
	}
	return b.String()
}
