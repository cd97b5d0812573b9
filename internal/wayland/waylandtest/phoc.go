package waylandtest

import (
	"context"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/daemonproc"
	"github.com/acu-dev/acu/internal/wayland"
	"github.com/acu-dev/acu/internal/wayland/sway"
)

// Phoc is a headless phoc (phosh's wlroots compositor) started by
// StartPhoc: a second wlroots compositor beside sway, with no sway IPC,
// so acu's windows come from the toplevel protocol alone and phoc, a
// stacking compositor, honours maximize and minimize (sway ignores them).
//
// wayfire 0.7 (Debian 12) cannot stand in for it on a machine without a
// GPU: it renders with GLES2 only and exits with "Failed to get DRM file
// descriptor" when the headless backend has no render node, whatever
// WLR_RENDERER says; phoc takes wlroots' pixman renderer.
type Phoc struct {
	socket, dir string
	cmd         *exec.Cmd
	done        chan struct{}
	out         *daemonproc.Tail
}

// Socket returns the absolute path of phoc's Wayland socket.
func (p *Phoc) Socket() string { return p.socket }

// RuntimeDir returns phoc's XDG_RUNTIME_DIR.
func (p *Phoc) RuntimeDir() string { return p.dir }

// Pid returns phoc's process id.
func (p *Phoc) Pid() int { return p.cmd.Process.Pid }

// Env returns the environment a client of phoc needs.
func (p *Phoc) Env() []string {
	return []string{"WAYLAND_DISPLAY=" + p.socket, "XDG_RUNTIME_DIR=" + p.dir}
}

// StartPhoc starts a headless phoc with one output of w x h for the test
// (as sway.DefaultUser when the test runs as root, as sway is) and stops
// it, removing its runtime directory, when the test ends.
func StartPhoc(t testing.TB, w, h int) *Phoc {
	t.Helper()
	Need(t, "phoc")
	bin, _ := exec.LookPath("phoc")
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup(sway.DefaultUser)
		if err != nil {
			t.Fatalf("phoc runs as %s when root, which does not exist (scripts/install-deps.sh creates it): %v", sway.DefaultUser, err)
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{uint32(gid)}}
	}
	dir, err := os.MkdirTemp("/tmp", "acu-wayland-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	ini := filepath.Join(dir, "phoc.ini")
	cfg := "[core]\nxwayland=false\n[output:HEADLESS-1]\nmode=" + strconv.Itoa(w) + "x" + strconv.Itoa(h) + "\n"
	if err := os.WriteFile(ini, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	// phoc maximizes every window by default (sm.puri.phoc auto-maximize,
	// a phone's behaviour); off, it stacks windows as a desktop does, so
	// maximize and minimize can be seen to change something. GLib's
	// keyfile backend reads the setting from the runtime directory.
	kf := filepath.Join(dir, "config", "glib-2.0", "settings")
	if err := os.MkdirAll(kf, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(kf, "keyfile"), []byte("[sm/puri/phoc]\nauto-maximize=false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if cred != nil {
		for _, d := range []string{filepath.Join(dir, "config"), filepath.Join(dir, "config", "glib-2.0"), kf, filepath.Join(kf, "keyfile")} {
			if err := os.Chown(d, int(cred.Uid), int(cred.Gid)); err != nil {
				t.Fatal(err)
			}
		}
	}
	p := &Phoc{dir: dir, done: make(chan struct{}), out: daemonproc.NewTail(8 << 10)}
	p.cmd = exec.Command(bin, "-C", ini)
	p.cmd.Dir = dir
	p.cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dir,
		"XDG_RUNTIME_DIR=" + dir,
		"WLR_BACKENDS=headless",
		"WLR_LIBINPUT_NO_DEVICES=1",
		"WLR_RENDERER=pixman",
		"WLR_HEADLESS_OUTPUTS=1",
		"GSETTINGS_BACKEND=keyfile",
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
	}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start phoc: %v", err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { daemonproc.Terminate(p.cmd.Process, p.done, 5*time.Second) })

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for p.socket == "" {
		select {
		case <-p.done:
			t.Fatalf("phoc exited before its socket was ready: %s", p.out.String())
		case <-ctx.Done():
			t.Fatalf("phoc's socket was not ready within 30 s: %s", p.out.String())
		case <-time.After(20 * time.Millisecond):
		}
		socks, _ := filepath.Glob(filepath.Join(dir, "wayland-*"))
		for _, s := range socks {
			if strings.HasSuffix(s, ".lock") {
				continue
			}
			dctx, dcancel := context.WithTimeout(ctx, 2*time.Second)
			conn, err := wayland.Dial(dctx, s)
			dcancel()
			if err != nil {
				continue
			}
			_, ok := conn.Global("wl_output")
			conn.Close()
			if ok {
				p.socket = s
			}
		}
	}
	seatUp(t, p)
	return p
}

// seatUp makes phoc create its seat. A headless phoc has no input device,
// and phoc makes its seat (and offers wl_seat) only for a first device,
// where sway makes seat0 at start: a virtual pointer created with no seat
// (the protocol allows null) is that device. Its connection stays open
// while phoc runs, so the seat keeps a pointer, as a real session's seat
// keeps its mouse.
func seatUp(t testing.TB, p *Phoc) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := wayland.Dial(ctx, p.socket)
	if err != nil {
		t.Fatalf("phoc: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	g, ok := conn.Global("zwlr_virtual_pointer_manager_v1")
	if !ok {
		t.Fatalf("phoc offers no zwlr_virtual_pointer_manager_v1")
	}
	mgr, _, err := conn.Bind(g, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	ptr := conn.NewObject("zwlr_virtual_pointer_v1", nil)
	if err := conn.Request(mgr, wayland.PointerManagerReqCreate, uint32(0), ptr); err != nil {
		t.Fatal(err)
	}
	for {
		if err := conn.Roundtrip(ctx); err != nil {
			t.Fatalf("phoc's seat: %v", err)
		}
		if _, ok := conn.Global("wl_seat"); ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("phoc offered no wl_seat after a virtual pointer was made: %s", p.out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
