package main

import (
	"context"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// waylandForm is a GTK 3 form (python3-gi) with two entries and a Submit
// button at fixed places in an undecorated window (no client-side
// shadow, so the window's content origin in sway's tree is the form's
// 0,0). Once mapped it prints each widget's rectangle in the window; on
// Submit it prints what the entries hold and exits.
const waylandForm = `
import sys, gi
gi.require_version("Gtk", "3.0")
from gi.repository import Gtk, GLib
win = Gtk.Window(title="acu-form")
win.set_decorated(False)
win.set_default_size(420, 220)
fixed = Gtk.Fixed()
win.add(fixed)
name, city = Gtk.Entry(), Gtk.Entry()
button = Gtk.Button(label="Submit")
for w, x, y in ((name, 20, 20), (city, 20, 80), (button, 20, 140)):
    w.set_size_request(300, 40)
    fixed.put(w, x, y)
def submit(_):
    print("submitted name=%s city=%s" % (name.get_text(), city.get_text()), flush=True)
    Gtk.main_quit()
button.connect("clicked", submit)
def report():
    for label, w in (("name", name), ("city", city), ("submit", button)):
        x, y = w.translate_coordinates(win, 0, 0)
        a = w.get_allocation()
        print("at %s %d %d %d %d" % (label, x, y, a.width, a.height), flush=True)
    return False
win.connect("map-event", lambda *a: GLib.timeout_add(300, report))
win.connect("destroy", Gtk.main_quit)
win.show_all()
Gtk.main()
`

// TestWaylandActionsFillGTKForm starts the real daemon with a headless
// sway as its display, opens a native GTK form on it, and through the
// HTTP API lists the windows, focuses the form away from a terminal,
// moves it, fills it by pixels (clicks at the entries, typed text, the
// city pasted from a clipboard acu set, a click on Submit) and reads the
// form's own output.
func TestWaylandActionsFillGTKForm(t *testing.T) {
	waylandtest.NeedGTK(t)
	waylandtest.Need(t, "foot")
	c := waylandtest.Start(t, 800, 600)
	sock := c.Socket()
	env, dataDir, port := newEnv(t, sock)
	d := startDaemon(t, env, dataDir, port)
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	form := startGTKForm(t, c)

	// A terminal opens over it and takes the focus.
	waylandtest.Client(t, c, "foot", "--title=term")
	find := func(title string) api.Window {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			l, err := d.client.Windows(ctx, sock)
			if err == nil {
				for _, w := range l.Windows {
					if w.Title == title && (title != "term" || w.Focused) {
						return w
					}
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("GET /v1/windows has no %q: %+v, %v", title, l, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	find("term")
	win := find("acu-form")
	if r, err := d.client.WindowOp(ctx, win.ID, api.WindowFocus, api.WindowOp{Display: sock}); err != nil || r.Window == nil || !r.Window.Focused {
		t.Fatalf("focus the form = %+v, %v", r, err)
	}
	x, y := 60, 50
	r, err := d.client.WindowOp(ctx, win.ID, api.WindowMove, api.WindowOp{Display: sock, X: &x, Y: &y})
	if err != nil || r.Window == nil || r.Window.X != x || r.Window.Y != y || !r.Window.Focused {
		t.Fatalf("move the form to %d,%d = %+v, %v", x, y, r.Window, err)
	}
	form.settle(t, ctx, c)
	if _, err := d.client.SetClipboard(ctx, api.Clipboard{Display: sock, Text: "Zürich ✓"}); err != nil {
		t.Fatalf("PUT /v1/clipboard: %v", err)
	}
	if got, err := d.client.GetClipboard(ctx, sock, "", ""); err != nil || got.Text != "Zürich ✓" {
		t.Fatalf("GET /v1/clipboard = %+v, %v", got, err)
	}

	// Screen pixels of the widgets' centres, in the moved window as sway
	// shows it once settled.
	centre := func(name string) *api.Point {
		p := form.centre(name)
		return api.Pt(p[0], p[1])
	}
	// GTK pastes asynchronously (it asks acu's clipboard owner for the
	// text and inserts it when the answer comes), so the request waits for
	// the screen to settle before Submit is clicked in a second one, as an
	// agent would look before it submits.
	resp, err := d.client.Act(ctx, api.ActRequest{Display: sock, Image: "800x600", Actions: []api.Action{
		{Kind: api.ActClick, At: centre("name")},
		{Kind: api.ActType, Text: "Ada Lovelace"},
		{Kind: api.ActClick, At: centre("city")},
		{Kind: api.ActKey, Keys: "ctrl+v"},
	}, Settle: &api.SettleOptions{QuietMs: 300, TimeoutMs: 5000}})
	if err != nil || !resp.OK {
		t.Fatalf("POST /v1/actions = %+v, %v", resp, err)
	}
	submit, err := d.client.Act(ctx, api.ActRequest{Display: sock, Image: "800x600", Actions: []api.Action{{Kind: api.ActClick, At: centre("submit")}}})
	if err != nil || !submit.OK {
		t.Fatalf("POST /v1/actions (submit) = %+v, %v", submit, err)
	}
	resp.Results = append(resp.Results, submit.Results...)
	if res := resp.Results[0]; res.At == nil || res.At[0] != *centre("name").X || res.Window != "acu-form" {
		t.Errorf("the first click = %+v, want it at the name entry in acu-form", res)
	}
	for _, res := range resp.Results { // Wayland's virtual devices carried them, not XTest
		if res.Via != "virtual" {
			t.Errorf("action %d %s: via %q, want virtual", res.Index, res.Kind, res.Via)
		}
	}
	got := form.Next(t, "submission")
	if want := "submitted name=Ada Lovelace city=Zürich ✓"; got != want {
		t.Errorf("the form printed %q, want %q", got, want)
	}
	p, err := d.client.Pointer(ctx, sock)
	if sub := centre("submit"); err != nil || p.X != *sub.X || p.Y != *sub.Y {
		t.Errorf("GET /v1/pointer = %+v, %v; want %d,%d", p, err, *sub.X, *sub.Y)
	}
}
