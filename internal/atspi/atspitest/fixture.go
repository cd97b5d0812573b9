package atspitest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Fixture is a small accessible application of a toolkit (GTK 3 through
// python3-gi, Qt 5 through python3-pyqt5) that changes its widgets on
// command, so a test knows when each change happened: a window titled as
// asked with an "Install" button (disabled at first), a "Remember me"
// check box, a text field named "Name", a progress bar named "Download"
// and a list named "Files". Commands, one a line on its standard input:
//
//	progress F     the progress bar's fraction (0..1)
//	enable, disable the Install button
//	check, uncheck the check box
//	text S         the text field's content
//	focus          the keyboard focus to the text field
//	row S          a row added to the list
//	dialog T       a dialog titled T with a Done button
//	close T        that dialog destroyed (none: nothing)
//
// After each command the application prints "applied N", N its
// CLOCK_MONOTONIC time in nanoseconds once the change is made (the
// toolkit emits the accessibility events synchronously), which Do
// returns for latency measurements.
type Fixture struct {
	app   *exec.Cmd
	in    io.WriteCloser
	lines chan string
	mu    sync.Mutex
	err   bytes.Buffer
	done  chan struct{}
}

// Toolkits a Fixture can be written in.
const (
	GTK = "gtk"
	Qt  = "qt"
)

// StartFixture starts the fixture of toolkit ("gtk" or "qt") in the
// session with its window titled title, and waits until it says it is
// ready. It is killed when the test ends.
func (s *Session) StartFixture(t testing.TB, toolkit, title string) *Fixture {
	t.Helper()
	script := fixtureProtocol + gtkFixture
	env := s.Env()
	if toolkit == Qt {
		script = fixtureProtocol + qtFixture
		env = append(env, "QT_ACCESSIBILITY=1", "QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1", "QT_QPA_PLATFORM=xcb")
	}
	path := writeScript(t, toolkit+"_fixture.py", []byte(script))
	f := &Fixture{lines: make(chan string, 64)}
	f.app = exec.Command(Python(), path, title)
	f.app.Env = env
	f.app.Stderr = lockedWriter{&f.mu, &f.err}
	in, err := f.app.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.app.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	f.in = in
	f.done, err = startInGroup(t, f.app, func(error) {})
	if err != nil {
		t.Fatalf("start the %s fixture (python3): %v", toolkit, err)
	}
	t.Cleanup(func() { _ = f.in.Close() }) // runs before startInGroup's kill
	go func() {
		defer close(f.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f.lines <- sc.Text()
		}
	}()
	select {
	case l, ok := <-f.lines:
		if !ok || l != "ready" {
			t.Fatalf("the %s fixture did not start: %q (stderr: %s)", toolkit, l, f.Stderr())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the %s fixture did not say ready within 30s (stderr: %s)", toolkit, f.Stderr())
	}
	return f
}

// Python is Debian's python3, whose modules python3-gi and python3-pyqt5
// install (a python3 of a version manager earlier on PATH lacks them).
func Python() string {
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	return "python3"
}

// Stderr is what the fixture wrote to its standard error.
func (f *Fixture) Stderr() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err.String()
}

// Do sends one command and returns when the fixture applied it, with its
// CLOCK_MONOTONIC time then.
func (f *Fixture) Do(ctx context.Context, cmd string) (time.Duration, error) {
	if _, err := io.WriteString(f.in, cmd+"\n"); err != nil {
		return 0, fmt.Errorf("fixture command %q: %w (stderr: %s)", cmd, err, f.Stderr())
	}
	select {
	case l, ok := <-f.lines:
		if !ok {
			return 0, fmt.Errorf("fixture command %q: the fixture exited (stderr: %s)", cmd, f.Stderr())
		}
		v, found := strings.CutPrefix(l, "applied ")
		if !found {
			return 0, fmt.Errorf("fixture command %q: it said %q (stderr: %s)", cmd, l, f.Stderr())
		}
		ns, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("fixture command %q: %q: %w", cmd, l, err)
		}
		return time.Duration(ns), nil
	case <-ctx.Done():
		return 0, fmt.Errorf("fixture command %q: %w (stderr: %s)", cmd, ctx.Err(), f.Stderr())
	}
}

// Monotonic is this process's CLOCK_MONOTONIC time, comparable with what
// Do returns.
func Monotonic() time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return time.Duration(ts.Nano())
}

// fixtureProtocol is the fixtures' side of Do, the same in both
// toolkits; it comes before a toolkit's program, which defines commands
// (a command's name -> what it does with its argument), calls apply with
// each line of stdin, then applied once the toolkit has run what the
// change queued, and ready once its window is up.
const fixtureProtocol = `import sys, time

def apply(line):
    cmd, _, arg = line.partition(" ")
    if cmd in commands:
        commands[cmd](arg)

def applied():
    print("applied", time.clock_gettime_ns(time.CLOCK_MONOTONIC), flush=True)

def ready():
    print("ready", flush=True)
    return False
`

const gtkFixture = `import gi
gi.require_version("Gtk", "3.0")
from gi.repository import Gtk, GLib

title = sys.argv[1] if len(sys.argv) > 1 else "Acu Fixture"
win = Gtk.Window(title=title)
win.set_default_size(420, 360)
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
win.add(box)
install = Gtk.Button(label="Install")
install.set_sensitive(False)
box.pack_start(install, False, False, 0)
check = Gtk.CheckButton(label="Remember me")
box.pack_start(check, False, False, 0)
entry = Gtk.Entry()
entry.get_accessible().set_name("Name")
box.pack_start(entry, False, False, 0)
bar = Gtk.ProgressBar()
bar.get_accessible().set_name("Download")
box.pack_start(bar, False, False, 0)
files = Gtk.ListBox()
files.get_accessible().set_name("Files")
box.pack_start(files, True, True, 0)
win.connect("destroy", Gtk.main_quit)
win.show_all()
dialogs = {}

def focus(_):
    win.present()
    entry.grab_focus()

def add_row(text):
    files.add(Gtk.Label(label=text))
    files.show_all()

def open_dialog(name):
    d = Gtk.Dialog(title=name, transient_for=win)
    d.add_button("Done", 1)
    d.show_all()
    dialogs[name] = d

def close_dialog(name):
    if name in dialogs:
        dialogs.pop(name).destroy()

commands = {
    "progress": lambda arg: bar.set_fraction(float(arg)),
    "enable": lambda arg: install.set_sensitive(True),
    "disable": lambda arg: install.set_sensitive(False),
    "check": lambda arg: check.set_active(True),
    "uncheck": lambda arg: check.set_active(False),
    "text": entry.set_text,
    "focus": focus,
    "row": add_row,
    "dialog": open_dialog,
    "close": close_dialog,
    "quit": lambda arg: Gtk.main_quit(),
}

def on_input(source, cond):
    line = sys.stdin.readline()
    if not line:
        Gtk.main_quit()
        return False
    apply(line.strip())
    # Let the toolkit run what the change queued (its accessibility
    # events), then say when it was applied.
    while Gtk.events_pending():
        Gtk.main_iteration_do(False)
    applied()
    return True

GLib.io_add_watch(sys.stdin, GLib.IO_IN | GLib.IO_HUP, on_input)
GLib.timeout_add(300, ready)
Gtk.main()
`

const qtFixture = `from PyQt5.QtWidgets import (QApplication, QWidget, QVBoxLayout, QPushButton, QCheckBox,
    QLineEdit, QProgressBar, QListWidget, QDialog, QDialogButtonBox)
from PyQt5.QtCore import QSocketNotifier, QTimer

app = QApplication(sys.argv[:1])
title = sys.argv[1] if len(sys.argv) > 1 else "Acu Fixture"
win = QWidget()
win.setWindowTitle(title)
win.resize(420, 360)
lay = QVBoxLayout(win)
install = QPushButton("Install")
install.setEnabled(False)
lay.addWidget(install)
check = QCheckBox("Remember me")
lay.addWidget(check)
entry = QLineEdit()
entry.setAccessibleName("Name")
lay.addWidget(entry)
bar = QProgressBar()
bar.setRange(0, 100)
bar.setValue(0)
bar.setAccessibleName("Download")
lay.addWidget(bar)
files = QListWidget()
files.setAccessibleName("Files")
lay.addWidget(files)
win.show()
dialogs = {}

def focus(_):
    win.activateWindow()
    entry.setFocus()

def open_dialog(name):
    d = QDialog(win)
    d.setWindowTitle(name)
    QVBoxLayout(d).addWidget(QDialogButtonBox(QDialogButtonBox.Ok))
    d.show()
    dialogs[name] = d

def close_dialog(name):
    if name in dialogs:
        d = dialogs.pop(name)
        d.close()
        d.deleteLater()

commands = {
    "progress": lambda arg: bar.setValue(int(round(float(arg) * 100))),
    "enable": lambda arg: install.setEnabled(True),
    "disable": lambda arg: install.setEnabled(False),
    "check": lambda arg: check.setChecked(True),
    "uncheck": lambda arg: check.setChecked(False),
    "text": entry.setText,
    "focus": focus,
    "row": lambda arg: files.addItem(arg),
    "dialog": open_dialog,
    "close": close_dialog,
    "quit": lambda arg: app.quit(),
}

def on_input():
    line = sys.stdin.readline()
    if not line:
        app.quit()
        return
    apply(line.strip())
    app.processEvents()
    applied()

notifier = QSocketNotifier(sys.stdin.fileno(), QSocketNotifier.Read)
notifier.activated.connect(on_input)
QTimer.singleShot(500, ready)
sys.exit(app.exec_())
`
