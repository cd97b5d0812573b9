package idle_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/wayland"
	"github.com/acu-dev/acu/internal/wayland/idle"
	"github.com/acu-dev/acu/internal/wayland/virtual"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

func open(t *testing.T, c waylandtest.Compositor) *idle.Watch {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	w, err := idle.Open(ctx, c.Socket(), "")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// device opens a virtual pointer and keyboard on a connection of its own:
// another client's input, which the watch must take for the user's.
func device(t *testing.T, c waylandtest.Compositor) *virtual.Device {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	d, err := virtual.Open(ctx, c.Socket(), "")
	if err != nil {
		t.Fatalf("virtual.Open: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// waitUser waits until LastUser is at or after since, and returns it.
func waitUser(t *testing.T, w *idle.Watch, since time.Time, what string) time.Time {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if last := w.LastUser(); !last.Before(since) {
			return last
		}
		if time.Now().After(deadline) {
			t.Fatalf("LastUser after %s = %v, want at or after %v", what, w.LastUser(), since)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestOtherClientsInputIsTheUsers types with wtype, another program, and
// clicks with a virtual pointer on a connection of the test's own: each
// moves LastUser to about then, on a real sway.
func TestOtherClientsInputIsTheUsers(t *testing.T) {
	waylandtest.Need(t, "wtype")
	otherClientsInput(t, waylandtest.Start(t, 320, 200))
}

func otherClientsInput(t *testing.T, c waylandtest.Compositor) {
	w := open(t, c)
	if p, v := w.Protocol(); p != "org_kde_kwin_idle" || v != 1 {
		t.Errorf("Protocol() = %s v%d, want org_kde_kwin_idle v1 (what sway 1.7 offers)", p, v)
	}
	if last := w.LastUser(); !last.IsZero() {
		t.Fatalf("LastUser before any input = %v, want the zero time", last)
	}

	before := time.Now()
	cmd := exec.Command("wtype", "hello")
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, c.Env()...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("wtype hello: %v\n%s", err, out)
	}
	last := waitUser(t, w, before, "wtype hello")
	if now := time.Now(); last.After(now) {
		t.Fatalf("LastUser after wtype = %v, later than now %v", last, now)
	}

	user := device(t, c)
	before = time.Now()
	if err := user.Click(t.Context(), 100, 100, 1, 1); err != nil {
		t.Fatalf("the user's click: %v", err)
	}
	waitUser(t, w, before, "another client's click")
}

// TestCloseEndsTheWatch closes a watch (its loop ends: TestMain's leak
// check) and a second one whose compositor went away first.
func TestCloseEndsTheWatch(t *testing.T) {
	c := waylandtest.Start(t, 320, 200)
	w := open(t, c)
	if err := w.Err(); err != nil {
		t.Fatalf("Err of a running watch = %v, want nil", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := w.Err(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("Err after Close = %v, want one saying the watch is closed", err)
	}
	w.Begin() // harmless after Close
	w.End()
	if _, err := w.Blind(t.Context()); err == nil {
		t.Fatal("Blind after Close: no error")
	}

	gone := open(t, c)
	c.Stop()
	deadline := time.Now().Add(30 * time.Second)
	for gone.Err() == nil {
		if time.Now().After(deadline) {
			t.Fatal("Err stayed nil after the compositor stopped")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := gone.Close(); err != nil {
		t.Logf("Close after the compositor stopped: %v", err)
	}
}

// TestOffered picks ext-idle-notify over KDE's protocol, and Open says
// what is missing when neither is offered.
func TestOffered(t *testing.T) {
	kde := wayland.Global{Name: 1, Interface: "org_kde_kwin_idle", Version: 1}
	ext := wayland.Global{Name: 2, Interface: "ext_idle_notifier_v1", Version: 2}
	seat := wayland.Global{Name: 3, Interface: "wl_seat", Version: 7}
	for _, tc := range []struct {
		name    string
		globals []wayland.Global
		want    string
	}{
		{"both", []wayland.Global{kde, seat, ext}, "ext_idle_notifier_v1"},
		{"kde", []wayland.Global{seat, kde}, "org_kde_kwin_idle"},
		{"none", []wayland.Global{seat}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, ok := idle.Offered(tc.globals)
			if g.Interface != tc.want || ok != (tc.want != "") {
				t.Errorf("Offered = %q, %v; want %q", g.Interface, ok, tc.want)
			}
		})
	}
	if !strings.Contains(idle.ErrUnsupported.Error(), "ext_idle_notifier_v1 nor org_kde_kwin_idle") {
		t.Errorf("ErrUnsupported = %q, want it to name both protocols", idle.ErrUnsupported)
	}
}
