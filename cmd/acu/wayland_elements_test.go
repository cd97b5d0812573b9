package main

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/wayland/virtual"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// TestElementsOnWaylandThroughDaemon: `acu elements --display SOCKET`
// through the real daemon gives the element map of a native GTK form on a
// headless sway, floated away from the screen's origin, in screen pixels:
// clicks at the entry's and the Submit button's centres (typing between)
// make the form print the text.
func TestElementsOnWaylandThroughDaemon(t *testing.T) {
	c := waylandtest.Start(t, 900, 600)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	const title = "acu-daemon-wl"
	// Floated to 257,141, laid out at the size sway shows.
	app := atspitest.StartWaylandForm(ctx, t, c, atspitest.GTK, title, image.Rect(257, 141, 857, 361))
	win := app.Window

	env, dataDir, port := newEnv(t, ":0")
	env = append(env, "DBUS_SESSION_BUS_ADDRESS="+app.Session.SessionBus)
	startDaemon(t, env, dataDir, port)
	var m api.ElementMap
	var btn, entry api.Element
	eventually(t, 60*time.Second, "the form's Submit button and entry in its window", func() bool {
		out, errOut, code := acu(t, env, "elements", "--display", c.Socket(), "--json")
		if code != 0 {
			t.Fatalf("acu elements: exit %d: %s", code, errOut)
		}
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("acu elements --json printed %q: %v", out, err)
		}
		var okB, okE bool
		for _, e := range m.Elements {
			r := image.Rect(e.Box[0], e.Box[1], e.Box[0]+e.Box[2], e.Box[1]+e.Box[3])
			switch {
			case e.Type == "button" && e.Text == "Submit":
				btn, okB = e, r.In(win.Content)
			case e.Type == "input" && e.Text == "Value":
				entry, okE = e, r.In(win.Content)
			}
		}
		if !okB || !okE {
			t.Logf("not yet (window content %v):\n%s", win.Content, m.Text)
		}
		return okB && okE
	})
	if m.Screen != [2]int{900, 600} {
		t.Errorf("map screen %v, want the output's 900x600", m.Screen)
	}

	d, err := virtual.Open(ctx, c.Socket(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	click := func(e api.Element) {
		if err := d.Move(ctx, e.Center[0], e.Center[1]); err != nil { // the pointer enters first, as a person's does
			t.Fatalf("move to %s: %v", e.ID, err)
		}
		if err := d.Click(ctx, e.Center[0], e.Center[1], 1, 1); err != nil {
			t.Fatalf("click %s: %v", e.ID, err)
		}
	}
	click(btn) // an empty line; the button takes the focus
	eventually(t, 30*time.Second, "the click on Submit at "+fmt.Sprint(btn.Center), func() bool { return app.Stdout() == "\n" })
	click(entry) // the focus back to the entry, or the typing is lost
	if err := d.Type(ctx, "through-acu"); err != nil {
		t.Fatal(err)
	}
	click(btn)
	eventually(t, 30*time.Second, "the form to print what was typed", func() bool { return app.Stdout() == "\nthrough-acu\n" })
}
