package atspi_test

import (
	"context"
	"errors"
	"image"
	"syscall"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

func start(t *testing.T, args ...string) (*atspi.Client, *atspitest.App, []atspi.Node) {
	t.Helper()
	dpy := testx.StartXvfb(t, xvfb.Options{})
	s := atspitest.Start(t, dpy)
	app := s.StartApp(t, "zenity", args...)
	c, err := atspi.Connect(t.Context(), atspi.Options{SessionBus: s.SessionBus})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	nodes, err := atspitest.WaitApp(ctx, c, "zenity")
	if err != nil {
		t.Fatalf("%v; zenity stderr: %s", err, app.Stderr())
	}
	return c, app, nodes
}

func find(nodes []atspi.Node, role, name string) (atspi.Node, bool) {
	for _, n := range nodes {
		if n.Role == role && n.Name == name {
			return n, true
		}
	}
	return atspi.Node{}, false
}

func TestTreeZenityEntry(t *testing.T) {
	c, app, nodes := start(t, "--entry", "--title=Acu Entry", "--text=Your name:")
	dlg, ok := find(nodes, "dialog", "Acu Entry")
	if !ok {
		t.Fatalf("no dialog in %+v", nodes)
	}
	for _, tc := range []struct{ role, name string }{{"push button", "OK"}, {"push button", "Cancel"}, {"label", "Your name:"}, {"text", ""}} {
		n, ok := find(nodes, tc.role, tc.name)
		if !ok {
			t.Errorf("no %s %q in the tree", tc.role, tc.name)
			continue
		}
		if n.App != "zenity" || n.Window != "Acu Entry" {
			t.Errorf("%s %q: app, window = %q, %q, want zenity, Acu Entry", tc.role, tc.name, n.App, n.Window)
		}
		if n.Bounds.Empty() || !n.Bounds.In(dlg.Bounds) {
			t.Errorf("%s %q: bounds %v, want inside the dialog %v", tc.role, tc.name, n.Bounds, dlg.Bounds)
		}
		if !n.States.Has(atspi.StateShowing) || !n.States.Has(atspi.StateEnabled) {
			t.Errorf("%s %q: states %s, want showing and enabled", tc.role, tc.name, n.States)
		}
	}
	ok1, _ := find(nodes, "push button", "OK")
	if len(ok1.Actions) == 0 || ok1.Actions[0] != "Click" {
		t.Errorf("OK actions = %v, want [Click]", ok1.Actions)
	}
	entry, _ := find(nodes, "text", "")
	if !entry.States.Has(atspi.StateEditable) || !entry.Ifaces.Has(atspi.IfEditableText) {
		t.Errorf("entry: states %s, interfaces %b, want editable with EditableText", entry.States, entry.Ifaces)
	}

	// EditableText, then the OK button's Click action: zenity prints the text.
	if err := c.SetText(t.Context(), entry.Ref, "hello acu"); err != nil {
		t.Fatal(err)
	}
	n, err := c.Read(t.Context(), entry.Ref)
	if err != nil {
		t.Fatal(err)
	}
	if n.Text != "hello acu" {
		t.Errorf("entry text after SetText = %q, want %q", n.Text, "hello acu")
	}
	if err := c.DoAction(t.Context(), ok1.Ref, 0); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	out, err := app.Wait(ctx)
	if err != nil || out != "hello acu\n" {
		t.Errorf("zenity = %q, %v; want %q, nil", out, err, "hello acu\n")
	}
}

func TestTreeZenityQuestion(t *testing.T) {
	_, _, nodes := start(t, "--question", "--title=Acu Question", "--text=Proceed?")
	for _, name := range []string{"Yes", "No"} {
		n, ok := find(nodes, "push button", name)
		if !ok {
			t.Fatalf("no button %q", name)
		}
		if n.Bounds.Empty() || n.Bounds.Min == (image.Point{}) {
			t.Errorf("button %q bounds %v", name, n.Bounds)
		}
	}
}

func TestBusAddressMissing(t *testing.T) {
	if _, err := atspi.BusAddress(t.Context(), "", time.Second); err == nil {
		t.Fatal("BusAddress with no session bus: want an error")
	}
	if _, err := atspi.Connect(t.Context(), atspi.Options{SessionBus: "unix:path=/nonexistent/bus"}); err == nil {
		t.Fatal("Connect to a missing session bus: want an error")
	}
}

func TestStates(t *testing.T) {
	s := atspi.States(1<<atspi.StateFocused | 1<<atspi.StateShowing | 1<<atspi.StateReadOnly)
	if got, want := s.String(), "focused,showing,read_only"; got != want {
		t.Errorf("States.String() = %q, want %q", got, want)
	}
}

func TestDisplayBusAddress(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{})
	conn, err := display.Open(t.Context(), dpy, display.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := atspi.DisplayBusAddress(t.Context(), conn); !errors.Is(err, atspi.ErrNoBus) {
		t.Errorf("DisplayBusAddress before the launcher = %v, want ErrNoBus", err)
	}
	s := atspitest.Start(t, dpy)
	got, err := atspi.DisplayBusAddress(t.Context(), conn)
	if err != nil || got != s.A11yBus {
		t.Errorf("DisplayBusAddress = %q, %v; want %q (org.a11y.Bus.GetAddress)", got, err, s.A11yBus)
	}
	c, err := atspi.Connect(t.Context(), atspi.Options{Address: got})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

// A stopped application (it cannot answer) costs one call timeout and the
// other applications are still read.
func TestTreeSkipsHungApp(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{})
	s := atspitest.Start(t, dpy)
	hung := s.StartApp(t, "zenity", "--info", "--title=Hung", "--text=I will stop")
	c, err := atspi.Connect(t.Context(), atspi.Options{SessionBus: s.SessionBus, CallTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := atspitest.WaitApp(ctx, c, "zenity"); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(hung.Pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	s.StartApp(t, "zenity", "--question", "--title=Alive", "--text=Still here?")
	var nodes []atspi.Node
	for ctx.Err() == nil {
		nodes, err = c.Tree(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := find(nodes, "push button", "Yes"); ok {
			break
		}
	}
	if _, ok := find(nodes, "push button", "Yes"); !ok {
		t.Fatalf("the live dialog's Yes button is missing: %+v", nodes)
	}
	for _, n := range nodes {
		if n.Window == "Hung" {
			t.Errorf("read %s %q of the stopped application", n.Role, n.Name)
		}
	}
}

// TestTreeQtForm: a Qt 5 application's tree is read without crashing it
// (Qt's adaptor crashes on Properties.GetAll, which the client must not
// send it), with its widgets' names, roles and bounds.
func TestTreeQtForm(t *testing.T) {
	d := atspitest.NewDesktop(t)
	form := d.Form(t, atspitest.Qt, "Acu Qt Tree")
	for range 3 { // read it again: the application must still answer
		nodes, err := d.Tree.Tree(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		b, ok := find(nodes, "push button", "Submit")
		if !ok || b.Bounds.Empty() || b.App != "acu-qtform" {
			t.Fatalf("Submit in the Qt form's tree = %+v, %v", b, ok)
		}
		if e, ok := find(nodes, "text", "Value"); !ok || !e.Ifaces.Has(atspi.IfEditableText) {
			t.Errorf("the Qt form's entry = %+v, %v", e, ok)
		}
	}
	if form.Exited() {
		t.Fatalf("the Qt form exited: %s", form.Stderr())
	}
}
