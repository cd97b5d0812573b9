package portal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/godbus/dbus/v5"
)

// DefaultUser runs the headless session when acu is root (mutter, like
// sway, is not run as root; scripts/install-deps.sh creates the user).
const DefaultUser = "acu-compositor"

// Options configure StartHeadless.
type Options struct {
	Width, Height int    // the virtual monitor; 1280x720 when zero
	User          string // who runs the session when acu is root; DefaultUser when empty
}

// Headless is a GNOME session without a screen: a session bus, PipeWire
// with WirePlumber, and `mutter --headless --wayland --no-x11` with one
// virtual monitor, all in a runtime directory of their own.
type Headless struct {
	dir   string
	procs []*proc // in start order; stopped in reverse
	once  sync.Once
}

type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	log  string
}

// StartHeadless starts the session and returns once mutter's Wayland
// socket exists and its RemoteDesktop and ScreenCast services are on the
// bus (or ctx ends, or a process exits, with its output in the error).
func StartHeadless(ctx context.Context, opts Options) (*Headless, error) {
	if opts.Width <= 0 {
		opts.Width = 1280
	}
	if opts.Height <= 0 {
		opts.Height = 720
	}
	for _, p := range []string{"dbus-daemon", "pipewire", "wireplumber", "mutter"} {
		if _, err := exec.LookPath(p); err != nil {
			return nil, fmt.Errorf("start headless mutter: %w (install mutter, pipewire, wireplumber and dbus, e.g. with scripts/install-deps.sh)", err)
		}
	}
	cred, name, err := credential(opts.User)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("/tmp", "acu-mutter-")
	if err != nil {
		return nil, fmt.Errorf("start headless mutter: runtime dir: %w", err)
	}
	h := &Headless{dir: dir}
	fail := func(err error) (*Headless, error) {
		h.Stop()
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fail(fmt.Errorf("start headless mutter: give %s to %s: %w", dir, name, err))
		}
	}
	// The session bus: the standard session configuration, and when acu
	// is root and the session another user's, a rule that lets root
	// connect too (dbus-daemon admits only the bus owner's uid by default).
	conf := `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><include>/usr/share/dbus-1/session.conf</include>`
	if cred != nil {
		conf += `<policy context="default"><allow user="root"/></policy>`
	}
	conf += "</busconfig>\n"
	if err := os.WriteFile(filepath.Join(dir, "bus.conf"), []byte(conf), 0o644); err != nil {
		return fail(fmt.Errorf("start headless mutter: bus config: %w", err))
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_RUNTIME_DIR=" + dir,
		"DBUS_SESSION_BUS_ADDRESS=" + h.BusAddress(), "LANG=C.UTF-8"}
	var busEnv []string
	start := func(name string, args ...string) (*proc, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		if name == "dbus-daemon" {
			cmd.Env = append(slices.Clip(env), busEnv...)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
		p := &proc{name: name, cmd: cmd, done: make(chan struct{}), log: filepath.Join(dir, name+".log")}
		f, err := os.Create(p.log)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		cmd.Stdout, cmd.Stderr = f, f
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("start headless mutter: %s: %w", name, err)
		}
		go func() { _ = cmd.Wait(); close(p.done) }()
		h.procs = append(h.procs, p)
		return p, nil
	}
	// Services the bus starts (the portal and its GNOME backend) find the
	// desktop and the display as in a GNOME session, where gnome-session
	// sets them.
	busEnv = []string{"XDG_CURRENT_DESKTOP=GNOME", "WAYLAND_DISPLAY=" + h.Socket()}
	bus, err := start("dbus-daemon", "--config-file="+filepath.Join(dir, "bus.conf"), "--address="+h.BusAddress(), "--nofork", "--nopidfile")
	if err != nil {
		return fail(err)
	}
	if err := h.waitFor(ctx, bus, func() bool { return exists(filepath.Join(dir, "bus")) }); err != nil {
		return fail(err)
	}
	pw, err := start("pipewire")
	if err != nil {
		return fail(err)
	}
	if err := h.waitFor(ctx, pw, func() bool { return exists(h.PipeWireSocket()) }); err != nil {
		return fail(err)
	}
	if _, err := start("wireplumber"); err != nil {
		return fail(err)
	}
	mutter, err := start("mutter", "--headless", "--wayland", "--no-x11", "--wayland-display", "wayland-0",
		"--virtual-monitor", fmt.Sprintf("%dx%d", opts.Width, opts.Height))
	if err != nil {
		return fail(err)
	}
	conn, err := dbus.Connect(h.BusAddress())
	if err != nil {
		return fail(fmt.Errorf("start headless mutter: connect to its session bus: %w", err))
	}
	defer conn.Close()
	ready := func() bool {
		if !exists(h.Socket()) {
			return false
		}
		for _, svc := range []string{remoteDesktopName, screenCastName} {
			var owned bool
			if conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, svc).Store(&owned) != nil || !owned {
				return false
			}
		}
		return true
	}
	if err := h.waitFor(ctx, mutter, ready); err != nil {
		return fail(err)
	}
	return h, nil
}

// waitFor polls ok until it holds, p exits (an error with its output) or
// ctx ends.
func (h *Headless) waitFor(ctx context.Context, p *proc, ok func() bool) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !ok() {
		select {
		case <-p.done:
			b, _ := os.ReadFile(p.log)
			return fmt.Errorf("start headless mutter: %s exited: %s", p.name, tail(string(b), 2000))
		case <-ctx.Done():
			b, _ := os.ReadFile(p.log)
			return fmt.Errorf("start headless mutter: waiting for %s: %w; its output: %s", p.name, ctx.Err(), tail(string(b), 2000))
		case <-tick.C:
		}
	}
	return nil
}

// Socket is mutter's Wayland socket, an absolute path (a WAYLAND_DISPLAY value).
func (h *Headless) Socket() string { return filepath.Join(h.dir, "wayland-0") }

// BusAddress is the session bus mutter's D-Bus APIs are on.
func (h *Headless) BusAddress() string { return "unix:path=" + filepath.Join(h.dir, "bus") }

// PipeWireSocket is the PipeWire daemon's socket the screen-cast streams are on.
func (h *Headless) PipeWireSocket() string { return filepath.Join(h.dir, "pipewire-0") }

// RuntimeDir is the session's XDG_RUNTIME_DIR.
func (h *Headless) RuntimeDir() string { return h.dir }

// Env is the environment a client of the session needs.
func (h *Headless) Env() []string {
	return []string{"WAYLAND_DISPLAY=" + h.Socket(), "XDG_RUNTIME_DIR=" + h.dir, "DBUS_SESSION_BUS_ADDRESS=" + h.BusAddress()}
}

// Log returns the output of one of the session's processes ("mutter",
// "pipewire", "wireplumber", "dbus-daemon").
func (h *Headless) Log(name string) string {
	b, _ := os.ReadFile(filepath.Join(h.dir, name+".log"))
	return string(b)
}

// Stop ends the processes, newest first (SIGTERM, then SIGKILL after 5 s),
// and removes the runtime directory.
func (h *Headless) Stop() {
	h.once.Do(func() {
		for i := len(h.procs) - 1; i >= 0; i-- {
			p := h.procs[i]
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(5 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.done
			}
		}
		os.RemoveAll(h.dir)
	})
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// credential returns who runs the session: nil (acu's own user) unless
// acu is root, then the unprivileged user.
func credential(name string) (*syscall.Credential, string, error) {
	if os.Geteuid() != 0 {
		return nil, strconv.Itoa(os.Geteuid()), nil
	}
	if name == "" {
		name = DefaultUser
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, "", fmt.Errorf("start headless mutter: acu is root, so it runs the session as the user %q, which does not exist: create it with scripts/install-deps.sh (useradd --system %s) or run acu as a normal user: %w", name, name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil || uid == 0 {
		return nil, "", fmt.Errorf("start headless mutter: the user %q must be an unprivileged user (uid %s)", name, u.Uid)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{uint32(gid)}}, name, nil
}
