package judge_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/judge"
	"github.com/acu-dev/acu/internal/ocr"
	"github.com/acu-dev/acu/internal/ocr/ocrtest"
)

// overlapGTK is a GTK 3 window at the screen's top left with a button, a
// check box and a field (python3-gi); it creates its mark file once drawn.
const overlapGTK = `
import sys, gi
gi.require_version("Gtk", "3.0")
from gi.repository import Gtk, GLib
w = Gtk.Window(title="Acu Fixture")
w.set_default_size(420, 360)
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
b = Gtk.Button(label="Install")
b.set_sensitive(False)
box.pack_start(b, False, False, 0)
box.pack_start(Gtk.CheckButton(label="Remember me"), False, False, 0)
e = Gtk.Entry()
e.set_placeholder_text("Name")
box.pack_start(e, False, False, 0)
box.pack_start(Gtk.ProgressBar(), False, False, 0)
w.add(box)
w.connect("destroy", Gtk.main_quit)
w.show_all()
GLib.timeout_add(500, lambda: open(sys.argv[1], "w").close())
Gtk.main()
`

// TestOCRJudgeXtermOverGTKWindow: an xterm (with its 1-pixel black
// border) over part of a light GTK window leaves a strip of the window,
// narrower than a background run, between the screen's edge and the
// border. That strip was flattened as ink against the border, which
// joined it and the GTK window's widgets to the xterm's lines in one
// block too tall for their text: the block was shrunk and "Downloads"
// never read.
func TestOCRJudgeXtermOverGTKWindow(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	d := ocrtest.StartXvfb(t, 1024, 600)
	script := filepath.Join(t.TempDir(), "gtk.py")
	if err := os.WriteFile(script, []byte(overlapGTK), 0o600); err != nil {
		t.Fatal(err)
	}
	gtkMark := filepath.Join(t.TempDir(), "gtk")
	d.Start(t, "/usr/bin/python3", script, gtkMark)
	d.WaitSettled(ctx, t, gtkMark)
	mark := filepath.Join(t.TempDir(), "xterm")
	d.Start(t, "xterm", "-geometry", "70x12+20+20", "+sb", "-fa", "DejaVu Sans Mono", "-fs", "14",
		"-e", "sh", "-c", "echo 'Downloading...'; echo 'Downloads'; touch "+mark+"; exec sleep 600")
	f := d.WaitSettled(ctx, t, mark)
	j := ocrJudge(t, ocr.Options{})
	v, err := j.Judge(ctx, judge.Question{Condition: `"Downloads" is visible`, Frame: f})
	if err != nil {
		t.Fatal(err)
	}
	if !v.Met {
		t.Errorf(`Judge("Downloads" is visible) on an xterm over a GTK window = NO (%s), want YES`, v.Evidence)
	}
}
