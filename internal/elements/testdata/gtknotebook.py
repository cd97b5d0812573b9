# A GTK 3 preferences dialog for acu's tests, shaped like lxterminal's: a
# notebook with the tabs "Style" and "Display" (whose tabs have no
# accessible action, so a click on one is a pointer click) and on the
# Display page an entry named "Scrollback lines" holding "1000".
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

GLib.set_prgname("acu-gtknotebook")
win = Gtk.Window(title=sys.argv[1] if len(sys.argv) > 1 else "Acu Preferences")
book = Gtk.Notebook()
book.append_page(Gtk.Label(label="Terminal font"), Gtk.Label(label="Style"))
page = Gtk.Box(orientation=Gtk.Orientation.HORIZONTAL, spacing=6)
entry = Gtk.Entry()
entry.set_text("1000")
entry.get_accessible().set_name("Scrollback lines")
page.pack_start(Gtk.Label(label="Scrollback lines"), False, False, 0)
page.pack_start(entry, True, True, 0)
book.append_page(page, Gtk.Label(label="Display"))
win.add(book)
win.set_default_size(500, 200)
win.connect("destroy", Gtk.main_quit)
win.show_all()
Gtk.main()
