#!/usr/bin/env python3
"""Draws one scene of the judge benchmark set with Tk on $DISPLAY.

usage: scenes.py SCENE MARKFILE
Creates MARKFILE once everything is drawn. Used by bench_gen_test.go
(go test ./internal/judge -run TestGenerateBenchSet -update).
"""
import sys
import tkinter as tk
from tkinter import ttk

scene, mark = sys.argv[1], sys.argv[2]
root = tk.Tk()
W, H = root.winfo_screenwidth(), root.winfo_screenheight()

# A desktop: a full-screen window in a desktop colour with a top panel.
root.overrideredirect(True)
root.geometry(f"{W}x{H}+0+0")
root.configure(bg="#2f5d8a")
panel = tk.Frame(root, bg="#1e1e1e", height=24)
panel.place(x=0, y=0, width=W, height=24)
tk.Label(panel, text="Activities", fg="#dddddd", bg="#1e1e1e", font=("DejaVu Sans", 9)).place(x=8, y=3)
tk.Label(panel, text="Sun 14:02", fg="#dddddd", bg="#1e1e1e", font=("DejaVu Sans", 9)).place(x=W // 2 - 30, y=3)

style = ttk.Style(root)
style.theme_use("clam")


def window(title, x, y, w, h, bg="#f0f0f0"):
    """An application window with a drawn title bar, as a window manager would."""
    frame = tk.Frame(root, bg="#c8c8c8", bd=1, relief="solid")
    frame.place(x=x, y=y, width=w, height=h)
    bar = tk.Frame(frame, bg="#d9d9d9", height=26)
    bar.pack(fill="x")
    tk.Label(bar, text=title, bg="#d9d9d9", fg="#222222", font=("DejaVu Sans", 10, "bold")).pack(side="left", padx=8, pady=3)
    tk.Label(bar, text="\u2715", bg="#d9d9d9", fg="#444444", font=("DejaVu Sans", 10)).pack(side="right", padx=8)
    body = tk.Frame(frame, bg=bg)
    body.pack(fill="both", expand=True)
    return body


def progress(pct, done):
    body = window("Software Update", 300, 180, 440, 210)
    tk.Label(body, text="Downloading acu-1.4.2.tar.gz", bg="#f0f0f0", font=("DejaVu Sans", 11)).pack(anchor="w", padx=16, pady=(16, 6))
    bar = ttk.Progressbar(body, orient="horizontal", length=400, mode="determinate", maximum=100, value=pct)
    bar.pack(padx=16, pady=6)
    status = "Download complete" if done else f"{pct}% \u2014 12.4 MB of 31.0 MB, about 20 seconds left"
    tk.Label(body, text=f"{pct}%" if done else status, bg="#f0f0f0", font=("DejaVu Sans", 10)).pack(anchor="w", padx=16)
    if done:
        tk.Label(body, text=status, bg="#f0f0f0", fg="#1a7f37", font=("DejaVu Sans", 11, "bold")).pack(anchor="w", padx=16, pady=4)
    btns = tk.Frame(body, bg="#f0f0f0")
    btns.pack(side="bottom", fill="x", pady=10)
    ttk.Button(btns, text="Close" if done else "Cancel").pack(side="right", padx=16)


def browser(loaded):
    body = window("Quarterly Report - Web Browser" if loaded else "Loading... - Web Browser", 60, 50, 900, 520, bg="#ffffff")
    nav = tk.Frame(body, bg="#ececec", height=36)
    nav.pack(fill="x")
    tk.Label(nav, text="\u2190  \u2192  " + ("\u21bb" if loaded else "\u2715"), bg="#ececec", font=("DejaVu Sans", 11)).pack(side="left", padx=8)
    url = tk.Label(nav, text="https://intranet.example.com/reports/q3", bg="#ffffff", anchor="w", font=("DejaVu Sans", 10), relief="solid", bd=1)
    url.pack(side="left", fill="x", expand=True, padx=8, pady=5)
    if not loaded:
        strip = ttk.Progressbar(body, orient="horizontal", mode="determinate", maximum=100, value=35)
        strip.pack(fill="x")
        tk.Label(body, text="Loading...", bg="#ffffff", fg="#666666", font=("DejaVu Sans", 14)).pack(expand=True)
        return
    tk.Label(body, text="Quarterly Report", bg="#ffffff", fg="#111111", font=("DejaVu Serif", 22, "bold")).pack(anchor="w", padx=30, pady=(24, 8))
    for line in [
        "Revenue grew 12% over the previous quarter, driven by the new desktop agents.",
        "Operating costs stayed flat; vision model spend fell to $41 per month.",
        "Next quarter: ship the smart wait engine to every customer.",
    ]:
        tk.Label(body, text=line, bg="#ffffff", fg="#333333", font=("DejaVu Sans", 11)).pack(anchor="w", padx=30, pady=3)
    tk.Label(body, text="Download PDF", bg="#ffffff", fg="#1a5fb4", font=("DejaVu Sans", 11, "underline")).pack(anchor="w", padx=30, pady=12)


def editor(dialog, failed=False):
    body = window("notes.md - Text Editor", 40, 40, 720, 480, bg="#ffffff")
    txt = tk.Text(body, font=("DejaVu Sans Mono", 11), bd=0, height=20)
    txt.insert("1.0", "# Meeting notes\n\n- export the slides as PDF\n- send the report to the team\n")
    txt.pack(fill="both", expand=True, padx=6, pady=6)
    if not dialog:
        return
    d = window("Export", 330, 220, 360, 200)
    row = tk.Frame(d, bg="#f0f0f0")
    row.pack(fill="x", padx=16, pady=16)
    mark_ = "\u2716" if failed else "\u2714"
    color = "#c01c28" if failed else "#26a269"
    tk.Label(row, text=mark_, fg=color, bg="#f0f0f0", font=("DejaVu Sans", 28)).pack(side="left")
    msg = "Export failed" if failed else "Export finished"
    tk.Label(row, text=msg, bg="#f0f0f0", font=("DejaVu Sans", 13, "bold")).pack(side="left", padx=12)
    tk.Label(d, text="notes.pdf could not be written" if failed else "Saved to ~/Documents/notes.pdf", bg="#f0f0f0", font=("DejaVu Sans", 10)).pack(anchor="w", padx=16)
    ttk.Button(d, text="OK").pack(side="right", padx=16, pady=10)


def ide(ready):
    """A dark-theme editor: coloured code, a low-contrast comment, a blue
    status bar with small white text and a toast in the corner."""
    body = window("main.go - Code", 30, 40, 960, 540, bg="#1e1e1e")
    code = tk.Text(body, font=("DejaVu Sans Mono", 10), bd=0, bg="#1e1e1e", fg="#d4d4d4", height=22, highlightthickness=0)
    code.tag_configure("kw", foreground="#569cd6")
    code.tag_configure("str", foreground="#ce9178")
    code.tag_configure("cm", foreground="#6a9955")
    for text, tag in [
        ("package ", "kw"), ("main\n\n", None),
        ("import ", "kw"), ('"fmt"\n\n', "str"),
        ("// TODO: remove retry hack\n", "cm"),
        ("func ", "kw"), ("main() {\n", None),
        ("\tfmt.Println(", None), ('"hello, acu"', "str"), (")\n}\n", None),
    ]:
        code.insert("end", text, tag or ())
    code.pack(fill="both", expand=True, padx=8, pady=8)
    status = tk.Frame(body, bg="#007acc", height=22)
    status.pack(fill="x", side="bottom")
    tk.Label(status, text="Ready" if ready else "Indexing... 37%", bg="#007acc", fg="#ffffff", font=("DejaVu Sans", 9)).pack(side="left", padx=8)
    tk.Label(status, text="Ln 5, Col 1   UTF-8   Go", bg="#007acc", fg="#ffffff", font=("DejaVu Sans", 9)).pack(side="right", padx=8)
    toast = tk.Frame(body, bg="#252526", highlightbackground="#454545", highlightthickness=1)
    toast.place(relx=1.0, rely=1.0, x=-16, y=-34, anchor="se", width=330, height=64)
    tk.Label(toast, text="Repository cloned" if ready else "Cloning repository...", bg="#252526", fg="#cccccc", font=("DejaVu Sans", 10)).pack(anchor="w", padx=10, pady=(8, 2))
    tk.Label(toast, text="Open it in a new window?" if ready else "github.com/acu-dev/acu", bg="#252526", fg="#8b8b8b", font=("DejaVu Sans", 9)).pack(anchor="w", padx=10)


scenes = {
    "ide-indexing": lambda: ide(False),
    "ide-ready": lambda: ide(True),
    "desktop": lambda: None,
    "progress-40": lambda: progress(40, False),
    "progress-100": lambda: progress(100, True),
    "page-loading": lambda: browser(False),
    "page-loaded": lambda: browser(True),
    "dialog-absent": lambda: editor(False),
    "dialog-present": lambda: editor(True),
    "dialog-failed": lambda: editor(True, failed=True),
}
scenes[scene]()


def ready():
    root.update_idletasks()
    root.update()
    open(mark, "w").close()


root.after(500, ready)
root.mainloop()
