package atspitest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/input"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// Desktop is a private X display with its own session bus and accessibility
// bus, an AT-SPI client, a capture hub and an XTest device over the whole
// screen: what the element map and the orchestrator are tested on. Every
// part is closed when the test ends.
type Desktop struct {
	Display string
	Session *Session
	Tree    *atspi.Client
	Hub     *capture.Hub
	Conn    *display.Conn
	Input   *input.Device
}

// NewDesktop starts a Desktop.
func NewDesktop(t testing.TB) *Desktop {
	t.Helper()
	d := &Desktop{Display: testx.StartXvfb(t, xvfb.Options{})}
	d.Session = Start(t, d.Display)
	hub, err := capture.NewHub(capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hub.Close() })
	d.Hub = hub
	tree, err := atspi.Connect(context.Background(), atspi.Options{SessionBus: d.Session.SessionBus})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tree.Close() })
	d.Tree = tree
	conn, err := display.Open(context.Background(), d.Display, display.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	d.Conn = conn
	dev, err := input.New(conn, input.Area{W: conn.Screen.Width, H: conn.Screen.Height}, input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	d.Input = dev
	return d
}

// Zenity starts a zenity dialog and waits until its widgets are on the
// accessibility bus.
func (d *Desktop) Zenity(t testing.TB, args ...string) *App {
	t.Helper()
	app := d.Session.StartApp(t, "zenity", args...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := WaitApp(ctx, d.Tree, "zenity"); err != nil {
		t.Fatalf("%v; zenity stderr: %s", err, app.Stderr())
	}
	// With a title, wait for this dialog's own window, mapped on the X
	// display: an earlier zenity already satisfies WaitApp, and a test of
	// two dialogs (the split screen) must not start before the second's
	// window exists.
	for _, a := range args {
		title, ok := strings.CutPrefix(a, "--title=")
		if !ok {
			continue
		}
		for !d.mapped(ctx, title) {
			if ctx.Err() != nil || app.Exited() {
				t.Fatalf("zenity's window %q never showed; zenity stderr: %s", title, app.Stderr())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return app
}

// mapped reports whether a mapped window titled title is on the display.
func (d *Desktop) mapped(ctx context.Context, title string) bool {
	ws, err := d.Conn.Windows(ctx)
	if err != nil {
		return false
	}
	for _, w := range ws {
		if w.Title == title && w.Mapped {
			return true
		}
	}
	return false
}
