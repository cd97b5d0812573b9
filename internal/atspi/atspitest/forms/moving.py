#!/usr/bin/env python3
"""A GTK window whose buttons move while a model thinks, for the task
engine's stale-click tests (orchestrator's TestClickOnTheControlNotWhereItWas and
actions' TestPointerOnTheControlNotWhereItWas).

Two buttons, Alpha and Bravo, side by side. Every click and right click is
printed ("alpha clicked", "bravo right") and shown in a label. SIGUSR1 swaps
the buttons' places; SIGUSR2 hides Alpha and moves Bravo where Alpha was.
After either, "moved" is printed once GTK has laid the buttons out and
painted them anew.
"""
import signal
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

GLib.set_prgname("acu-moving")
GLib.set_application_name("acu-moving")

LEFT, RIGHT = (20, 20), (240, 20)

win = Gtk.Window(title="Acu Moving")
win.set_default_size(420, 200)
win.move(0, 0)
fixed = Gtk.Fixed()
win.add(fixed)
last = Gtk.Label(label="last: none")


def report(what):
    print(what, flush=True)
    last.set_text("last: " + what)


def press(_w, ev, name):
    if ev.button == 3:
        report(name + " right")
        return True
    return False


alpha = Gtk.Button(label="Alpha")
bravo = Gtk.Button(label="Bravo")
for b, name in ((alpha, "alpha"), (bravo, "bravo")):
    b.set_size_request(160, 50)
    b.connect("clicked", lambda _w, n=name: report(n + " clicked"))
    b.connect("button-press-event", press, name)
fixed.put(alpha, *LEFT)
fixed.put(bravo, *RIGHT)
fixed.put(last, 20, 120)

want = {}


def announce():
    # The new layout is painted; sync so the X server has drawn it before
    # anyone looks.
    Gdk.Display.get_default().sync()
    print("moved", flush=True)
    return False


def painted(clock):
    clock.disconnect_by_func(painted)
    GLib.idle_add(announce)


def settled():
    for b, (x, y) in want.items():
        a = b.get_allocation()
        if (a.x, a.y) != (x, y):
            return True  # not laid out yet: poll again
    clock = win.get_frame_clock()
    clock.connect("after-paint", painted)
    win.queue_draw()
    return False


def move(places, hide=None):
    want.clear()
    if hide is not None:
        hide.hide()
    for b, (x, y) in places.items():
        fixed.move(b, x, y)
        want[b] = (x, y)
    GLib.timeout_add(20, settled)
    return True


GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, lambda: move({alpha: RIGHT, bravo: LEFT}))
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR2, lambda: move({bravo: LEFT}, hide=alpha))
win.connect("destroy", Gtk.main_quit)
win.show_all()
print("ready", flush=True)
sys.stdout.flush()
Gtk.main()
