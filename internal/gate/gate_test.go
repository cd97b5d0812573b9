package gate_test

import (
	"context"
	"image"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/jezek/xgb/xtest"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// audits collects the gate's audit events.
type audits struct {
	mu  sync.Mutex
	evs []gate.AuditEvent
}

func (a *audits) add(_ context.Context, ev gate.AuditEvent) {
	a.mu.Lock()
	a.evs = append(a.evs, ev)
	a.mu.Unlock()
}

func (a *audits) all() []gate.AuditEvent {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]gate.AuditEvent(nil), a.evs...)
}

func refusedWith(t *testing.T, what string, err error, code string) {
	t.Helper()
	r, ok := gate.IsRefused(err)
	if !ok || r.Code != code {
		t.Errorf("%s: %v, want a %s refusal", what, err, code)
	}
}

// TestDisabledStopsEveryEffect: with acting off, no effect of any kind
// passes: input, window operations, clipboard writes, launches; reads
// still work.
func TestDisabledStopsEveryEffect(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 640, Height: 480})
	w := testx.NewWindow(t, dpy, testx.Spec{Title: "target", X: 10, Y: 10, W: 200, H: 150})
	var au audits
	g := gate.New(gate.Options{DefaultDisplay: dpy, Policy: gate.Policy{Disabled: true}, Audit: au.add})
	defer g.Close()
	ctx := gate.WithCaller(t.Context(), gate.Caller{Token: "reader", Engine: "api"})

	_, err := g.Hands(ctx, dpy)
	refusedWith(t, "hands", err, api.CodeActDisabled)
	_, err = g.HandsFor(ctx, dpy, gate.DeviceOptions{})
	refusedWith(t, "an engine's hands", err, api.CodeActDisabled)
	_, err = g.WindowOp(ctx, "0x"+hex(w.ID()), api.WindowClose, api.WindowOp{Kill: true})
	refusedWith(t, "window close", err, api.CodeActDisabled)
	_, err = g.SetClipboard(ctx, api.Clipboard{Text: "secret"})
	refusedWith(t, "clipboard write", err, api.CodeActDisabled)
	marker := filepath.Join(t.TempDir(), "launched")
	_, err = g.Launch(ctx, api.LaunchRequest{Argv: []string{"touch", marker}})
	refusedWith(t, "launch", err, api.CodeActDisabled)
	time.Sleep(200 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the refused launch ran")
	}
	if ws, err := g.Windows(ctx, dpy); err != nil || len(ws.Windows) == 0 {
		t.Errorf("window list while acting is off: %v %v", ws, err)
	}
	evs := au.all()
	if len(evs) < 5 {
		t.Fatalf("%d audit events for 5 refusals", len(evs))
	}
	for _, ev := range evs {
		if ev.Refused != api.CodeActDisabled || ev.Caller.Token != "reader" || ev.Caller.Engine != "api" {
			t.Errorf("audit %+v: want an act_disabled refusal by the reader token", ev)
		}
	}
}

// TestDenyListOnEveryEffect: a window on the deny-list is refused to
// clicks, typing (by focus), drags that pass through it, window
// operations, element effects and the take-over's user alike.
func TestDenyListOnEveryEffect(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 640, Height: 480})
	vault := testx.NewWindow(t, dpy, testx.Spec{Title: "Acu Vault", Class: "AcuVault", X: 300, Y: 100, W: 200, H: 150})
	other := testx.NewWindow(t, dpy, testx.Spec{Title: "notes", X: 10, Y: 100, W: 200, H: 150})
	var au audits
	g := gate.New(gate.Options{DefaultDisplay: dpy, Audit: au.add,
		Policy: gate.Policy{Deny: []*regexp.Regexp{regexp.MustCompile(`(?i)acu vault`)}}})
	defer g.Close()
	for _, who := range []gate.Caller{{Engine: "agent", Run: "run_a"}, {Engine: "takeover", User: true}} {
		ctx := gate.WithCaller(t.Context(), who)
		h, err := g.Hands(ctx, dpy)
		if err != nil {
			t.Fatal(err)
		}
		in := image.Pt(400, 175)
		_, err = h.ClickAt(ctx, &in, gate.ButtonLeft, 1)
		refusedWith(t, who.Engine+" click in the vault", err, api.CodeWindowDenied)
		_, err = h.DragPath(ctx, gate.ButtonLeft, []image.Point{{X: 100, Y: 175}, in}, 0)
		refusedWith(t, who.Engine+" drag into the vault", err, api.CodeWindowDenied)
		vault.Focus()
		_, err = h.Type(ctx, "hunter2")
		refusedWith(t, who.Engine+" typing into the focused vault", err, api.CodeWindowDenied)
		err = h.Element(ctx, "txt_password", "AcuVault", "Acu Vault", "type", func(context.Context) error {
			t.Errorf("an element effect in the vault ran")
			return nil
		})
		refusedWith(t, who.Engine+" element effect in the vault", err, api.CodeWindowDenied)
		// The allowed window still gets input.
		other.Focus()
		if _, err := h.Type(ctx, "ok"); err != nil {
			t.Errorf("%s typing into notes: %v", who.Engine, err)
		}
	}
	_, err := g.WindowOp(t.Context(), "0x"+hex(vault.ID()), api.WindowClose, api.WindowOp{Kill: true})
	refusedWith(t, "killing the vault", err, api.CodeWindowDenied)
	if typed := vault.Typed(); typed != "" {
		t.Errorf("the vault received %q", typed)
	}
	for _, e := range vault.Events() {
		if e.Kind == testx.ButtonPress {
			t.Errorf("the vault was clicked: %+v", e)
		}
	}
	var sawAgent, sawUser bool
	for _, ev := range au.all() {
		if ev.Refused == api.CodeWindowDenied && ev.Caller.Engine == "agent" && ev.Caller.Run == "run_a" {
			sawAgent = true
		}
		if ev.Refused == api.CodeWindowDenied && ev.Caller.User {
			sawUser = true
		}
	}
	if !sawAgent || !sawUser {
		t.Errorf("audit names the agent's run %v and the take-over's user %v", sawAgent, sawUser)
	}
}

// TestUserFirstSparesTheUser: while someone else moves the pointer, an
// engine is refused with user_active; the human at the take-over is the
// user and is not.
func TestUserFirstSparesTheUser(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 640, Height: 480})
	testx.NewWindow(t, dpy, testx.Spec{Title: "notes", X: 10, Y: 10, W: 400, H: 300})
	g := gate.New(gate.Options{DefaultDisplay: dpy, Policy: gate.Policy{PauseOnUser: true, Quiet: time.Minute}})
	defer g.Close()
	agent := gate.WithCaller(t.Context(), gate.Caller{Engine: "agent"})
	h, err := g.Hands(agent, dpy)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.MoveTo(agent, image.Pt(50, 50)); err != nil {
		t.Fatal(err)
	}
	userMove(t, dpy, 200, 200) // someone else's pointer
	p := image.Pt(60, 60)
	_, err = h.ClickAt(agent, &p, gate.ButtonLeft, 1)
	refusedWith(t, "an engine's click while the user moves", err, api.CodeUserActive)
	user := gate.WithCaller(t.Context(), gate.Caller{Engine: "takeover", User: true})
	if _, err := h.ClickAt(user, &p, gate.ButtonLeft, 1); err != nil {
		t.Errorf("the take-over's click: %v", err)
	}
}

// userMove moves the pointer from an X client of its own through XTEST,
// as "the user" (xdotool does the same).
func userMove(t *testing.T, dpy string, x, y int16) {
	t.Helper()
	c, err := display.Open(t.Context(), dpy, display.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := xtest.FakeInputChecked(c.X, 6, 0, 0, c.Screen.Root, x, y, 0).Check(); err != nil {
		t.Fatal(err)
	}
}

// TestUserFirstByTheUsersClock: the quiet period counts from the user's
// last input as the server stamped it, not from when acu noticed it: a
// touch older than the quiet period does not refuse the next action, a
// recent one does, with the time left to wait.
func TestUserFirstByTheUsersClock(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 640, Height: 480})
	testx.NewWindow(t, dpy, testx.Spec{Title: "notes", X: 10, Y: 10, W: 400, H: 300})
	const quiet = time.Second
	g := gate.New(gate.Options{DefaultDisplay: dpy, Policy: gate.Policy{PauseOnUser: true, Quiet: quiet}})
	defer g.Close()
	agent := gate.WithCaller(t.Context(), gate.Caller{Engine: "api"})
	h, err := g.Hands(agent, dpy)
	if err != nil {
		t.Fatal(err)
	}
	p := image.Pt(60, 60)
	if _, err := h.ClickAt(agent, &p, gate.ButtonLeft, 1); err != nil {
		t.Fatal(err)
	}
	userMove(t, dpy, 200, 200)
	time.Sleep(quiet + quiet/2) // the user is still for longer than the quiet period
	if _, err := h.ClickAt(agent, &p, gate.ButtonLeft, 1); err != nil {
		t.Errorf("a click %v after the user's last move (quiet %v): %v", quiet+quiet/2, quiet, err)
	}
	userMove(t, dpy, 300, 200)
	_, err = h.ClickAt(agent, &p, gate.ButtonLeft, 1)
	refusedWith(t, "a click right after the user's move", err, api.CodeUserActive)
	if r, ok := gate.IsRefused(err); ok && (r.RetryAfter <= 0 || r.RetryAfter > quiet) {
		t.Errorf("retry after %v, want within (0, %v]", r.RetryAfter, quiet)
	}
}

// TestUserFirstNeverRefusesItself: a burst of acu's own input of every
// kind, with nobody else on the display, is never refused as the user's.
func TestUserFirstNeverRefusesItself(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 640, Height: 480})
	testx.NewWindow(t, dpy, testx.Spec{Title: "notes", X: 10, Y: 10, W: 400, H: 300})
	g := gate.New(gate.Options{DefaultDisplay: dpy, Policy: gate.Policy{PauseOnUser: true, Quiet: time.Minute}})
	defer g.Close()
	ctx := gate.WithCaller(t.Context(), gate.Caller{Engine: "api"})
	h, err := g.Hands(ctx, dpy)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		p := image.Pt(20+i%300, 20+i%200)
		var err error
		switch i % 6 {
		case 0:
			_, err = h.ClickAt(ctx, &p, gate.ButtonLeft, 1)
		case 1:
			_, err = h.MoveTo(ctx, p)
		case 2:
			_, err = h.Type(ctx, "a")
		case 3:
			if err = h.ModsDown(ctx, "shift"); err == nil {
				err = h.ModsUp(ctx)
			}
		case 4:
			if _, err = h.ButtonDown(ctx, &p, gate.ButtonLeft); err == nil {
				_, err = h.ButtonUp(ctx, &p, gate.ButtonLeft)
			}
		case 5:
			_, err = h.ScrollAt(ctx, &p, 0, 1)
		}
		if err != nil {
			t.Fatalf("effect %d of acu's own burst: %v", i, err)
		}
	}
}

func hex(id uint32) string {
	const digits = "0123456789abcdef"
	var b []byte
	for id > 0 || len(b) == 0 {
		b = append([]byte{digits[id%16]}, b...)
		id /= 16
	}
	return string(b)
}

// TestSideButtons: back and forward are X buttons 8 and 9, which the
// window under the pointer receives as such (not a key chord).
func TestSideButtons(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 640, Height: 480})
	w := testx.NewWindow(t, dpy, testx.Spec{Title: "browser", X: 0, Y: 0, W: 640, H: 480})
	g := gate.New(gate.Options{DefaultDisplay: dpy})
	defer g.Close()
	h, err := g.Hands(t.Context(), dpy)
	if err != nil {
		t.Fatal(err)
	}
	p := image.Pt(100, 100)
	for _, b := range []int{gate.ButtonBack, gate.ButtonForward} {
		if _, err := h.ClickAt(t.Context(), &p, b, 1); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	evs, err := w.WaitFor(ctx, func(evs []testx.Event) bool {
		n := 0
		for _, e := range evs {
			if e.Kind == testx.ButtonPress {
				n++
			}
		}
		return n >= 2
	})
	if err != nil {
		t.Fatalf("presses: %v (%+v)", err, evs)
	}
	var got []int
	for _, e := range evs {
		if e.Kind == testx.ButtonPress {
			got = append(got, e.Button)
		}
	}
	if len(got) != 2 || got[0] != 8 || got[1] != 9 {
		t.Errorf("buttons pressed %v, want [8 9]", got)
	}
}
