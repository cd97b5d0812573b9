package atspitest

import (
	"context"
	"embed"
	"image"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/atspi"
)

//go:embed forms
var forms embed.FS

// The test forms come in the Fixture's toolkits: GTK (GTK 3, python3-gi)
// and Qt (Qt 5, python3-pyqt5).

// Form is a one-entry form in an application: an entry named "Value" and
// a "Submit" button (Return in the entry submits too) that prints the
// entry's text, as the application itself received it, on a line of
// stdout and clears it.
type Form struct {
	*App
	Toolkit string
}

// Form starts a form of toolkit titled title and waits until its Submit
// button is on the accessibility bus.
func (d *Desktop) Form(t testing.TB, toolkit, title string) *Form {
	t.Helper()
	name := "acu-" + toolkit + "form"
	app := d.Session.StartApp(t, Python(), FormScript(t, toolkit), title)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f := &Form{App: app, Toolkit: toolkit}
	for {
		nodes, err := WaitApp(ctx, d.Tree, name)
		if err != nil {
			t.Fatalf("%v; form stderr: %s", err, app.Stderr())
		}
		for _, n := range nodes {
			if strings.Contains(n.App, name) && n.Role == "push button" && n.Name == "Submit" && !n.Bounds.Empty() {
				return f
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// FormScript writes the form of toolkit (GTK or Qt) to a file of the test
// and returns its path, to run with /usr/bin/python3 and the form's title
// (as Form does; a test that needs another environment, such as
// Session.WaylandEnv, starts it with StartAppEnv).
func FormScript(t testing.TB, toolkit string) string {
	t.Helper()
	switch toolkit {
	case GTK, Qt:
	default:
		t.Fatalf("no %s form: use gtk or qt", toolkit)
	}
	src, err := forms.ReadFile("forms/" + toolkit + "form.py")
	if err != nil {
		t.Fatal(err)
	}
	return writeScript(t, toolkit+"form.py", src)
}

// Got returns what the form's application reported for its submissions
// so far, in order.
func (f *Form) Got() []string {
	out := strings.Split(f.Stdout(), "\n")
	return out[:len(out)-1] // the last is the line not yet ended
}

// WaitGot waits until the form has reported n submissions and returns
// them.
func (f *Form) WaitGot(ctx context.Context, n int) ([]string, error) {
	for {
		if got := f.Got(); len(got) >= n {
			return got, nil
		}
		select {
		case <-ctx.Done():
			return f.Got(), ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// MovingScript writes the moving-buttons window to a file of the test and
// returns its path, to run with /usr/bin/python3. It is a GTK window
// "Acu Moving" (application acu-moving) with two buttons, Alpha and Bravo,
// side by side; every click and right click is printed ("alpha clicked",
// "bravo right"). SIGUSR1 swaps the buttons' places; SIGUSR2 hides Alpha
// and moves Bravo where Alpha was; after either, "moved" is printed once
// the new layout is painted. It is what the stale-click tests act on: a
// control that moves while a model thinks.
func MovingScript(t testing.TB) string {
	t.Helper()
	src, err := forms.ReadFile("forms/moving.py")
	if err != nil {
		t.Fatal(err)
	}
	return writeScript(t, "moving.py", src)
}

// FormLaidOut reports whether the form titled title (FormScript's) is
// laid out at size, the size the compositor shows it at: its accessible
// window has that size and its Submit button is there. Moving a window,
// or placing its elements, before that can find the application laid out
// at a size the compositor no longer shows.
func FormLaidOut(ctx context.Context, tree *atspi.Client, title string, size image.Point) bool {
	nodes, _ := tree.Tree(ctx)
	frame, submit := false, false
	for _, n := range nodes {
		if n.Depth == 1 && n.Name == title && n.Bounds.Size() == size {
			frame = true
		}
		if n.Role == "push button" && n.Name == "Submit" && !n.Bounds.Empty() {
			submit = true
		}
	}
	return frame && submit
}
