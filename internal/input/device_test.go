package input

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jezek/xgb/xproto"

	xdisplay "github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/leakcheck"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// One Xvfb for the package's tests; every test opens its own windows.
var dpy string

const screenW, screenH = 1280, 720

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	// -noreset: Xvfb otherwise resets when its last client leaves (between
	// tests), and a client connecting during the reset is refused.
	srv, err := xvfb.Start(ctx, xvfb.Options{Width: screenW, Height: screenH, Args: []string{"-noreset"}})
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "input tests need Xvfb: %v\n", err)
		os.Exit(1)
	}
	dpy = srv.Name()
	// The tests fail when a goroutine they started (a UserClock's reader)
	// or an X connection's is still running after them.
	leakcheck.MainThen(m, func() { _ = srv.Stop() }, "acu-dev/acu/", "github.com/jezek/xgb")
}

// newTestDevice opens a connection to the test display and a Device on it.
// Tests run one at a time on the shared display (they move the one pointer).
func newTestDevice(t testing.TB, area Area, opts Options) *Device {
	t.Helper()
	c, err := xdisplay.Open(t.Context(), dpy, xdisplay.Options{})
	if err != nil {
		t.Fatalf("open display %s: %v", dpy, err)
	}
	t.Cleanup(c.Close)
	d, err := New(c, area, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Device.Close: %v", err)
		}
	})
	return d
}

// fullWindow opens a recording window covering the whole screen.
func fullWindow(t testing.TB) *testx.Window {
	t.Helper()
	w := testx.NewWindow(t, dpy, testx.Spec{Title: t.Name(), W: screenW, H: screenH})
	w.Focus()
	return w
}

var fullArea = Area{0, 0, screenW, screenH}

func waitKind(t *testing.T, w *testx.Window, kind testx.EventKind, n int) []testx.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	evs, err := w.WaitFor(ctx, func(evs []testx.Event) bool { return count(evs, kind) >= n })
	if err != nil {
		t.Fatalf("waiting for %d %v events: %v; got %v", n, kind, err, evs)
	}
	return evs
}

func count(evs []testx.Event, kind testx.EventKind) int {
	n := 0
	for _, e := range evs {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// buttons returns the press/release events as "press 1 @640,360".
func buttons(evs []testx.Event) []string {
	var out []string
	for _, e := range evs {
		switch e.Kind {
		case testx.ButtonPress, testx.ButtonRelease:
			out = append(out, fmt.Sprintf("%v %d @%d,%d", e.Kind, e.Button, e.RootX, e.RootY))
		}
	}
	return out
}

func TestClicksLandOnPixels(t *testing.T) {
	tests := []struct {
		name string
		do   func(ctx context.Context, d *Device) error
		want []string
	}{
		{"click", func(ctx context.Context, d *Device) error { return d.Click(ctx, 250, 750) },
			[]string{"button_press 1 @320,539", "button_release 1 @320,539"}},
		{"right_click", func(ctx context.Context, d *Device) error { return d.RightClick(ctx, 0, 0) },
			[]string{"button_press 3 @0,0", "button_release 3 @0,0"}},
		{"middle_click", func(ctx context.Context, d *Device) error { return d.MiddleClick(ctx, 1000, 1000) },
			[]string{"button_press 2 @1279,719", "button_release 2 @1279,719"}},
		{"double_click", func(ctx context.Context, d *Device) error { return d.DoubleClick(ctx, 500, 500) },
			[]string{"button_press 1 @640,360", "button_release 1 @640,360", "button_press 1 @640,360", "button_release 1 @640,360"}},
		{"scroll down", func(ctx context.Context, d *Device) error { return d.Scroll(ctx, 100, 900, 3) },
			[]string{"button_press 5 @128,647", "button_release 5 @128,647", "button_press 5 @128,647", "button_release 5 @128,647", "button_press 5 @128,647", "button_release 5 @128,647"}},
		{"scroll up", func(ctx context.Context, d *Device) error { return d.Scroll(ctx, 100, 900, -1) },
			[]string{"button_press 4 @128,647", "button_release 4 @128,647"}},
		{"scroll right then down", func(ctx context.Context, d *Device) error { return d.ScrollXY(ctx, 10, 10, 1, 1) },
			[]string{"button_press 7 @13,7", "button_release 7 @13,7", "button_press 5 @13,7", "button_release 5 @13,7"}},
		{"out of range clamps", func(ctx context.Context, d *Device) error { return d.Click(ctx, -500, 5000) },
			[]string{"button_press 1 @0,719", "button_release 1 @0,719"}},
	}
	d := newTestDevice(t, fullArea, Options{})
	w := fullWindow(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w.ResetEvents()
			if err := tt.do(t.Context(), d); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			evs := waitKind(t, w, testx.ButtonRelease, len(tt.want)/2)
			if diff := cmp.Diff(tt.want, buttons(evs)); diff != "" {
				t.Errorf("%s: button events mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// TestCropSandbox clicks far outside a quadrant crop and checks every click
// lands inside the quadrant.
func TestCropSandbox(t *testing.T) {
	area := AreaFromCrop(screenW, screenH, [4]int{500, 0, 1000, 500}) // top-right quadrant
	d := newTestDevice(t, area, Options{})
	w := fullWindow(t)
	points := [][2]int{{1000, 1000}, {0, 0}, {-1000, 3000}, {500, 500}}
	want := []string{"1279,359", "640,0", "640,359", "960,180"}
	for i, p := range points {
		if err := d.Click(t.Context(), p[0], p[1]); err != nil {
			t.Fatalf("Click(%d, %d): %v", p[0], p[1], err)
		}
		evs := waitKind(t, w, testx.ButtonPress, i+1)
		var got []string
		for _, e := range evs {
			if e.Kind != testx.ButtonPress {
				continue
			}
			if e.RootX < 640 || e.RootX > 1279 || e.RootY < 0 || e.RootY > 359 {
				t.Errorf("click at %v landed at %d,%d, outside the crop %v", p, e.RootX, e.RootY, area)
			}
			got = append(got, fmt.Sprintf("%d,%d", e.RootX, e.RootY))
		}
		if diff := cmp.Diff(want[:i+1], got); diff != "" {
			t.Errorf("click positions mismatch (-want +got):\n%s", diff)
		}
	}
}

func TestDragPath(t *testing.T) {
	d := newTestDevice(t, fullArea, Options{DragSteps: 4, DragStepDelay: -1})
	w := fullWindow(t)
	// From (100,100) to (900,500) normalized: pixels (128,72) -> (1151,360).
	if err := d.Drag(t.Context(), 100, 100, 900, 500); err != nil {
		t.Fatalf("Drag: %v", err)
	}
	evs := waitKind(t, w, testx.ButtonRelease, 1)
	var got []string
	pressed := false
	for _, e := range evs {
		switch e.Kind {
		case testx.ButtonPress:
			pressed = true
			got = append(got, fmt.Sprintf("press %d @%d,%d", e.Button, e.RootX, e.RootY))
		case testx.ButtonRelease:
			got = append(got, fmt.Sprintf("release %d @%d,%d", e.Button, e.RootX, e.RootY))
		case testx.Motion:
			if pressed {
				if e.State&xproto.ButtonMask1 == 0 {
					t.Errorf("motion at %d,%d during the drag without button 1 held (state %#x)", e.RootX, e.RootY, e.State)
				}
				got = append(got, fmt.Sprintf("move @%d,%d", e.RootX, e.RootY))
			}
		}
	}
	want := []string{
		"press 1 @128,72",
		"move @383,144", "move @639,216", "move @895,288", "move @1151,360",
		"release 1 @1151,360",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("drag events mismatch (-want +got):\n%s", diff)
	}
}

func TestTypeText(t *testing.T) {
	d := newTestDevice(t, fullArea, Options{})
	w := fullWindow(t)
	tests := []struct{ text, want string }{
		{"Hello, World! @#", "Hello, World! @#"},
		{"a\tb\nc", "a\tb\rc"},
		{"~`!$%^&*()_+{}|:\"<>?-=[]\\;',./", "~`!$%^&*()_+{}|:\"<>?-=[]\\;',./"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			w.ResetEvents()
			if err := d.Type(t.Context(), tt.text); err != nil {
				t.Fatalf("Type(%q): %v", tt.text, err)
			}
			waitTyped(t, w, tt.want)
		})
	}
}

func waitTyped(t *testing.T, w *testx.Window, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	n := len([]rune(want))
	evs, err := w.WaitFor(ctx, func(evs []testx.Event) bool {
		k := 0
		for _, e := range evs {
			if e.Kind == testx.KeyPress && e.Rune != 0 {
				k++
			}
		}
		return k >= n && count(evs, testx.KeyPress) == count(evs, testx.KeyRelease)
	})
	if err != nil {
		t.Fatalf("waiting for %d typed characters: %v; typed %q", n, err, w.Typed())
	}
	if got := w.Typed(); got != want {
		t.Errorf("typed %q, window received %q", want, got)
	}
	if p, r := count(evs, testx.KeyPress), count(evs, testx.KeyRelease); p != r {
		t.Errorf("%d key presses but %d releases: a key was left down", p, r)
	}
}

// TestTypeNonASCII types characters a US keymap lacks (through a remapped
// spare keycode) and checks the keymap is restored once they are unused.
func TestTypeNonASCII(t *testing.T) {
	// A generous hold: the recording client reloads the keymap when it
	// reads MappingNotify, which on a busy machine may take a while.
	d := newTestDevice(t, fullArea, Options{RemapHold: time.Second, RemapIdle: 100 * time.Millisecond})
	w := fullWindow(t)
	spare := append([]xproto.Keycode(nil), d.km.spare...)
	if len(spare) == 0 {
		t.Fatal("the test keymap has no spare keycode")
	}
	text := "é€ж😀 café"
	if err := d.Type(t.Context(), text); err != nil {
		t.Fatalf("Type(%q): %v", text, err)
	}
	waitTyped(t, w, text)
	waitRestored(t, d, spare)
}

// waitRestored waits until the server's keymap has every spare keycode
// back (the idle restore).
func waitRestored(t *testing.T, d *Device, spare []xproto.Keycode) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		km, err := loadKeymap(d.x)
		if err != nil {
			t.Fatal(err)
		}
		diff := cmp.Diff(spare, km.spare)
		if diff == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("spare keycodes not restored (-before +after):\n%s", diff)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRemapsReusedAcrossCalls: a burst of typing maps a missing character
// once: the next call finds it on the same keycode, with no new mapping.
func TestRemapsReusedAcrossCalls(t *testing.T) {
	d := newTestDevice(t, fullArea, Options{RemapIdle: time.Hour})
	w := fullWindow(t)
	if err := d.Type(t.Context(), "×"); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	code, ok := d.remapped[0xd7]
	d.mu.Unlock()
	if !ok {
		t.Fatalf("× is not remapped after Type: %v", d.remapped)
	}
	for range 5 {
		if err := d.Type(t.Context(), "a×"); err != nil {
			t.Fatal(err)
		}
	}
	waitTyped(t, w, "×a×a×a×a×a×")
	d.mu.Lock()
	again, n := d.remapped[0xd7], len(d.remapped)
	d.mu.Unlock()
	if again != code || n != 1 {
		t.Errorf("× on keycode %d after the burst (%d remapped), want %d (1)", again, n, code)
	}
}

func TestKeyCombos(t *testing.T) {
	const (
		shift = xproto.ModMaskShift
		ctrl  = xproto.ModMaskControl
		alt   = xproto.ModMask1
		super = xproto.ModMask4
	)
	tests := []struct {
		keys   string
		keysym uint32 // keysym the client sees for the key
		state  uint16 // modifiers held when it is pressed
	}{
		{"ctrl+l", 'l', ctrl},
		{"Ctrl+L", 'l', ctrl},
		{"shift+Tab", 0xfe20, shift}, // ISO_Left_Tab: the Tab key's shifted level
		{"Return", ksReturn, 0},
		{"alt+F4", 0xffc1, alt},
		{"ctrl+shift+t", 'T', ctrl | shift},
		{"super+e", 'e', super},
		{"CONTROL+alt+Delete", 0xffff, ctrl | alt},
		{"A", 'A', shift},
		{"ctrl+plus", '+', ctrl | shift},
		{"ctrl+é", 0xe9, ctrl},
		{"ctrl+a BackSpace", 0, 0}, // two chords, checked below
	}
	d := newTestDevice(t, fullArea, Options{RemapHold: time.Second})
	w := fullWindow(t)
	for _, tt := range tests {
		t.Run(tt.keys, func(t *testing.T) {
			w.ResetEvents()
			if err := d.Key(t.Context(), tt.keys); err != nil {
				t.Fatalf("Key(%q): %v", tt.keys, err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			chords := len(strings.Fields(tt.keys))
			evs, err := w.WaitFor(ctx, func(evs []testx.Event) bool {
				n := 0
				for _, e := range evs {
					if e.Kind == testx.KeyPress && !isModifierKeysym(e.Keysym) {
						n++
					}
				}
				return n >= chords && count(evs, testx.KeyRelease) == count(evs, testx.KeyPress)
			})
			if err != nil {
				t.Fatalf("waiting for key events: %v; got %v", err, evs)
			}
			var got []string
			for _, e := range evs {
				if e.Kind != testx.KeyPress || isModifierKeysym(e.Keysym) {
					continue
				}
				got = append(got, fmt.Sprintf("0x%x state %#x", e.Keysym, e.State&(shift|ctrl|alt|super)))
			}
			want := []string{fmt.Sprintf("0x%x state %#x", tt.keysym, tt.state)}
			if tt.keysym == 0 {
				want = []string{fmt.Sprintf("0x%x state %#x", 'a', ctrl), fmt.Sprintf("0x%x state 0x0", ksBackSpace)}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Key(%q) non-modifier presses mismatch (-want +got):\n%s", tt.keys, diff)
			}
		})
	}
}

func isModifierKeysym(ks uint32) bool { return (ks >= 0xffe1 && ks <= 0xffee) || ks == ksLevel3 }

func TestDo(t *testing.T) {
	d := newTestDevice(t, fullArea, Options{DragStepDelay: -1})
	w := fullWindow(t)
	actions := []Action{
		{Kind: "click", X: 500, Y: 500},
		{Kind: "RIGHT_CLICK", X: 0, Y: 0},
		{Kind: " double_click ", X: 1000, Y: 0},
		{Kind: "middle_click", X: 0, Y: 1000},
		{Kind: "drag", X: 0, Y: 0, X2: 1000, Y2: 1000},
		{Kind: "scroll", X: 500, Y: 500, DY: -2},
		{Kind: "move", X: 250, Y: 250},
		{Kind: "type", Text: "ok"},
		{Kind: "key", Keys: "ctrl+a"},
	}
	for _, a := range actions {
		if err := d.Do(t.Context(), a); err != nil {
			t.Fatalf("Do(%+v): %v", a, err)
		}
	}
	evs := waitKind(t, w, testx.KeyRelease, 4) // o, k, a, ctrl
	want := []string{
		"button_press 1 @640,360", "button_release 1 @640,360",
		"button_press 3 @0,0", "button_release 3 @0,0",
		"button_press 1 @1279,0", "button_release 1 @1279,0", "button_press 1 @1279,0", "button_release 1 @1279,0",
		"button_press 2 @0,719", "button_release 2 @0,719",
		"button_press 1 @0,0", "button_release 1 @1279,719",
		"button_press 4 @640,360", "button_release 4 @640,360", "button_press 4 @640,360", "button_release 4 @640,360",
	}
	if diff := cmp.Diff(want, buttons(evs)); diff != "" {
		t.Errorf("button events mismatch (-want +got):\n%s", diff)
	}
	if last := lastMotion(evs); last != "320,180" {
		t.Errorf("last pointer motion at %s, want 320,180", last)
	}
	if got := w.Typed(); got != "oka" {
		t.Errorf("typed %q, want %q", got, "oka")
	}
}

func lastMotion(evs []testx.Event) string {
	s := ""
	for _, e := range evs {
		if e.Kind == testx.Motion {
			s = fmt.Sprintf("%d,%d", e.RootX, e.RootY)
		}
	}
	return s
}

func TestDoRejects(t *testing.T) {
	d := newTestDevice(t, fullArea, Options{})
	tests := []struct {
		a    Action
		want string
	}{
		{Action{Kind: "tap", X: 1, Y: 1}, `unknown action kind "tap"`},
		{Action{}, "action has no kind"},
		{Action{Kind: "drag", X: 10, Y: 10}, "drag needs x2,y2"},
		{Action{Kind: "scroll", X: 10, Y: 10}, "scroll needs dy"},
		{Action{Kind: "scroll", DY: MaxScroll + 1}, "at most"},
		{Action{Kind: "type"}, "type needs text"},
		{Action{Kind: "key"}, "key needs keys"},
		{Action{Kind: "key", Keys: "ctrl+nosuchkey"}, `unknown key "nosuchkey"`},
		{Action{Kind: "type", Text: "a\x01"}, "cannot be typed"},
	}
	for _, tt := range tests {
		err := d.Do(t.Context(), tt.a)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Do(%+v) = %v, want an error containing %q", tt.a, err, tt.want)
		}
	}
	if err := d.Do(t.Context(), Action{Kind: "tap"}); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("Do(tap) = %v, want ErrUnknownKind", err)
	}
}

// TestDryRun checks that a dry-run device sends nothing: the first event the
// window sees is the one a real device sends afterwards.
func TestDryRun(t *testing.T) {
	dry := newTestDevice(t, fullArea, Options{DryRun: true})
	real := newTestDevice(t, fullArea, Options{})
	w := fullWindow(t)
	for _, a := range []Action{{Kind: "click", X: 10, Y: 10}, {Kind: "type", Text: "xé"}, {Kind: "key", Keys: "ctrl+l"}, {Kind: "drag", X: 1, Y: 1, X2: 900, Y2: 900}} {
		if err := dry.Do(t.Context(), a); err != nil {
			t.Fatalf("dry Do(%+v): %v", a, err)
		}
	}
	if err := real.Click(t.Context(), 750, 750); err != nil {
		t.Fatal(err)
	}
	evs := waitKind(t, w, testx.ButtonRelease, 1)
	if diff := cmp.Diff([]string{"button_press 1 @959,539", "button_release 1 @959,539"}, buttons(evs)); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
	if n := count(evs, testx.KeyPress); n != 0 {
		t.Errorf("dry run sent %d key presses", n)
	}
}

// TestCancelReleases cancels a drag while the button is down and checks the
// button is released.
func TestCancelReleases(t *testing.T) {
	d := newTestDevice(t, fullArea, Options{DragStepDelay: time.Hour})
	w := fullWindow(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- d.Drag(ctx, 100, 100, 900, 900) }()
	waitKind(t, w, testx.ButtonPress, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Drag after cancel = %v, want context.Canceled", err)
	}
	evs := waitKind(t, w, testx.ButtonRelease, 1)
	if diff := cmp.Diff([]string{"button_press 1 @128,72", "button_release 1 @128,72"}, buttons(evs)); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
}

// TestXterm types into a real xterm running `cat > file` and reads the
// file: the characters arrive through a real Xlib client, non-ASCII ones
// through the remapped keycode.
func TestXterm(t *testing.T) {
	dir := t.TempDir()
	out, ready := filepath.Join(dir, "typed.txt"), filepath.Join(dir, "ready")
	xt := testx.StartXterm(t, dpy, testx.XtermSpec{
		Geometry: "80x10+0+0",
		Args:     []string{"-u8"},
		Command:  []string{"sh", "-c", "stty -echo && touch " + ready + " && exec cat > " + out},
	})
	// Input typed before the terminal is set up is lost: wait for the shell.
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		select {
		case <-t.Context().Done():
			t.Fatal("xterm's shell never started")
		case <-time.After(20 * time.Millisecond):
		}
	}
	d := newTestDevice(t, fullArea, Options{RemapHold: time.Second})
	x := d.x
	xproto.SetInputFocus(x, xproto.InputFocusPointerRoot, xproto.Window(xt.Window), xproto.TimeCurrentTime)
	if _, err := xproto.GetInputFocus(x).Reply(); err != nil {
		t.Fatal(err)
	}
	text := "Hello, World! @# café €\n"
	if err := d.Type(t.Context(), text); err != nil {
		t.Fatalf("Type: %v", err)
	}
	var got []byte
	for {
		b, err := os.ReadFile(out)
		if err == nil && strings.HasSuffix(string(b), "\n") {
			got = b
			break
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("xterm wrote %q, want %q", b, text)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if string(got) != text {
		t.Errorf("xterm received %q, want %q", got, text)
	}
}

func TestNewWithoutXTest(t *testing.T) {
	name := testx.StartXvfb(t, xvfb.Options{Width: 320, Height: 200, Args: []string{"-extension", "XTEST"}})
	c, err := xdisplay.Open(t.Context(), name, xdisplay.Options{})
	if err != nil {
		t.Fatalf("open display %s: %v", name, err)
	}
	defer c.Close()
	if d, err := New(c, Area{0, 0, 320, 200}, Options{}); !errors.Is(err, ErrNoXTest) {
		t.Errorf("New on a server without XTEST = %v, %v, want ErrNoXTest", d, err)
	}
}

func TestAreaClippedToScreen(t *testing.T) {
	d := newTestDevice(t, Area{1000, 500, 1000, 1000}, Options{})
	if got, want := d.Area(), (Area{1000, 500, 280, 220}); got != want {
		t.Errorf("New(area beyond the screen).Area() = %v, want %v", got, want)
	}
	if err := d.SetArea(Area{2000, 2000, 10, 10}); err == nil {
		t.Errorf("SetArea(outside the screen) = nil, want an error")
	}
	if err := d.SetArea(Area{0, 0, 0, 10}); err == nil {
		t.Errorf("SetArea(empty) = nil, want an error")
	}
	if err := d.SetArea(Area{10, 20, 30, 40}); err != nil || d.Area() != (Area{10, 20, 30, 40}) {
		t.Errorf("SetArea(10,20,30,40) = %v, area %v", err, d.Area())
	}
}

func lockOn(t *testing.T, d *Device) bool {
	t.Helper()
	r, err := xproto.QueryPointer(d.x, d.root).Reply()
	if err != nil {
		t.Fatal(err)
	}
	return r.Mask&xproto.ModMaskLock != 0
}

// TestTypeCapsLock types with Caps Lock on: the text arrives as written and
// Caps Lock is on again afterwards.
func TestTypeCapsLock(t *testing.T) {
	d := newTestDevice(t, fullArea, Options{})
	w := fullWindow(t)
	if err := d.Key(t.Context(), "Caps_Lock"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if lockOn(t, d) {
			d.Key(context.Background(), "Caps_Lock")
		}
	})
	if !lockOn(t, d) {
		t.Fatal("Caps_Lock did not switch Caps Lock on")
	}
	waitKind(t, w, testx.KeyRelease, 1)
	w.ResetEvents()
	if err := d.Type(t.Context(), "aB c"); err != nil {
		t.Fatal(err)
	}
	waitTyped(t, w, "aB c")
	if !lockOn(t, d) {
		t.Error("Caps Lock is off after Type, want it restored to on")
	}
}

// TestTypeManyRemaps types more distinct missing characters than there are
// spare keycodes, so remapped keycodes are reused within one call.
func TestTypeManyRemaps(t *testing.T) {
	d := newTestDevice(t, fullArea, Options{RemapHold: time.Second})
	w := fullWindow(t)
	var b strings.Builder
	for r := 'А'; len([]rune(b.String())) <= len(d.km.spare)+3; r++ { // Cyrillic capitals
		b.WriteRune(r)
	}
	text := b.String()
	if err := d.Type(t.Context(), text); err != nil {
		t.Fatalf("Type(%q): %v", text, err)
	}
	waitTyped(t, w, text)
}

// TestCancelTypeRestoresKeymap cancels a Type between two remapped
// characters and checks the remapped keycode is restored once unused.
func TestCancelTypeRestoresKeymap(t *testing.T) {
	d := newTestDevice(t, fullArea, Options{KeyDelay: time.Hour, RemapIdle: 100 * time.Millisecond})
	w := fullWindow(t)
	spare := append([]xproto.Keycode(nil), d.km.spare...)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- d.Type(ctx, "é€") }()
	waitKind(t, w, testx.KeyRelease, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Type after cancel = %v, want context.Canceled", err)
	}
	waitRestored(t, d, spare)
}
