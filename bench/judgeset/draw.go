package main

import (
	"fmt"
	"html"
	"image"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jezek/xgb/xproto"
)

func colours(theme string) (fg, bg string) {
	if theme == "dark" {
		return "#e8e8e8", "#1e1f22"
	}
	return "#202020", "#fbfbf8"
}

// draw1 draws one screen and returns it and the target window's
// rectangle (the first window; the whole screen when there is one).
func draw1(s screen) (*image.RGBA, image.Rectangle, error) {
	w, h := 1280*s.scale, 720*s.scale
	if s.app == "chromium" {
		img, err := chromium(s)
		return img, image.Rect(0, 0, w, h), err
	}
	d, err := startX(w, h)
	if err != nil {
		return nil, image.Rectangle{}, err
	}
	defer d.stop()
	var lines []string
	for i := range s.shown {
		lines = append(lines, phrase(s, i))
	}
	if s.number != "" {
		lines = []string{s.number}
	}
	ready, err := client(d, s.app, "target", s, lines, s.cut, image.Pt(20*s.scale, 20*s.scale))
	if err != nil {
		return nil, image.Rectangle{}, err
	}
	title := "^target$"
	if s.app == "mousepad" || s.app == "featherpad" {
		title = "notes.txt" // the editors title their window by the file
	}
	if s.app == "galculator" {
		title = galculatorTitle // it titles its window itself
	}
	target, err := d.geometry(title)
	if err != nil {
		return nil, image.Rectangle{}, err
	}
	if s.app == "featherpad" {
		// Its text cursor blinks while its window is active: take the
		// focus away from every window once it has shown.
		time.Sleep(time.Second)
		if err := xproto.SetInputFocusChecked(d.conn, xproto.InputFocusNone, xproto.WindowNone, xproto.TimeCurrentTime).Check(); err != nil {
			return nil, image.Rectangle{}, fmt.Errorf("take the focus from featherpad: %w", err)
		}
	}
	if _, err := d.settle(ready, 500*time.Millisecond); err != nil {
		return nil, image.Rectangle{}, err
	}
	if s.second != "" {
		var l2 []string
		for _, p := range s.shown2 {
			l2 = append(l2, pairs[p][0])
		}
		l2 = append(l2, s.numbers2...)
		if _, err := client(d, s.second, "other", s, l2, -1, image.Pt(target.Max.X+20*s.scale, 60*s.scale)); err != nil {
			return nil, image.Rectangle{}, err
		}
		if _, err := d.geometry("^other$"); err != nil {
			return nil, image.Rectangle{}, err
		}
	}
	img, err := d.settle(ready, 700*time.Millisecond)
	return img, target, err
}

// client starts app on d showing lines (and pairs[cut][0] cut in half at
// the window's right margin, when cut >= 0) in a window titled title at
// pos, and returns a file that exists once the text is drawn ("" when the
// screen settling is the only sign).
func client(d *display, app, title string, s screen, lines []string, cut int, pos image.Point) (string, error) {
	fg, bg := colours(s.theme)
	px := s.pt * 4 / 3 * s.scale // pixel size: 96 dpi
	gtkEnv := d.env("GDK_SCALE="+strconv.Itoa(s.scale), "GTK_THEME=Adwaita"+map[string]string{"dark": ":dark", "light": ""}[s.theme])
	mark := filepath.Join(d.home, title+".ready")
	cols := 4
	for _, l := range lines {
		cols = max(cols, len(l)+2)
	}
	var script strings.Builder
	script.WriteString(`printf '\033[?25l\033[?7l'; `) // no cursor, no autowrap
	for _, l := range lines {
		fmt.Fprintf(&script, "printf '%%s\\n' %s; ", shq(" "+l))
	}
	if cut >= 0 {
		p := pairs[cut][0]
		keep := len(p) / 2
		// Truncated at the terminal's width, as a status line is.
		fmt.Fprintf(&script, "printf '%%s' %s; ", shq(strings.Repeat(" ", cols-keep)+p[:keep]))
	}
	fmt.Fprintf(&script, "touch %s; exec sleep 100000", shq(mark))
	rows := len(lines) + 2
	geom := fmt.Sprintf("%dx%d+%d+%d", cols, rows, pos.X, pos.Y)
	switch app {
	case "xterm":
		args := []string{"-T", title, "-geometry", geom, "-fg", fg, "-bg", bg, "+sb", "-bw", "0", "-b", strconv.Itoa(4 * s.scale)}
		if s.font == "bitmap" {
			// The misc-fixed bitmap fonts nearest the size.
			f := map[int]string{8: "6x13", 10: "7x14", 12: "9x15", 16: "10x20"}[s.pt]
			if s.scale == 2 {
				f = map[int]string{8: "10x20", 10: "12x24", 12: "12x24", 16: "12x24"}[s.pt]
			}
			args = append(args, "-fn", f)
		} else {
			args = append(args, "-fa", "DejaVu Sans Mono", "-fs", strconv.Itoa(s.pt*s.scale))
		}
		return mark, d.start(d.env(), "xterm", append(args, "-e", "sh", "-c", script.String())...)
	case "urxvt":
		args := []string{"-title", title, "-geometry", geom, "-fg", fg, "-bg", bg, "+sb", "-b", strconv.Itoa(4 * s.scale),
			"-fn", fmt.Sprintf("xft:DejaVu Sans Mono:pixelsize=%d", px), "-e", "sh", "-c", script.String()}
		return mark, d.start(d.env(), "urxvt", args...)
	case "lxterminal":
		dir := filepath.Join(d.home, ".config", "lxterminal")
		os.MkdirAll(dir, 0o755)
		conf := fmt.Sprintf("[general]\nfontname=DejaVu Sans Mono %d\nbgcolor=%s\nfgcolor=%s\nhidescrollbar=true\nhidemenubar=true\nhideclosebutton=true\ncursorblinks=false\ndisallowbold=false\n", s.pt, bg, fg)
		if err := os.WriteFile(filepath.Join(dir, "lxterminal.conf"), []byte(conf), 0o644); err != nil {
			return "", err
		}
		return mark, d.start(gtkEnv, "lxterminal", "--title="+title, fmt.Sprintf("--geometry=%dx%d", cols, rows), "-e", "sh -c "+shq(script.String()))
	case "zenity", "yad":
		var b strings.Builder
		for i, l := range lines {
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString(html.EscapeString(l))
		}
		text := fmt.Sprintf(`<span font="DejaVu Sans %d">%s</span>`, s.pt, b.String())
		if app == "zenity" {
			return "", d.start(gtkEnv, "zenity", "--info", "--title="+title, "--text="+text, "--no-wrap", "--ok-label=Close")
		}
		return "", d.start(gtkEnv, "yad", "--title="+title, "--text="+text, "--button=Close:0", "--posx="+strconv.Itoa(pos.X), "--posy="+strconv.Itoa(pos.Y), "--borders=12")
	case "mousepad":
		file := filepath.Join(d.home, "notes.txt")
		if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			return "", err
		}
		return "", d.start(append(gtkEnv, "DBUS_SESSION_BUS_ADDRESS=disabled:"), "mousepad", file)
	case "galculator":
		// Its display shows the number it remembers from its last run,
		// in the font and colours of its configuration (basic mode).
		dir := filepath.Join(d.home, ".config", "galculator")
		os.MkdirAll(dir, 0o755)
		fgd, bgd := fg, bg
		if s.theme == "light" {
			bgd = "#ffffff"
		}
		conf := fmt.Sprintf("[general]\ndisplay_bkg_color=\"%s\"\ndisplay_result_font=\"DejaVu Sans %d\"\ndisplay_result_color=\"%s\"\n"+
			"display_stack_color=\"%s\"\ndisplay_module_active_color=\"%s\"\ndisplay_module_inactive_color=\"#808080\"\n"+
			"remembers_display=true\nremembered_valuex=\"%s\"\n", bgd, s.pt, fgd, fgd, fgd, lines[0])
		if err := os.WriteFile(filepath.Join(dir, "galculator.conf"), []byte(conf), 0o644); err != nil {
			return "", err
		}
		return "", d.start(gtkEnv, "galculator")
	case "featherpad":
		file := filepath.Join(d.home, "notes.txt")
		if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			return "", err
		}
		dir := filepath.Join(d.home, ".config", "featherpad")
		os.MkdirAll(dir, 0o755)
		conf := fmt.Sprintf("[text]\nfont=\"DejaVu Sans Mono,%d,-1,5,50,0,0,0,0,0\"\ndarkColorScheme=%v\n\n[window]\nsize=@Size(1000 560)\nstartSize=@Size(1000 560)\n",
			s.pt, s.theme == "dark")
		if err := os.WriteFile(filepath.Join(dir, "fp.conf"), []byte(conf), 0o644); err != nil {
			return "", err
		}
		return "", d.start(d.env("QT_SCALE_FACTOR="+strconv.Itoa(s.scale), "QT_QPA_PLATFORM=xcb", "XDG_RUNTIME_DIR="+d.home), "featherpad", file)
	}
	return "", fmt.Errorf("unknown app %q", app)
}

func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
