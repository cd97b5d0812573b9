package portal

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// gtkClip is a GTK 3 window (python3-gi) with one entry: it prints
// "ready" once focused, "text T" whenever the entry's text changes, and
// on "copy T" read from stdin puts T on the clipboard as GTK copies.
const gtkClip = `
import gi, sys
gi.require_version("Gtk", "3.0")
from gi.repository import Gtk, Gdk, GLib
win = Gtk.Window(title="acu-clip")
entry = Gtk.Entry()
win.add(entry)
entry.connect("changed", lambda e: print("text " + e.get_text(), flush=True))
win.connect("focus-in-event", lambda *a: print("ready", flush=True))
clip = Gtk.Clipboard.get(Gdk.SELECTION_CLIPBOARD)
def command(src, cond):
    line = sys.stdin.readline()
    if not line:
        Gtk.main_quit()
        return False
    if line.startswith("copy "):
        clip.set_text(line[5:].rstrip("\n"), -1)
        clip.store()
        print("copied", flush=True)
    return True
GLib.io_add_watch(sys.stdin, GLib.IO_IN, command)
win.connect("destroy", Gtk.main_quit)
win.show_all()
Gtk.main()
`

// gtkApp is a running gtkClip: its stdout lines, and its stdin.
type gtkApp struct {
	lines chan string
	in    *os.File
}

// startGTKClip starts gtkClip on the session and waits until it has the
// keyboard focus.
func startGTKClip(t *testing.T, ctx context.Context, h *Headless) *gtkApp {
	t.Helper()
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import gi; gi.require_version('Gtk', '3.0'); from gi.repository import Gtk").Run(); err != nil {
		if os.Getenv("ACU_REQUIRE_PORTAL") == "1" {
			t.Fatalf("python3-gi with GTK 3 is not installed: %v", err)
		}
		t.Skipf("python3-gi with GTK 3 is not installed: %v", err)
	}
	script := filepath.Join(t.TempDir(), "clip.py")
	if err := os.WriteFile(script, []byte(gtkClip), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, script)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8", "GDK_BACKEND=wayland", "NO_AT_BRIDGE=1"}, h.Env()...)
	stdin, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin = stdin
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the GTK app: %v", err)
	}
	stdin.Close()
	app := &gtkApp{lines: make(chan string, 256), in: w}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			app.lines <- sc.Text()
		}
		close(app.lines)
	}()
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { w.Close(); _ = cmd.Process.Kill(); <-done })
	app.await(t, ctx, "ready")
	return app
}

// await reads the app's lines until one equals want.
func (a *gtkApp) await(t *testing.T, ctx context.Context, want string) {
	t.Helper()
	var seen []string
	for {
		select {
		case l, ok := <-a.lines:
			if !ok {
				t.Fatalf("the GTK app exited waiting for %q; it printed %q", want, seen)
			}
			if l == want {
				return
			}
			seen = append(seen, l)
		case <-ctx.Done():
			t.Fatalf("the GTK app never printed %q; it printed %q", want, seen)
		}
	}
}

// TestClipboardRoundTrip: text acu puts on the clipboard through mutter's
// remote desktop is what ctrl+v pastes into a GTK entry, and what a GTK
// app copies is what acu reads.
func TestClipboardRoundTrip(t *testing.T) {
	h, s := startSession(t)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	app := startGTKClip(t, ctx, h)

	want := "from acu × 日本 🙂"
	if err := s.SetClipboard(ctx, want); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Clipboard(ctx); err != nil || got != want {
		t.Fatalf("Clipboard() after SetClipboard = %q, %v; want %q", got, err, want)
	}
	if err := s.Key(ctx, "ctrl+v"); err != nil {
		t.Fatal(err)
	}
	app.await(t, ctx, "text "+want)

	copied := "copied in GTK ✓ é"
	if _, err := app.in.WriteString("copy " + copied + "\n"); err != nil {
		t.Fatal(err)
	}
	app.await(t, ctx, "copied")
	// mutter announces the new owner to the session; until then the
	// session may still take itself for the owner.
	var got string
	for ctx.Err() == nil {
		var err error
		if got, err = s.Clipboard(ctx); err == nil && got == copied {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("Clipboard() after the GTK app copied = %q, want %q", got, copied)
}

// TestTypeOutsideTheLayout types text with characters the session's US
// layout lacks into a GTK entry: the layout's characters go as keys, the
// rest as pastes, in order, and the clipboard holds what it held before.
func TestTypeOutsideTheLayout(t *testing.T) {
	h, s := startSession(t)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	app := startGTKClip(t, ctx, h)
	if err := s.SetClipboard(ctx, "kept"); err != nil {
		t.Fatal(err)
	}
	want := "Grüße × 日本 🙂 ok, é!"
	if err := s.Type(ctx, want+"\nx"); err != nil {
		t.Fatal(err)
	}
	// Return only activates the entry; x is typed after the paste.
	app.await(t, ctx, "text "+want+"x")
	if got, err := s.Clipboard(ctx); err != nil || got != "kept" {
		t.Errorf("the clipboard after typing = %q, %v; want %q, what it held before", got, err, "kept")
	}
}

func TestSplitLayout(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []run
	}{
		{"abc", []run{{"abc", true}}},
		{"é", []run{{"é", false}}},
		{"a é ü b", []run{{"a ", true}, {"é ü b", false}}},
		{"日本 ", []run{{"日本 ", false}}},
		{"x\n×y\tz", []run{{"x\n", true}, {"×y", false}, {"\tz", true}}},
		{"a\n\nb", []run{{"a\n\nb", true}}},
	} {
		got := splitLayout(tc.in)
		if len(got) != len(tc.want) {
			t.Errorf("splitLayout(%q) = %+v, want %+v", tc.in, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("splitLayout(%q) = %+v, want %+v", tc.in, got, tc.want)
				break
			}
		}
	}
}
