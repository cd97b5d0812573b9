package actions_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/actions"
	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/ocr"
	"github.com/acu-dev/acu/internal/wayland/frames"
	"github.com/acu-dev/acu/internal/wayland/virtual"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// TestElementsOnWayland asks the action service (GET /v1/elements) for the
// element map of a headless sway showing a native GTK form floated away
// from the screen's origin, with a labelled screenshot and only the
// form's window: the elements are in screen pixels (the form prints what
// was typed after clicks at the Submit button's and the entry's centres)
// and the screenshot is the Wayland display's.
func TestElementsOnWayland(t *testing.T) {
	c := waylandtest.Start(t, 960, 600)
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	const title = "acu-elements-wl"
	// Floated, moved, and resized, with the form laid out at its new size.
	app := atspitest.StartWaylandForm(ctx, t, c, atspitest.GTK, title, image.Rect(301, 233, 901, 453))
	win := app.Window

	hub, err := capture.NewHub(capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	wl := frames.New(frames.Options{})
	defer wl.Close()
	eng, err := ocr.New(ocr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := actions.New(actions.Options{Hub: hub, Screens: wl, SessionBus: app.Session.SessionBus, OCR: eng})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()

	if _, err := svc.Elements(ctx, api.ElementsQuery{Display: "wayland-1"}); err == nil || !strings.Contains(err.Error(), "absolute path") {
		t.Errorf("a relative Wayland name: %v, want an error asking for the socket's absolute path", err)
	}

	var m api.ElementMap
	var btn, entry api.Element
	mctx, mcancel := context.WithTimeout(ctx, 60*time.Second)
	defer mcancel()
	for {
		m, err = svc.Elements(mctx, api.ElementsQuery{Display: c.Socket(), Window: title, Labels: true, Shot: &api.ShotOptions{Format: "png"}})
		if err != nil {
			t.Fatalf("Elements: %v; last map:\n%s", err, m.Text)
		}
		var okB, okE bool
		for _, e := range m.Elements {
			switch {
			case e.Type == "button" && e.Text == "Submit":
				btn, okB = e, true
			case e.Type == "input" && e.Text == "Value":
				entry, okE = e, true
			}
		}
		if okB && okE {
			break
		}
		if mctx.Err() != nil {
			t.Fatalf("no Submit button and Value entry in the form's window %v:\n%s", win.Rect, m.Text)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("sway content %v; map:\n%s", win.Content, m.Text)
	if m.Screen != [2]int{960, 600} {
		t.Errorf("map screen %v, want the output's 960x600", m.Screen)
	}
	for _, e := range m.Elements {
		r := image.Rect(e.Box[0], e.Box[1], e.Box[0]+e.Box[2], e.Box[1]+e.Box[3])
		if !image.Pt(e.Center[0], e.Center[1]).In(win.Rect) {
			t.Errorf("%s at %v: outside the window asked for (%v)", e.ID, r, win.Rect)
		}
	}
	shot := m.Screenshot
	if shot == nil {
		t.Fatal("no labelled screenshot")
	}
	img, err := png.Decode(bytes.NewReader(shot.Data))
	if err != nil {
		t.Fatalf("decode the labelled screenshot: %v", err)
	}
	if shot.Screen != [2]int{960, 600} || img.Bounds().Size() != win.Rect.Size() || shot.Region != [4]int{win.Rect.Min.X, win.Rect.Min.Y, win.Rect.Dx(), win.Rect.Dy()} {
		t.Errorf("screenshot %v of region %v on screen %v, want the window %v", img.Bounds(), shot.Region, shot.Screen, win.Rect)
	}

	// GET /v1/screenshot of the display, labelled with the same map.
	full, err := svc.Shot(ctx, c.Socket(), api.ShotOptions{Format: "png", Labels: true})
	if err != nil {
		t.Fatalf("Shot: %v", err)
	}
	if img, err := png.Decode(bytes.NewReader(full.Data)); err != nil || img.Bounds().Size() != image.Pt(960, 600) || full.Screen != [2]int{960, 600} {
		t.Errorf("screenshot of the display: %v (%v), screen %v; want a 960x600 PNG", img, err, full.Screen)
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
	wait := func(want string, e api.Element) {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		for app.Stdout() != want {
			if wctx.Err() != nil || !strings.HasPrefix(want, app.Stdout()) {
				t.Fatalf("the form printed %q, want %q: the click at %v missed %s %v", app.Stdout(), want, e.Center, e.ID, e.Box)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	click(btn) // an empty line; the button takes the focus
	wait("\n", btn)
	click(entry) // the focus back to the entry, or the typing is lost
	if err := d.Type(ctx, "by-element"); err != nil {
		t.Fatal(err)
	}
	click(btn)
	wait("\nby-element\n", entry)

	// POST /v1/actions by element id, as an agent acts on the map it was
	// given: the entry clicked with the pointer at its place on screen (its
	// box in screen pixels), the text selected and typed over, and Submit
	// pressed by its accessibility action, all through the gate's Wayland
	// hands. The ids are the map's: one extractor serves both.
	resp, err := svc.Act(ctx, actions.Caller{}, api.ActRequest{Display: c.Socket(), Actions: []api.Action{
		{Kind: api.ActClick, At: &api.Point{Element: entry.ID}, Pointer: true},
		{Kind: api.ActKey, Keys: "ctrl+a"},
		{Kind: api.ActType, Text: "by-id"},
		{Kind: api.ActClick, At: &api.Point{Element: btn.ID}},
	}})
	if err != nil || !resp.OK {
		t.Fatalf("act by element id = %+v, %v", resp, err)
	}
	if got := resp.Results[0].Via; got != "pointer" {
		t.Errorf("the click on %s went by %q, want the pointer", entry.ID, got)
	}
	if got := resp.Results[2].Via; got != "virtual" {
		t.Errorf("the typing went by %q, want the virtual keyboard", got)
	}
	wait("\nby-element\nby-id\n", btn)
}
