// Package waylandtest starts real headless sway compositors (and phoc, a
// second wlroots compositor without sway's IPC: StartPhoc) for tests of
// the Wayland backend, and native Wayland clients on them.
//
// A test is skipped, with the reason, only when sway or phoc (or the client it
// needs) is not installed; scripts/install-deps.sh installs them and
// scripts/test.sh sets ACU_REQUIRE_WAYLAND=1, so in CI a missing one
// fails. Any other failure to start fails the test.
package waylandtest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/wayland/sway"
)

// Start starts a headless sway with one output of w x h for the test and
// stops it when the test ends.
func Start(t testing.TB, w, h int) *sway.Compositor {
	t.Helper()
	Need(t, "sway")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := sway.Start(ctx, sway.Options{Width: w, Height: h})
	if err != nil {
		t.Fatalf("start headless sway: %v", err)
	}
	t.Cleanup(func() { c.Stop() })
	return c
}

// Need skips the test when a program of the Wayland desktop is missing,
// or fails it when ACU_REQUIRE_WAYLAND=1 (scripts/test.sh sets it: CI has
// run install-deps.sh, so a missing program there is a broken set-up).
func Need(t testing.TB, program string) {
	t.Helper()
	if _, err := exec.LookPath(program); err != nil {
		if os.Getenv("ACU_REQUIRE_WAYLAND") == "1" {
			t.Fatalf("%s is not installed, and ACU_REQUIRE_WAYLAND=1 requires it (run scripts/install-deps.sh): %v", program, err)
		}
		t.Skipf("%s is not installed (scripts/install-deps.sh installs it): %v", program, err)
	}
}

// Compositor is a running compositor a client can be started on
// (*sway.Compositor, *Phoc).
type Compositor interface {
	Socket() string
	Env() []string
}

// Client starts a native Wayland program on c for the test, killed when
// the test ends.
func Client(t testing.TB, c Compositor, name string, args ...string) *exec.Cmd {
	t.Helper()
	Need(t, name)
	cmd := exec.Command(name, args...)
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8"}, c.Env()...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s on %s: %v", name, c.Socket(), err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	return cmd
}
