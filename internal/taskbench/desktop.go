package taskbench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/xvfb"
)

// launcherPath is where Debian's at-spi2-core installs the bus launcher.
const launcherPath = "/usr/libexec/at-spi-bus-launcher"

// Screen size of every task's display.
const (
	ScreenW = 1280
	ScreenH = 800
)

// desktop is one task's private desktop: an Xvfb with a window manager, a
// session bus with the accessibility bus, and the processes started on it.
type desktop struct {
	x       *xvfb.Server
	work    string // $WORK
	home    string // $HOME of the applications
	bus     string // session bus address
	cdpPort int
	log     *slog.Logger

	mu    sync.Mutex
	procs []*proc
	named map[string]*proc
}

// proc is a started process, in its own process group.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  lockedBuffer
	err  lockedBuffer
	done chan struct{}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startDesktop starts Xvfb, the session bus and the accessibility bus, in
// work.
func startDesktop(ctx context.Context, work string, log *slog.Logger) (_ *desktop, err error) {
	d := &desktop{work: work, home: filepath.Join(work, "home"), named: map[string]*proc{}, log: log}
	defer func() {
		if err != nil {
			d.close()
		}
	}()
	for _, dir := range []string{d.home, filepath.Join(work, "run")} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	}
	d.x, err = xvfb.Start(ctx, xvfb.Options{Width: ScreenW, Height: ScreenH, WindowManager: true, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("start Xvfb (install xvfb): %w", err)
	}
	conf := filepath.Join(work, "run", "session.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(sessionConf, filepath.Join(work, "run"))), 0o600); err != nil {
		return nil, err
	}
	bus, err := d.start("dbus-daemon", []string{"dbus-daemon", "--config-file=" + conf, "--nofork", "--print-address=1"}, d.baseEnv())
	if err != nil {
		return nil, fmt.Errorf("start the session bus (install dbus): %w", err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if line, _, ok := strings.Cut(bus.out.String(), "\n"); ok {
			d.bus = strings.TrimSpace(line)
			break
		}
		if time.Now().After(deadline) {
			return nil, errors.New("dbus-daemon printed no address within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := d.start("at-spi-bus-launcher", []string{launcherPath, "--launch-immediately"}, d.Env()); err != nil {
		return nil, fmt.Errorf("start %s (install at-spi2-core): %w", launcherPath, err)
	}
	actx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	for {
		if _, err := atspi.BusAddress(actx, d.bus, time.Second); err == nil {
			break
		} else if actx.Err() != nil {
			return nil, fmt.Errorf("the accessibility bus did not come up: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	d.cdpPort, err = freePort()
	if err != nil {
		return nil, err
	}
	return d, nil
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

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Display is the X display name.
func (d *desktop) Display() string { return d.x.Name() }

func (d *desktop) baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "AT_SPI_BUS", "GTK_MODULES", "NO_AT_BRIDGE", "HOME", "XDG_CONFIG_HOME",
			"XDG_DATA_HOME", "XDG_CACHE_HOME", "GNOME_ACCESSIBILITY", "XDG_RUNTIME_DIR", "GSETTINGS_BACKEND", "WAYLAND_DISPLAY", "GDK_BACKEND":
			continue
		}
		if strings.HasPrefix(k, "ACU_TASKBENCH_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "DISPLAY="+d.x.Name(), "XDG_RUNTIME_DIR="+filepath.Join(d.work, "run"), "HOME="+d.home, "LANG=C.UTF-8")
}

// Env is the environment of the task's applications: the display, the
// session bus, accessibility on, settings in memory, $HOME in the work
// directory.
func (d *desktop) Env() []string {
	return append(d.baseEnv(), "DBUS_SESSION_BUS_ADDRESS="+d.bus, "GNOME_ACCESSIBILITY=1", "GSETTINGS_BACKEND=memory",
		"GDK_BACKEND=x11", "WORK="+d.work, "CDP_PORT="+strconv.Itoa(d.cdpPort))
}

// EngineEnv is the environment of an engine (an acu process): the
// applications' (the task's display, session bus and $HOME, so that what
// the engine launches keeps to the task's directory) with the user's
// ACU_* settings and keys, and the user's configuration file (ACU_CONFIG)
// found as acu would find it in the user's $HOME.
func (d *desktop) EngineEnv() []string {
	env := d.Env()
	if f := userConfig(os.Getenv); f != "" {
		env = append(env, "ACU_CONFIG="+f)
	}
	return env
}

// userConfig is acu's configuration file of the user running the bench:
// ACU_CONFIG, else $XDG_CONFIG_HOME/acu/acu.env or $HOME/.config/acu/acu.env
// when present; "" when there is none.
func userConfig(getenv func(string) string) string {
	if f := getenv("ACU_CONFIG"); f != "" {
		return f
	}
	base := getenv("XDG_CONFIG_HOME")
	if base == "" && getenv("HOME") != "" {
		base = filepath.Join(getenv("HOME"), ".config")
	}
	if base == "" {
		return ""
	}
	f := filepath.Join(base, "acu", "acu.env")
	if _, err := os.Stat(f); err != nil {
		return ""
	}
	return f
}

// expand replaces $WORK, $HOME and $CDP_PORT.
func (d *desktop) expand(s string) string {
	return strings.NewReplacer("$WORK", d.work, "$HOME", d.home, "$CDP_PORT", strconv.Itoa(d.cdpPort)).Replace(s)
}

func (d *desktop) start(name string, argv []string, env []string) (*proc, error) {
	p := &proc{name: name, done: make(chan struct{})}
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Env = env
	p.cmd.Dir = d.work
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.err
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	d.mu.Lock()
	d.procs = append(d.procs, p)
	d.mu.Unlock()
	return p, nil
}

// setup starts one setup process and waits as it says.
func (d *desktop) setup(ctx context.Context, p Process) error {
	var argv []string
	switch {
	case len(p.Run) > 0:
		for _, a := range p.Run {
			argv = append(argv, d.expand(a))
		}
	case p.Shell != "":
		argv = []string{"sh", "-c", d.expand(p.Shell)}
	case p.Browser != "":
		u := d.expand(p.Browser)
		if !strings.Contains(u, "://") {
			u = "file://" + filepath.Join(d.work, u)
		}
		argv = []string{"chromium", "--no-sandbox", "--no-first-run", "--no-default-browser-check", "--disable-gpu",
			"--force-renderer-accessibility", "--disable-features=Translate,MediaRouter", "--password-store=basic",
			"--remote-debugging-address=127.0.0.1", "--remote-debugging-port=" + strconv.Itoa(d.cdpPort),
			"--user-data-dir=" + filepath.Join(d.work, "chromium"), "--window-position=0,0", "--window-size=1280,800", u}
	}
	name := p.Name
	if name == "" {
		name = filepath.Base(argv[0])
	}
	if _, err := exec.LookPath(argv[0]); err != nil {
		return fmt.Errorf("setup %s: %w", name, err)
	}
	pr, err := d.start(name, argv, d.Env())
	if err != nil {
		return fmt.Errorf("setup %s: %w", name, err)
	}
	if p.Name != "" {
		d.mu.Lock()
		d.named[p.Name] = pr
		d.mu.Unlock()
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if p.WaitExit {
		select {
		case <-pr.done:
			if pr.cmd.ProcessState != nil && !pr.cmd.ProcessState.Success() {
				return fmt.Errorf("setup %s: %s: %s", name, pr.cmd.ProcessState, strings.TrimSpace(pr.err.String()))
			}
		case <-wctx.Done():
			return fmt.Errorf("setup %s did not exit within 30 s", name)
		}
	}
	if p.WaitWindow != "" {
		if err := d.waitWindow(wctx, p.WaitWindow, pr); err != nil {
			return fmt.Errorf("setup %s: %w", name, err)
		}
	}
	if p.Browser != "" {
		if err := d.waitCDP(wctx); err != nil {
			return fmt.Errorf("setup %s: %w", name, err)
		}
	}
	return nil
}

// waitWindow waits for a top-level window whose title contains title.
func (d *desktop) waitWindow(ctx context.Context, title string, p *proc) error {
	conn, err := display.Open(ctx, d.Display(), display.Options{})
	if err != nil {
		return err
	}
	defer conn.Close()
	for {
		ws, err := conn.Windows(ctx)
		if err == nil {
			for _, w := range ws {
				if strings.Contains(w.Title, title) {
					// The window is mapped; give the toolkit a moment to
					// publish its accessible tree.
					return sleepCtx(ctx, 500*time.Millisecond)
				}
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("exited before its window %q showed: %s", title, lastLines(p.err.String(), 5))
		case <-ctx.Done():
			return fmt.Errorf("no window titled %q within 30 s", title)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// stdout is a named process's output, after giving it up to wait to exit.
func (d *desktop) stdout(name string, wait time.Duration) (string, error) {
	d.mu.Lock()
	p, ok := d.named[name]
	d.mu.Unlock()
	if !ok {
		return "", fmt.Errorf("no setup process named %q", name)
	}
	select {
	case <-p.done:
	case <-time.After(wait):
	}
	return p.out.String(), nil
}

// run runs a command on the desktop and returns its stdout.
func (d *desktop) run(ctx context.Context, argv []string) (string, error) {
	for i := range argv {
		argv[i] = d.expand(argv[i])
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = d.Env(), d.work
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%s: %w: %s", argv[0], err, lastLines(stderr.String(), 3))
	}
	return string(out), nil
}

// dump writes the named processes' state and stderr, for review.
func (d *desktop) dump(w io.Writer) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for name, p := range d.named {
		state := "running"
		select {
		case <-p.done:
			state = p.cmd.ProcessState.String()
		default:
		}
		fmt.Fprintf(w, "process %s: %s; stderr: %s\n", name, state, lastLines(p.err.String(), 5))
	}
}

// close kills what the task started, by pid, then the X server: each
// started process's group, and every process descended from one, found
// before the kill (the accessibility bus launcher's dbus-daemon runs in a
// session of its own, outside the launcher's group). Nothing else is
// touched, whatever its command line names. X clients the engine launched
// end with the X server.
func (d *desktop) close() {
	d.mu.Lock()
	procs := d.procs
	d.procs = nil
	d.mu.Unlock()
	roots := make([]int, len(procs))
	for i, p := range procs {
		roots[i] = p.cmd.Process.Pid
	}
	left := descendants(roots)
	for i := len(procs) - 1; i >= 0; i-- {
		killGroup(procs[i])
	}
	for _, p := range left {
		p.kill()
	}
	if d.x != nil {
		_ = d.x.Stop()
	}
}

// procID names a process by its pid and its start time (in clock ticks
// since boot), so that a pid reused by another process is not taken for it.
type procID struct {
	pid   int
	start uint64
}

// statOf reads a process's parent and start time from /proc/pid/stat.
func statOf(pid int) (ppid int, start uint64, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, false
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from after its last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state): ppid is field 4, starttime field 22.
	if len(f) < 20 {
		return 0, 0, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	return ppid, start, err1 == nil && err2 == nil
}

// descendants lists every living process descended from one of roots.
func descendants(roots []int) []procID {
	kids := map[int][]procID{}
	dirs, _ := os.ReadDir("/proc")
	for _, e := range dirs {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, start, ok := statOf(pid); ok {
			kids[ppid] = append(kids[ppid], procID{pid, start})
		}
	}
	var out []procID
	queue := append([]int(nil), roots...)
	seen := map[int]bool{}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, k := range kids[pid] {
			if !seen[k.pid] {
				seen[k.pid] = true
				out = append(out, k)
				queue = append(queue, k.pid)
			}
		}
	}
	return out
}

// kill sends SIGKILL to p if it is still the process found (same start
// time).
func (p procID) kill() {
	if _, start, ok := statOf(p.pid); ok && start == p.start {
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
}

func killGroup(p *proc) {
	pid := p.cmd.Process.Pid
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(2 * time.Second):
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	<-p.done
}

// scanLines calls fn for each line of r until it ends.
func scanLines(r interface{ Read([]byte) (int, error) }, fn func([]byte)) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		fn(sc.Bytes())
	}
}
