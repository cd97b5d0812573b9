package testx

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// StartWM starts openbox (an EWMH window manager from Debian) on display
// and waits until it has announced itself (_NET_SUPPORTING_WM_CHECK). It is
// stopped when the test ends. Missing openbox fails the test: install it
// with scripts/install-deps.sh. It returns openbox's process, for a test
// that stops it for a while (a window manager slow to answer, as on a
// loaded machine).
func StartWM(t testing.TB, display string) *os.Process {
	t.Helper()
	cmd := exec.Command("openbox", "--sm-disable")
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "DISPLAY="+display, "HOME="+home, "XDG_CONFIG_HOME="+home, "XDG_CACHE_HOME="+home)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("testx: start openbox (install it with scripts/install-deps.sh): %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	c, err := xgb.NewConnDisplay(display)
	if err != nil {
		t.Fatalf("testx: connect to %s: %v", display, err)
	}
	defer c.Close()
	root := xproto.Setup(c).DefaultScreen(c).Root
	name := "_NET_SUPPORTING_WM_CHECK"
	a, err := xproto.InternAtom(c, false, uint16(len(name)), name).Reply()
	if err != nil {
		t.Fatalf("testx: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		r, err := xproto.GetProperty(c, false, root, a.Atom, xproto.AtomWindow, 0, 1).Reply()
		if err == nil && r.ValueLen > 0 {
			return cmd.Process
		}
		select {
		case <-done:
			t.Fatalf("testx: openbox on %s exited before it managed the screen", display)
		case <-ctx.Done():
			t.Fatalf("testx: openbox on %s did not announce itself", display)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
