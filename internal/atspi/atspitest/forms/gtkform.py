# A GTK 3 form for acu's tests: an entry named "Value" and a "Submit"
# button (or Return in the entry). Submit prints the entry's text on a line of its own and clears
# the entry, so a test reads what the application itself received.
import sys
import time

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

sys.stdout.reconfigure(encoding="utf-8")
GLib.set_prgname("acu-gtkform")
win = Gtk.Window(title=sys.argv[1] if len(sys.argv) > 1 else "Acu GTK Form")
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
entry = Gtk.Entry()
entry.get_accessible().set_name("Value")
button = Gtk.Button(label="Submit")


def submit(_):
    print(entry.get_text(), flush=True)
    entry.set_text("")


def stall(_, event):
    # F5 stalls the application for 3 s, as a busy one does: a test
    # types behind it to see that nothing is lost.
    if event.keyval == Gdk.KEY_F5:
        time.sleep(3)
    return False


win.connect("key-press-event", stall)
button.connect("clicked", submit)
entry.connect("activate", submit)
box.pack_start(entry, False, False, 0)
box.pack_start(button, False, False, 0)
win.add(box)
win.set_default_size(500, 100)
win.connect("destroy", Gtk.main_quit)
win.show_all()
entry.grab_focus()
Gtk.main()
