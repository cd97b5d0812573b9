package atspitest

import (
	"context"
	"embed"
	"os"
	"path/filepath"
	"testing"
	"time"
)

//go:embed forms/*.py
var forms embed.FS

// Toolkits of the test forms.
const (
	GTK = "gtk"
	Qt  = "qt"
)

// Form starts a one-entry form of toolkit (GTK or Qt, python3-gi and
// python3-pyqt5 from Debian): an entry named "Value" and a "Submit"
// button that prints the entry's text on a line of stdout and clears it.
// It waits until the form is on the accessibility bus.
func (d *Desktop) Form(t testing.TB, toolkit, title string) *App {
	t.Helper()
	src, err := forms.ReadFile("forms/" + toolkit + "form.py")
	if err != nil {
		t.Fatalf("no %s form: %v", toolkit, err)
	}
	script := filepath.Join(t.TempDir(), toolkit+"form.py")
	if err := os.WriteFile(script, src, 0o600); err != nil {
		t.Fatal(err)
	}
	// Debian's python3, where python3-gi and python3-pyqt5 live (not a
	// python3 of pyenv or a virtualenv first on PATH).
	app := d.Session.StartApp(t, "/usr/bin/python3", script, title)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := WaitApp(ctx, d.Tree, "acu-"+toolkit+"form"); err != nil {
		t.Fatalf("%v; form stderr: %s", err, app.Stderr())
	}
	return app
}
