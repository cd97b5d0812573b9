package virtual_test

import (
	"bytes"
	"context"
	"image"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
	"github.com/acu-dev/acu/internal/xvfb"
)

// TestFillGTKFormByAccessibleElements reads a native Wayland GTK dialog's
// accessible tree (AT-SPI, the same bus as on X11), clicks its entry and
// its OK button where the tree puts them and types into the entry: the
// app prints what was typed. GTK on Wayland reports extents relative to
// its window, so each element is placed on screen by the window's
// content origin from sway's IPC; without it the click misses OK.
func TestFillGTKFormByAccessibleElements(t *testing.T) {
	waylandtest.Need(t, "zenity")
	c := waylandtest.Start(t, 640, 400)
	d := open(t, c)
	// at-spi2-registryd left the bus when started without an X display
	// here, so the session gets one; the app itself is on Wayland.
	s := atspitest.Start(t, testx.StartXvfb(t, xvfb.Options{Width: 320, Height: 200}))
	var env []string
	for _, kv := range s.Env() {
		if !strings.HasPrefix(kv, "DISPLAY=") && !strings.HasPrefix(kv, "GDK_BACKEND=") {
			env = append(env, kv)
		}
	}
	env = append(env, "GDK_BACKEND=wayland", "WAYLAND_DISPLAY="+c.Socket())
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.Command("zenity", "--entry", "--title=acu-a11y", "--text=Name")
	cmd.Env = env
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start zenity: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})

	cl, err := atspi.Connect(ctx, atspi.Options{SessionBus: s.SessionBus})
	if err != nil {
		t.Fatalf("connect to the accessibility bus: %v", err)
	}
	defer cl.Close()
	nodes, err := atspitest.WaitApp(ctx, cl, "zenity")
	if err != nil {
		t.Fatal(err)
	}
	var entry, ok image.Rectangle
	for _, n := range nodes {
		switch {
		case n.Role == "text" && n.States.Has(atspi.StateShowing):
			entry = n.Bounds
		case n.Role == "push button" && n.Name == "OK":
			ok = n.Bounds
		}
	}
	if entry.Empty() || ok.Empty() {
		t.Fatalf("no entry or OK button in the tree: %+v", nodes)
	}
	// The window's client area on screen, where sway settled it.
	origin := waylandtest.Window(ctx, t, c, "acu-a11y", nil).Content.Min
	at := func(r image.Rectangle) (int, int) {
		p := r.Add(origin).Min.Add(r.Size().Div(2))
		return p.X, p.Y
	}
	x, y := at(entry)
	if err := d.Click(ctx, x, y, 1, 1); err != nil {
		t.Fatalf("click the entry: %v", err)
	}
	const text = "Wayland ✓ a11y"
	if err := d.Type(ctx, text); err != nil {
		t.Fatalf("Type: %v", err)
	}
	x, y = at(ok)
	if err := d.Click(ctx, x, y, 1, 1); err != nil {
		t.Fatalf("click OK: %v", err)
	}
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Fatalf("zenity: %v", err)
		}
	case <-ctx.Done():
		t.Fatalf("zenity did not close: the click at (%d,%d) missed OK (%v + window origin %v)", x, y, ok, origin)
	}
	if got := strings.TrimSuffix(stdout.String(), "\n"); got != text {
		t.Fatalf("zenity printed %q, want %q", got, text)
	}
}
