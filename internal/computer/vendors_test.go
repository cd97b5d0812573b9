package computer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/actions"
	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/computer"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/smartwait"
	"github.com/acu-dev/acu/internal/store"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// desktop runs the dialects' plans on the real action service, as the
// daemon's POST /v1/computer/{vendor} does.
type desktop struct{ svc *actions.Service }

func (d desktop) Act(ctx context.Context, req api.ActRequest) (api.ActResponse, error) {
	return d.svc.Act(ctx, actions.Caller{Client: "vendor-test"}, req)
}
func (d desktop) Shot(ctx context.Context, dpy string, o api.ShotOptions) (*api.ActShot, error) {
	return d.svc.Shot(ctx, dpy, o)
}
func (d desktop) Pointer(ctx context.Context, dpy string) (int, int, error) {
	p, err := d.svc.Pointer(ctx, dpy)
	return p.X, p.Y, err
}
func (d desktop) ScreenSize(ctx context.Context, dpy string) (int, int, error) {
	return d.svc.ScreenSize(ctx, dpy)
}
func (d desktop) Settle(ctx context.Context, dpy string, quiet, timeout time.Duration) (api.SettleResult, error) {
	return d.svc.Settle(ctx, dpy, quiet, timeout)
}

// vendorCase is one vendor action item and the X input the window under
// the pointer must receive for it, as the vendor's own executor sends it.
type vendorCase struct {
	name  string
	items []string // the items, run in order
	// want are the button and key events in order: "press N", "release N"
	// (with " [shift]" or " [ctrl]" when the modifier is down), "down K",
	// "up K" (K a keysym name or the character).
	want []string
	// at is where the first press lands and, when set, end where the
	// last release (or, without a press, the last motion) lands, in
	// screen pixels.
	at, end *image.Point
	via     *image.Point  // a point the pointer passes with the button down
	typed   string        // the text the window reads, when set
	held    time.Duration // the least time between the first down and the last up
}

func pt(x, y int) *image.Point { return &image.Point{X: x, Y: y} }

// repeat is n clicks of button b.
func repeat(n, b int, mods string) []string {
	var out []string
	for range n {
		out = append(out, fmt.Sprintf("press %d%s", b, mods), fmt.Sprintf("release %d%s", b, mods))
	}
	return out
}

func with(mod string, inner ...string) []string {
	return append(append([]string{"down " + mod}, inner...), "up "+mod)
}

// TestVendorActionsExact runs every action of every dialect on a real X
// display and checks the events the window receives against each vendor's
// published semantics: Anthropic's computer tool as its reference
// implementation runs it with xdotool (buttons 1/2/3, wheel 4/5/6/7 per
// scroll_direction, modifiers of text held around a click or scroll,
// hold_key held for its duration), OpenAI's computer_call actions as its
// sample executors run them (button back and forward: X buttons 8 and 9;
// scroll_y > 0 down, scroll_x > 0 right), and UI-TARS actions as its
// desktop operator runs them.
func TestVendorActionsExact(t *testing.T) {
	d, w, dpy := vendorDesktop(t)
	anthropic := func(in string) string {
		return `{"type":"tool_use","id":"toolu_1","name":"computer","input":` + in + `}`
	}
	openai := func(action string) string {
		return `{"type":"computer_call","call_id":"call_1","action":` + action + `,"pending_safety_checks":[]}`
	}
	uitars := func(action string) string {
		b, _ := json.Marshal("Thought: go.\nAction: " + action)
		return string(b)
	}
	ctrl, shift := "Control_L", "Shift_L"
	vendors := []struct {
		vendor string
		query  api.ComputerQuery
		item   func(string) string
		cases  []vendorCase
	}{
		{api.VendorAnthropic, api.ComputerQuery{Version: "computer_20251124"}, anthropic, []vendorCase{
			{name: "left_click", items: []string{`{"action":"left_click","coordinate":[100,200]}`}, want: repeat(1, 1, ""), at: pt(100, 200)},
			{name: "right_click", items: []string{`{"action":"right_click","coordinate":[110,210]}`}, want: repeat(1, 3, ""), at: pt(110, 210)},
			{name: "middle_click", items: []string{`{"action":"middle_click","coordinate":[120,220]}`}, want: repeat(1, 2, ""), at: pt(120, 220)},
			{name: "double_click", items: []string{`{"action":"double_click","coordinate":[130,230]}`}, want: repeat(2, 1, ""), at: pt(130, 230)},
			{name: "triple_click", items: []string{`{"action":"triple_click","coordinate":[140,240]}`}, want: repeat(3, 1, ""), at: pt(140, 240)},
			{name: "shift+left_click", items: []string{`{"action":"left_click","coordinate":[150,250],"text":"shift"}`},
				want: with(shift, repeat(1, 1, " [shift]")...), at: pt(150, 250)},
			{name: "ctrl+shift+left_click", items: []string{`{"action":"left_click","coordinate":[155,255],"text":"ctrl+shift"}`},
				want: with(ctrl, with(shift, repeat(1, 1, " [shift] [ctrl]")...)...), at: pt(155, 255)},
			{name: "left_mouse_down, mouse_move, left_mouse_up",
				items: []string{`{"action":"mouse_move","coordinate":[200,300]}`, `{"action":"left_mouse_down"}`,
					`{"action":"mouse_move","coordinate":[260,340]}`, `{"action":"left_mouse_up"}`},
				want: []string{"press 1", "release 1"}, at: pt(200, 300), end: pt(260, 340)},
			{name: "left_click_drag", items: []string{`{"action":"left_click_drag","start_coordinate":[100,100],"coordinate":[400,300]}`},
				want: []string{"press 1", "release 1"}, at: pt(100, 100), end: pt(400, 300)},
			{name: "scroll down", items: []string{`{"action":"scroll","coordinate":[640,400],"scroll_direction":"down","scroll_amount":3}`},
				want: repeat(3, 5, ""), at: pt(640, 400)},
			{name: "scroll up", items: []string{`{"action":"scroll","coordinate":[640,400],"scroll_direction":"up","scroll_amount":2}`},
				want: repeat(2, 4, ""), at: pt(640, 400)},
			{name: "scroll left", items: []string{`{"action":"scroll","coordinate":[640,400],"scroll_direction":"left","scroll_amount":1}`},
				want: repeat(1, 6, ""), at: pt(640, 400)},
			{name: "scroll right", items: []string{`{"action":"scroll","coordinate":[640,400],"scroll_direction":"right","scroll_amount":1}`},
				want: repeat(1, 7, ""), at: pt(640, 400)},
			{name: "ctrl+scroll", items: []string{`{"action":"scroll","coordinate":[640,400],"scroll_direction":"up","scroll_amount":1,"text":"ctrl"}`},
				want: with(ctrl, repeat(1, 4, " [ctrl]")...), at: pt(640, 400)},
			{name: "key combo", items: []string{`{"action":"key","text":"ctrl+s"}`}, want: with(ctrl, "down s [ctrl]", "up s [ctrl]")},
			{name: "key sequence", items: []string{`{"action":"key","text":"Return Return"}`}, want: []string{"down Return", "up Return", "down Return", "up Return"}},
			{name: "hold_key", items: []string{`{"action":"hold_key","text":"shift","duration":0.3}`}, want: []string{"down " + shift, "up " + shift},
				held: 300 * time.Millisecond},
			{name: "type", items: []string{`{"action":"type","text":"Hi there!"}`}, typed: "Hi there!"},
			{name: "mouse_move", items: []string{`{"action":"mouse_move","coordinate":[500,600]}`}, end: pt(500, 600)},
			{name: "no input", items: []string{`{"action":"screenshot"}`, `{"action":"cursor_position"}`, `{"action":"wait","duration":0.1}`,
				`{"action":"zoom","region":[0,0,640,400]}`}},
		}},
		{api.VendorOpenAI, api.ComputerQuery{}, openai, []vendorCase{
			{name: "click left", items: []string{`{"type":"click","button":"left","x":100,"y":200}`}, want: repeat(1, 1, ""), at: pt(100, 200)},
			{name: "click right", items: []string{`{"type":"click","button":"right","x":110,"y":210}`}, want: repeat(1, 3, ""), at: pt(110, 210)},
			{name: "click wheel", items: []string{`{"type":"click","button":"wheel","x":120,"y":220}`}, want: repeat(1, 2, ""), at: pt(120, 220)},
			{name: "click back", items: []string{`{"type":"click","button":"back","x":130,"y":230}`}, want: repeat(1, 8, ""), at: pt(130, 230)},
			{name: "click forward", items: []string{`{"type":"click","button":"forward","x":140,"y":240}`}, want: repeat(1, 9, ""), at: pt(140, 240)},
			{name: "shift click", items: []string{`{"type":"click","button":"left","x":150,"y":250,"keys":["SHIFT"]}`},
				want: with(shift, repeat(1, 1, " [shift]")...), at: pt(150, 250)},
			{name: "double_click", items: []string{`{"type":"double_click","x":160,"y":260}`}, want: repeat(2, 1, ""), at: pt(160, 260)},
			{name: "drag path", items: []string{`{"type":"drag","path":[{"x":100,"y":100},{"x":250,"y":150},{"x":400,"y":300}]}`},
				want: []string{"press 1", "release 1"}, at: pt(100, 100), via: pt(250, 150), end: pt(400, 300)},
			{name: "keypress combo", items: []string{`{"type":"keypress","keys":["CTRL","A"]}`}, want: with(ctrl, "down a [ctrl]", "up a [ctrl]")},
			{name: "keypress enter", items: []string{`{"type":"keypress","keys":["ENTER"]}`}, want: []string{"down Return", "up Return"}},
			// Several keys that are not modifiers are held down together,
			// pressed in order and released in reverse, as OpenAI's sample
			// executor does (keyboard.down for each, then up in reverse).
			{name: "keypress keys together", items: []string{`{"type":"keypress","keys":["CTRL","A","B"]}`},
				want: with(ctrl, "down a [ctrl]", "down b [ctrl]", "up b [ctrl]", "up a [ctrl]")},
			{name: "scroll down", items: []string{`{"type":"scroll","x":640,"y":400,"scroll_x":0,"scroll_y":300}`}, want: repeat(3, 5, ""), at: pt(640, 400)},
			{name: "scroll up", items: []string{`{"type":"scroll","x":640,"y":400,"scroll_x":0,"scroll_y":-200}`}, want: repeat(2, 4, ""), at: pt(640, 400)},
			{name: "scroll right", items: []string{`{"type":"scroll","x":640,"y":400,"scroll_x":100,"scroll_y":0}`}, want: repeat(1, 7, ""), at: pt(640, 400)},
			{name: "scroll left", items: []string{`{"type":"scroll","x":640,"y":400,"scroll_x":-100,"scroll_y":0}`}, want: repeat(1, 6, ""), at: pt(640, 400)},
			{name: "type", items: []string{`{"type":"type","text":"Hello, acu"}`}, typed: "Hello, acu"},
			{name: "move", items: []string{`{"type":"move","x":700,"y":500}`}, end: pt(700, 500)},
			{name: "no input", items: []string{`{"type":"screenshot"}`, `{"type":"wait","ms":50}`}},
		}},
		{api.VendorUITARS, api.ComputerQuery{Mode: "absolute"}, uitars, []vendorCase{
			{name: "click", items: []string{`click(start_box='(100,200)')`}, want: repeat(1, 1, ""), at: pt(100, 200)},
			{name: "left_double", items: []string{`left_double(start_box='(110,210)')`}, want: repeat(2, 1, ""), at: pt(110, 210)},
			{name: "right_single", items: []string{`right_single(start_box='(120,220)')`}, want: repeat(1, 3, ""), at: pt(120, 220)},
			{name: "drag", items: []string{`drag(start_box='(100,100)', end_box='(300,300)')`}, want: []string{"press 1", "release 1"},
				at: pt(100, 100), end: pt(300, 300)},
			{name: "hotkey", items: []string{`hotkey(key='ctrl c')`}, want: with(ctrl, "down c [ctrl]", "up c [ctrl]")},
			{name: "hotkey enter", items: []string{`hotkey(key='enter')`}, want: []string{"down Return", "up Return"}},
			{name: "type and submit", items: []string{`type(content='hi\n')`}, typed: "hi\r"},
			{name: "scroll down", items: []string{`scroll(start_box='(640,400)', direction='down')`}, want: repeat(5, 5, ""), at: pt(640, 400)},
			{name: "scroll up", items: []string{`scroll(start_box='(640,400)', direction='up')`}, want: repeat(5, 4, ""), at: pt(640, 400)},
			{name: "hover", items: []string{`hover(start_box='(320,240)')`}, end: pt(320, 240)},
		}},
	}
	for _, v := range vendors {
		for _, tc := range v.cases {
			t.Run(v.vendor+"/"+tc.name, func(t *testing.T) {
				q := v.query
				q.Display, q.Limit = dpy, "1280x800"
				w.ResetEvents()
				for _, it := range tc.items {
					res, err := computer.Execute(t.Context(), d, v.vendor, q, []byte(v.item(it)))
					if err != nil || res.Status == api.ComputerError {
						t.Fatalf("Execute(%s) = %+v, %v", it, res.Error, err)
					}
				}
				checkEvents(t, w, tc)
			})
		}
	}
}

// vendorDesktop is a 1280x800 display (the offered picture is the screen,
// pixel for pixel) with a window over all of it that records its input,
// and the action service on it.
func vendorDesktop(t *testing.T) (desktop, *testx.Window, string) {
	d, w, dpy, _ := vendorDesktopWith(t, actions.Policy{})
	return d, w, dpy
}

// vendorDesktopWith is vendorDesktop with the action service's policy p,
// and its run registry.
func vendorDesktopWith(t *testing.T, p actions.Policy) (desktop, *testx.Window, string, *runs.Registry) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 1280, Height: 800})
	hub, err := capture.NewHub(capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hub.Close() })
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "acu.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reg := runs.New(db, runs.Options{})
	eng := smartwait.New(smartwait.Options{Runs: reg, Capture: hub, Store: db, DefaultDisplay: dpy})
	svc, err := actions.New(actions.Options{Hub: hub, Runs: reg, Settle: eng, DefaultDisplay: dpy, Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	w := testx.NewWindow(t, dpy, testx.Spec{Title: "Acu Vendor Actions", W: 1280, H: 800})
	w.Focus()
	return desktop{svc}, w, dpy, reg
}

// keyName is the name the cases use for a keysym.
func keyName(e testx.Event) string {
	switch e.Keysym {
	case 0xffe3:
		return "Control_L"
	case 0xffe1:
		return "Shift_L"
	case 0xffe9:
		return "Alt_L"
	case 0xff0d:
		return "Return"
	}
	if e.Rune != 0 {
		return string(e.Rune)
	}
	return fmt.Sprintf("0x%x", e.Keysym)
}

func mods(state uint16) string {
	s := ""
	if state&1 != 0 {
		s += " [shift]"
	}
	if state&4 != 0 {
		s += " [ctrl]"
	}
	return s
}

// keyMods are the modifiers held at a key's event; a modifier key's own
// events show none (the state is the one before the event).
func keyMods(e testx.Event) string {
	if e.Keysym >= 0xffe1 && e.Keysym <= 0xffee {
		return ""
	}
	return mods(e.State)
}

// summary is the button and key events of evs, as vendorCase.want.
func summary(evs []testx.Event) []string {
	var out []string
	for _, e := range evs {
		switch e.Kind {
		case testx.ButtonPress:
			out = append(out, fmt.Sprintf("press %d%s", e.Button, mods(e.State)))
		case testx.ButtonRelease:
			out = append(out, fmt.Sprintf("release %d%s", e.Button, mods(e.State)))
		case testx.KeyPress:
			out = append(out, "down "+keyName(e)+keyMods(e))
		case testx.KeyRelease:
			out = append(out, "up "+keyName(e)+keyMods(e))
		}
	}
	return out
}

// checkEvents waits until the window has the case's input, then compares.
func checkEvents(t *testing.T, w *testx.Window, tc vendorCase) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	evs, err := w.WaitFor(ctx, func(evs []testx.Event) bool {
		if tc.typed != "" {
			return strings.HasSuffix(w.Typed(), tc.typed[len(tc.typed)-1:]) && len(w.Typed()) >= len([]rune(tc.typed))
		}
		if len(tc.want) > 0 {
			return len(summary(evs)) >= len(tc.want)
		}
		if tc.end != nil {
			last := lastMotion(evs)
			return last != nil && *last == *tc.end
		}
		return true
	})
	if tc.want == nil && tc.typed == "" && tc.end == nil {
		time.Sleep(200 * time.Millisecond) // any input would have arrived by now
		evs = w.Events()
	}
	if err != nil {
		t.Fatalf("waiting for the input: %v; got %v", err, summary(evs))
	}
	if tc.typed != "" {
		if got := w.Typed(); got != tc.typed {
			t.Errorf("typed %q, want %q", got, tc.typed)
		}
		return
	}
	if got := summary(evs); !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
		t.Errorf("events %q, want %q", got, tc.want)
	}
	checkPlaces(t, evs, tc)
}

func lastMotion(evs []testx.Event) *image.Point {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Kind == testx.Motion {
			return &image.Point{X: evs[i].RootX, Y: evs[i].RootY}
		}
	}
	return nil
}

// checkPlaces checks where the first press and the last release land, and
// how long a held key was down.
func checkPlaces(t *testing.T, evs []testx.Event, tc vendorCase) {
	t.Helper()
	var first, last *testx.Event
	var down, up *testx.Event
	for i := range evs {
		e := &evs[i]
		switch e.Kind {
		case testx.ButtonPress:
			if first == nil {
				first = e
			}
		case testx.ButtonRelease:
			last = e
		case testx.KeyPress:
			if down == nil {
				down = e
			}
		case testx.KeyRelease:
			up = e
		}
	}
	if tc.at != nil && (first == nil || image.Pt(first.RootX, first.RootY) != *tc.at) {
		t.Errorf("first press %+v, want at %v", first, *tc.at)
	}
	if tc.end != nil {
		at := lastMotion(evs)
		if last != nil {
			at = &image.Point{X: last.RootX, Y: last.RootY}
		}
		if at == nil || *at != *tc.end {
			t.Errorf("ended at %v, want %v", at, *tc.end)
		}
	}
	if tc.via != nil && !slices.ContainsFunc(evs, func(e testx.Event) bool {
		return e.Kind == testx.Motion && e.State&0x100 != 0 && image.Pt(e.RootX, e.RootY) == *tc.via
	}) {
		t.Errorf("the drag did not pass %v with the button down", *tc.via)
	}
	if tc.held > 0 && (down == nil || up == nil || time.Duration(up.Time-down.Time)*time.Millisecond < tc.held) {
		t.Errorf("key held from %+v to %+v, want at least %v", down, up, tc.held)
	}
}
