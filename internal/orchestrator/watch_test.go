package orchestrator_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"

	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/input"
	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/orchestrator"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// user is a second X client on the display, as another program (or a
// person's keyboard) would be: its input is not acu's.
type user struct {
	x    *xgb.Conn
	root xproto.Window
}

func newUser(t testing.TB, dpy string) *user {
	t.Helper()
	x, err := xgb.NewConnDisplay(dpy)
	if err != nil {
		t.Fatalf("connect the user's client to %s: %v", dpy, err)
	}
	t.Cleanup(x.Close)
	ext, err := display.InitExtensions(x)
	if err != nil || !ext.XTest {
		t.Fatalf("XTest on the user's client: %v (present %v)", err, ext.XTest)
	}
	return &user{x: x, root: xproto.Setup(x).DefaultScreen(x).Root}
}

// keycode finds the keycode of keysym (the first one bound to it).
func (u *user) keycode(t testing.TB, keysym xproto.Keysym) xproto.Keycode {
	t.Helper()
	s := xproto.Setup(u.x)
	n := byte(s.MaxKeycode - s.MinKeycode + 1)
	r, err := xproto.GetKeyboardMapping(u.x, s.MinKeycode, n).Reply()
	if err != nil {
		t.Fatalf("keyboard mapping: %v", err)
	}
	per := int(r.KeysymsPerKeycode)
	for i, k := range r.Keysyms {
		if k == keysym {
			return s.MinKeycode + xproto.Keycode(i/per)
		}
	}
	t.Fatalf("no keycode for keysym %#x", keysym)
	return 0
}

// press presses and releases Shift_L (harmless to whatever has the focus)
// and waits until the server has processed it.
func (u *user) press(t testing.TB) {
	t.Helper()
	kc := byte(u.keycode(t, 0xffe1))
	xtest.FakeInput(u.x, xproto.KeyPress, kc, 0, u.root, 0, 0, 0)
	xtest.FakeInput(u.x, xproto.KeyRelease, kc, 0, u.root, 0, 0, 0)
	if _, err := xproto.GetInputFocus(u.x).Reply(); err != nil {
		t.Fatalf("sync the user's key press: %v", err)
	}
}

// move moves the pointer to x, y.
func (u *user) move(t testing.TB, x, y int16) {
	t.Helper()
	xtest.FakeInput(u.x, xproto.MotionNotify, 0, 0, u.root, x, y, 0)
	if _, err := xproto.GetInputFocus(u.x).Reply(); err != nil {
		t.Fatalf("sync the user's pointer move: %v", err)
	}
}

// acuDisplay starts an Xvfb with extra arguments and opens acu's connection
// and input device on it.
func acuDisplay(t testing.TB, args ...string) (string, *display.Conn, *input.Device) {
	t.Helper()
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 640, Height: 480, Args: args})
	conn, err := display.Open(context.Background(), dpy, display.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	dev, err := input.New(conn, input.Area{W: int(conn.Screen.Width), H: int(conn.Screen.Height)}, input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	return dpy, conn, dev
}

// pastMargin waits until input made now is more than margin after the
// last Mark (the watcher ignores input closer to acu's own than that).
func pastMargin(margin time.Duration) { time.Sleep(3 * margin) }

func foreign(t testing.TB, w orchestrator.Watcher) (bool, string) {
	t.Helper()
	ok, detail, err := w.Foreign(t.Context())
	if err != nil {
		t.Fatalf("Foreign: %v", err)
	}
	return ok, detail
}

func mark(t testing.TB, w orchestrator.Watcher) {
	t.Helper()
	if err := w.Mark(t.Context()); err != nil {
		t.Fatalf("Mark: %v", err)
	}
}

// Keyboard input from another client is user input; acu's own typing and
// pointer moves are not; the pointer is still watched.
func TestInputWatchKeyboard(t *testing.T) {
	dpy, conn, dev := acuDisplay(t)
	u := newUser(t, dpy)
	const margin = 50 * time.Millisecond
	w := orchestrator.NewInputWatch(conn, orchestrator.InputWatchOptions{Margin: margin})
	if !w.Keyboard() {
		t.Fatal("Keyboard() = false on an Xvfb with MIT-SCREEN-SAVER")
	}
	if ok, detail := foreign(t, w); ok {
		t.Errorf("before any Mark: Foreign = true (%s), want false", detail)
	}

	// acu's own input, then its mark: not foreign, however long after.
	ctx := t.Context()
	if err := dev.Move(ctx, 300, 200); err != nil {
		t.Fatal(err)
	}
	if err := dev.Type(ctx, "abc"); err != nil {
		t.Fatal(err)
	}
	if err := dev.Key(ctx, "shift"); err != nil {
		t.Fatal(err)
	}
	mark(t, w)
	pastMargin(margin)
	if ok, detail := foreign(t, w); ok {
		t.Errorf("after acu's own input: Foreign = true (%s), want false", detail)
	}

	// Another client's key press: foreign, and stays so until the next Mark.
	u.press(t)
	for range 2 {
		ok, detail := foreign(t, w)
		if !ok || !strings.Contains(detail, "keyboard") {
			t.Errorf("after the user's key press: Foreign = %v (%s), want true, keyboard", ok, detail)
		}
	}
	mark(t, w)
	pastMargin(margin)
	if ok, detail := foreign(t, w); ok {
		t.Errorf("after the mark that follows the user's input: Foreign = true (%s), want false", detail)
	}

	// acu acts again between checks: its marks keep its input its own.
	if err := dev.Key(ctx, "shift"); err != nil {
		t.Fatal(err)
	}
	mark(t, w)
	if ok, detail := foreign(t, w); ok {
		t.Errorf("after acu's key and mark: Foreign = true (%s), want false", detail)
	}

	// The pointer is still watched.
	pastMargin(margin)
	u.move(t, 10, 20)
	if ok, detail := foreign(t, w); !ok || !strings.Contains(detail, "pointer at 10,20") {
		t.Errorf("after the user's pointer move: Foreign = %v (%s), want true, pointer at 10,20", ok, detail)
	}
}

// Without MIT-SCREEN-SAVER the watcher says so in the log and falls back to
// the pointer.
func TestInputWatchWithoutScreenSaver(t *testing.T) {
	dpy, conn, _ := acuDisplay(t, "-extension", "MIT-SCREEN-SAVER")
	if conn.Ext.ScreenSaver {
		t.Fatal("the server offers MIT-SCREEN-SAVER despite -extension MIT-SCREEN-SAVER")
	}
	u := newUser(t, dpy)
	var logs bytes.Buffer
	w := orchestrator.NewInputWatch(conn, orchestrator.InputWatchOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if w.Keyboard() {
		t.Error("Keyboard() = true without MIT-SCREEN-SAVER")
	}
	if !strings.Contains(logs.String(), "MIT-SCREEN-SAVER") {
		t.Errorf("no note about the missing extension in the log: %q", logs.String())
	}
	mark(t, w)
	pastMargin(orchestrator.DefaultIdleMargin)
	u.press(t)
	if ok, detail := foreign(t, w); ok {
		t.Errorf("key press without the extension: Foreign = true (%s), want false (pointer only)", detail)
	}
	u.move(t, 30, 40)
	if ok, detail := foreign(t, w); !ok || !strings.Contains(detail, "pointer") {
		t.Errorf("after the user's pointer move: Foreign = %v (%s), want true, pointer", ok, detail)
	}
}

// Intervention by keyboard: another client's key press while the model
// thinks pauses the run (recorded) and drops the steps planned on the stale
// map; acu's own typing in the iteration before does not.
func TestInterventionKeyboardPauses(t *testing.T) {
	d := newDesktop(t)
	d.entry(t)
	u := newUser(t, d.dpy)
	var fast counter
	m := newModels(t, func(r llmtest.Request) llmtest.Reply {
		if isCheck(r) {
			return progressing(true)
		}
		switch fast.next() {
		case 1:
			return llmtest.Reply{Text: stepsJSON(false, typeStep("txt_1", "abc"))}
		case 2:
			// The user presses a key while the model thinks.
			pastMargin(orchestrator.DefaultIdleMargin)
			u.press(t)
			return llmtest.Reply{Text: stepsJSON(false, typeStep("txt_1", "zzz"))}
		}
		return llmtest.Reply{Text: stepsJSON(true)}
	}, unusable, doneReply)
	or := d.orchestrator(t, m, func(o *orchestrator.Options) {
		o.Watch = orchestrator.NewInputWatch(d.conn, orchestrator.InputWatchOptions{})
		o.PauseQuiet = 300 * time.Millisecond
	})
	res := run(t, or, 10)
	if res.Status != runs.StatusCompleted {
		t.Fatalf("status = %s, want completed", res.Status)
	}
	checkPausedAtIteration2(t, d, m, res, "keyboard")
}
