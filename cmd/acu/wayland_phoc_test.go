package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// TestWaylandWindowsOnPhoc drives the real daemon's window API on phoc, a
// wlroots compositor without sway's IPC: GET /v1/windows lists foot's
// window by title and app id with the note that there is no geometry,
// POST /v1/windows/{id}/maximize maximizes it (the answer's window says
// so), and minimize (phoc ignores it) and move answer 409 with a message
// saying why.
func TestWaylandWindowsOnPhoc(t *testing.T) {
	c := waylandtest.StartPhoc(t, 800, 600)
	sock := c.Socket()
	env, dataDir, port := newEnv(t, sock)
	d := startDaemon(t, env, dataDir, port)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	waylandtest.Client(t, c, "foot", "--title=RED", "--app-id=acu-red", "--window-size-pixels=300x200", "sh", "-c", "exec sleep 600")
	var win api.Window
	var list api.WindowList
	deadline := time.Now().Add(30 * time.Second)
	for win.ID == "" {
		l, err := d.client.Windows(ctx, sock)
		for _, w := range l.Windows {
			if w.Title == "RED" {
				win, list = w, l
			}
		}
		if win.ID == "" && time.Now().After(deadline) {
			t.Fatalf("GET /v1/windows has no RED: %+v, %v", l, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if list.WM != "wlr-foreign-toplevel" || !strings.Contains(list.Note, "no window geometry") || win.Class != "acu-red" || win.W != 0 {
		t.Errorf("GET /v1/windows = %+v, want wm wlr-foreign-toplevel, a note on the missing geometry, RED with app id acu-red and no rectangle", list)
	}

	r, err := d.client.WindowOp(ctx, win.ID, api.WindowMaximize, api.WindowOp{Display: sock})
	if err != nil || r.Window == nil || !r.Window.Maximized {
		t.Fatalf("maximize = %+v, %v", r, err)
	}
	x, y := 10, 10
	for _, op := range []struct {
		op   string
		req  api.WindowOp
		want string
	}{
		{api.WindowMinimize, api.WindowOp{Display: sock}, "ignores the request"},
		{api.WindowMove, api.WindowOp{Display: sock, X: &x, Y: &y}, "no protocol to place a window"},
	} {
		_, err := d.client.WindowOp(ctx, win.ID, op.op, op.req)
		var se *api.StatusError
		if !errors.As(err, &se) || se.Status != 409 || !strings.Contains(se.Message, op.want) {
			t.Errorf("%s = %v, want a 409 saying %q", op.op, err, op.want)
		}
	}
}
