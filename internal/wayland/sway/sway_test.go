package sway_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/wayland"
	"github.com/acu-dev/acu/internal/wayland/sway"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// TestStartServesOutputOfSize starts a real headless sway and checks that
// its socket answers with one output of the asked size, and that Stop ends
// the process and removes its runtime dir.
func TestStartServesOutputOfSize(t *testing.T) {
	waylandtest.Need(t, "sway")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c, err := sway.Start(ctx, sway.Options{Width: 320, Height: 240})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer c.Stop()
	if !filepath.IsAbs(c.Socket()) || !strings.HasPrefix(c.Socket(), c.RuntimeDir()) {
		t.Errorf("Socket() = %q, want an absolute path in %s", c.Socket(), c.RuntimeDir())
	}
	if os.Geteuid() == 0 && c.User() != sway.DefaultUser {
		t.Errorf("as root, User() = %q, want %q", c.User(), sway.DefaultUser)
	}
	conn, err := wayland.Dial(ctx, c.Socket())
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	outs, err := wayland.BindOutputs(ctx, conn)
	conn.Close()
	if err != nil {
		t.Fatalf("BindOutputs: %v", err)
	}
	if len(outs) != 1 || outs[0].Width != 320 || outs[0].Height != 240 {
		t.Fatalf("outputs = %+v, want one of 320x240", outs[0])
	}
	if c.IPCSocket() == "" {
		t.Errorf("IPCSocket() is empty, want sway's IPC socket")
	}
	c.Stop()
	select {
	case <-c.Done():
	default:
		t.Errorf("sway (pid %d) still runs after Stop", c.Pid())
	}
	if _, err := os.Stat(c.RuntimeDir()); !os.IsNotExist(err) {
		t.Errorf("runtime dir %s left after Stop: %v", c.RuntimeDir(), err)
	}
}

// TestDetachedListAndStopByName records a detached compositor in a state
// dir, lists it and stops it by its socket's path, as `acu display` does.
func TestDetachedListAndStopByName(t *testing.T) {
	waylandtest.Need(t, "sway")
	state := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c, err := sway.Start(ctx, sway.Options{Width: 200, Height: 100, StateDir: state, Detach: true})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { c.Stop() })
	recs, err := sway.List(state)
	if err != nil || len(recs) != 1 || recs[0].Socket != c.Socket() || recs[0].Pid != c.Pid() {
		t.Fatalf("List = %+v, %v; want the one started at %s", recs, err, c.Socket())
	}
	if err := sway.StopByName(ctx, state, "/nonexistent/wayland-9"); err == nil {
		t.Errorf("StopByName of an unknown socket: no error")
	}
	if err := sway.StopByName(ctx, state, c.Socket()); err != nil {
		t.Fatalf("StopByName: %v", err)
	}
	<-c.Done()
	if recs, _ := sway.List(state); len(recs) != 0 {
		t.Errorf("List after stop = %+v, want none", recs)
	}
	if _, err := os.Stat(c.RuntimeDir()); !os.IsNotExist(err) {
		t.Errorf("runtime dir %s left after StopByName: %v", c.RuntimeDir(), err)
	}
}

// TestCommandReportsSwaysError runs sway commands over the IPC socket: a
// valid one succeeds, an unknown one fails with sway's message.
func TestCommandReportsSwaysError(t *testing.T) {
	c := waylandtest.Start(t, 200, 100)
	if err := sway.Command(t.Context(), c.IPCSocket(), "workspace number 3"); err != nil {
		t.Fatalf("Command(workspace number 3): %v", err)
	}
	err := sway.Command(t.Context(), c.IPCSocket(), "frobnicate now")
	if err == nil || !strings.Contains(err.Error(), "frobnicate") {
		t.Fatalf("Command(frobnicate now) = %v, want sway's error naming it", err)
	}
	if ws, err := sway.Windows(t.Context(), c.IPCSocket()); err != nil || len(ws) != 0 {
		t.Fatalf("Windows on an empty desktop = %+v, %v; want none", ws, err)
	}
}

// TestStartWithPrivateTMPDIR: with TMPDIR a directory only root may enter
// (as a root's private temporary directory is), the compositor's user still
// reaches its runtime dir, made in /tmp instead.
func TestStartWithPrivateTMPDIR(t *testing.T) {
	waylandtest.Need(t, "sway")
	if os.Geteuid() != 0 {
		t.Skip("only a root acu runs the compositor as another user")
	}
	private := t.TempDir()
	if err := os.Chmod(private, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", private)
	c := waylandtest.Start(t, 200, 100)
	if strings.HasPrefix(c.RuntimeDir(), private) {
		t.Errorf("runtime dir %s is inside the private TMPDIR %s", c.RuntimeDir(), private)
	}
}

func TestIsName(t *testing.T) {
	for name, want := range map[string]bool{
		"wayland-1": true, "/tmp/acu-wayland-42/wayland-1": true, "/run/user/1000/wayland-0": true,
		":99": false, "localhost:1": false, "/tmp/.X11-unix/X0:0": false, "": false, "/tmp/x": false,
	} {
		if got := sway.IsName(name); got != want {
			t.Errorf("IsName(%q) = %v, want %v", name, got, want)
		}
	}
}
