package xvfb

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// wmAnnounced reports, without waiting, whether a window manager on the
// display has set _NET_SUPPORTING_WM_CHECK (openbox does so after taking
// WM_S0 and setting itself up).
func wmAnnounced(t *testing.T, display string) bool {
	t.Helper()
	c, err := xgb.NewConnDisplay(display)
	if err != nil {
		t.Fatalf("connect %s: %v", display, err)
	}
	defer c.Close()
	name := "_NET_SUPPORTING_WM_CHECK"
	a, err := xproto.InternAtom(c, false, uint16(len(name)), name).Reply()
	if err != nil {
		t.Fatal(err)
	}
	root := xproto.Setup(c).DefaultScreen(c).Root
	p, err := xproto.GetProperty(c, false, root, a.Atom, xproto.AtomWindow, 0, 1).Reply()
	return err == nil && p.ValueLen > 0
}

// Start with a window manager returns only once the window manager manages
// the screen: checked at once, with no wait of the test's own.
func TestStartWaitsForWindowManager(t *testing.T) {
	s, err := Start(t.Context(), Options{Width: 320, Height: 200, WindowManager: true})
	if err != nil {
		t.Fatalf("Start(WindowManager) = %v", err)
	}
	t.Cleanup(func() { s.Stop() })
	if !wmAnnounced(t, s.Name()) {
		t.Fatalf("Start(WindowManager) returned before the window manager set _NET_SUPPORTING_WM_CHECK on %s", s.Name())
	}
}

// fakeWM puts an executable named fake-wm running script first on PATH and
// makes it the only window manager tried.
func fakeWM(t *testing.T, script string) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "fake-wm"), []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	saved := WindowManagers
	WindowManagers = []string{"fake-wm"}
	t.Cleanup(func() { WindowManagers = saved })
}

func TestStartWindowManagerNeverReady(t *testing.T) {
	fakeWM(t, "echo fake-wm is thinking >&2; exec sleep 60")
	s, err := Start(t.Context(), Options{Width: 64, Height: 64, WindowManager: true, WMTimeout: 300 * time.Millisecond})
	if err == nil {
		s.Stop()
		t.Fatal("Start with a window manager that never announces itself succeeded, want an error")
	}
	for _, want := range []string{"fake-wm", "not ready after", "_NET_SUPPORTING_WM_CHECK", "fake-wm is thinking", "without a window manager"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Start() error %q does not name %q", err, want)
		}
	}
}

func TestStartWindowManagerExits(t *testing.T) {
	fakeWM(t, "echo no screen for me >&2; exit 3")
	s, err := Start(t.Context(), Options{Width: 64, Height: 64, WindowManager: true})
	if err == nil {
		s.Stop()
		t.Fatal("Start with a window manager that exits succeeded, want an error")
	}
	for _, want := range []string{"exited before managing", "no screen for me"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Start() error %q does not name %q", err, want)
		}
	}
}
