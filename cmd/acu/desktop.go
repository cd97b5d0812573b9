package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/acu-dev/acu/internal/api"
)

func init() {
	featureCommands = append(featureCommands,
		command{"windows", "list windows; focus, close, move, resize, minimize or maximize one", runWindows},
		command{"launch", "start an application (desktop entry or argv) on the display", runLaunch},
		command{"clip", "read or set the clipboard (text or PNG)", runClip})
}

func runWindows(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "windows", "[list] | focus|close|minimize|maximize ID | move ID X Y | resize ID W H  [flags]")
	dpy := fs.String("display", "", "X display (default: the daemon's)")
	asJSON := fs.Bool("json", false, "print JSON")
	kill := fs.Bool("kill", false, "with close: disconnect the client if it does not close")
	sub := "list"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	var id string
	if sub != "list" {
		if len(pos) == 0 {
			fs.Usage()
			return fmt.Errorf("%s needs a window id (see acu windows)", sub)
		}
		id, pos = pos[0], pos[1:]
	} else if len(pos) > 0 {
		return fmt.Errorf("windows list takes no arguments, got %q", pos)
	}
	cl, _, err := newClient(e)
	if err != nil {
		return err
	}
	if sub == "list" {
		l, err := cl.Windows(ctx, *dpy)
		if err != nil || *asJSON {
			return jsonOut{e.stdout}.print(l, err)
		}
		return printWindows(e.stdout, l)
	}
	req, err := windowOpArgs(fs, sub, pos, api.WindowOp{Display: *dpy, Kill: *kill})
	if err != nil {
		return err
	}
	return jsonOut{e.stdout}.print(cl.WindowOp(ctx, id, sub, req))
}

// windowOpArgs completes req with the arguments of window operation sub
// after the window id: x y for move, w h for resize, none for the rest.
func windowOpArgs(fs *flag.FlagSet, sub string, pos []string, req api.WindowOp) (api.WindowOp, error) {
	nums := func(names ...string) ([]int, error) {
		if len(pos) != len(names) {
			fs.Usage()
			return nil, fmt.Errorf("%s needs %s after the window id (negative values after --)", sub, strings.Join(names, " and "))
		}
		out := make([]int, len(names))
		for i, a := range pos {
			var err error
			if out[i], err = strconv.Atoi(a); err != nil {
				return nil, fmt.Errorf("%s: %s must be a whole number of pixels, got %q", sub, names[i], a)
			}
		}
		return out, nil
	}
	switch sub {
	case api.WindowMove:
		v, err := nums("x", "y")
		if err != nil {
			return req, err
		}
		req.X, req.Y = &v[0], &v[1]
	case api.WindowResize:
		v, err := nums("w", "h")
		if err != nil {
			return req, err
		}
		req.W, req.H = &v[0], &v[1]
	case api.WindowFocus, api.WindowClose, api.WindowMinimize, api.WindowMaximize:
		if len(pos) > 0 {
			return req, fmt.Errorf("%s takes only a window id, got also %q", sub, pos)
		}
	default:
		fs.Usage()
		return req, fmt.Errorf("unknown windows command %q", sub)
	}
	return req, nil
}

func printWindows(w io.Writer, l api.WindowList) error {
	wm := l.WM
	if wm == "" {
		wm = "none"
	}
	fmt.Fprintf(w, "display %s, window manager: %s\n", l.Display, wm)
	if l.Note != "" {
		fmt.Fprintf(w, "note: %s\n", l.Note)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tGEOMETRY\tSTATE\tPID\tCLASS\tTITLE")
	for _, x := range l.Windows {
		var st []string
		for _, f := range []struct {
			on   bool
			name string
		}{{x.Focused, "focused"}, {x.Minimized, "minimized"}, {x.Maximized, "maximized"}} {
			if f.on {
				st = append(st, f.name)
			}
		}
		if len(st) == 0 {
			st = []string{"-"}
		}
		pid := "-"
		if x.PID != 0 {
			pid = strconv.Itoa(x.PID)
		}
		geom := fmt.Sprintf("%dx%d+%d+%d", x.W, x.H, x.X, x.Y)
		if l.Note != "" && x.W == 0 && x.H == 0 {
			geom = "-" // the compositor gives none (the note says so)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", x.ID, geom, strings.Join(st, ","), pid, x.Class, x.Title)
	}
	return tw.Flush()
}

func runLaunch(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "launch", "[flags] NAME | [flags] -- PROGRAM ARGS...")
	dpy := fs.String("display", "", "X display (default: the daemon's)")
	wait := fs.Bool("wait", false, "wait for the application's window and print it")
	timeout := fs.Float64("timeout", 0, "with --wait: seconds to wait for the window (default 10)")
	var setEnv map[string]string
	fs.Func("env", "NAME=VALUE: set a variable for the program (repeatable); the daemon's secrets are never passed on", func(v string) error {
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" {
			return fmt.Errorf("--env wants NAME=VALUE, got %q", v)
		}
		if setEnv == nil {
			setEnv = map[string]string{}
		}
		setEnv[k] = val
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	req := api.LaunchRequest{Display: *dpy, WaitWindow: *wait, Timeout: *timeout, Env: setEnv}
	dash := len(args) > 0 && len(fs.Args()) < len(args) && args[len(args)-len(fs.Args())-1] == "--"
	switch {
	case dash && fs.NArg() > 0:
		req.Argv = fs.Args()
	case !dash && fs.NArg() == 1:
		req.DesktopEntry = fs.Arg(0)
	default:
		fs.Usage()
		return fmt.Errorf("launch needs one desktop entry name, or -- and a program with its arguments")
	}
	cl, _, err := newClient(e)
	if err != nil {
		return err
	}
	return jsonOut{e.stdout}.print(cl.Launch(ctx, req))
}

func runClip(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "clip", "get [--image out.png] | set [--image in.png] [TEXT]  (set reads TEXT from stdin when not given)")
	dpy := fs.String("display", "", "X display (default: the daemon's)")
	sel := fs.String("selection", "clipboard", "clipboard or primary")
	img := fs.String("image", "", "get: write the PNG image to this file; set: put this PNG file on the clipboard")
	if len(args) == 0 || (args[0] != "get" && args[0] != "set") {
		fs.Usage()
		return fmt.Errorf("clip needs get or set")
	}
	sub := args[0]
	text, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return err
	}
	if sub == "get" && len(text) > 0 {
		return fmt.Errorf("clip get takes no arguments, got %q", text)
	}
	cl, _, err := newClient(e)
	if err != nil {
		return err
	}
	if sub == "get" {
		return clipGet(ctx, e, cl, *dpy, *sel, *img)
	}
	return clipSet(ctx, e, cl, *dpy, *sel, *img, text)
}

// clipGet writes the clipboard's text to stdout, or its image to the
// file img.
func clipGet(ctx context.Context, e *env, cl *api.Client, dpy, sel, img string) error {
	typ := api.ClipText
	if img != "" {
		typ = api.ClipPNG
	}
	c, err := cl.GetClipboard(ctx, dpy, sel, typ)
	if err != nil {
		return err
	}
	if img != "" {
		if err := os.WriteFile(img, c.ImagePNG, 0o644); err != nil {
			return fmt.Errorf("write the clipboard image: %w", err)
		}
		fmt.Fprintf(e.stderr, "acu: wrote %d bytes of PNG to %s\n", len(c.ImagePNG), img)
		return nil
	}
	_, err = io.WriteString(e.stdout, c.Text)
	return err
}

// clipSet puts the PNG file img, the words of text or stdin on the
// clipboard.
func clipSet(ctx context.Context, e *env, cl *api.Client, dpy, sel, img string, text []string) error {
	var err error
	req := api.Clipboard{Display: dpy, Selection: sel}
	switch {
	case img != "":
		if len(text) > 0 {
			return fmt.Errorf("clip set takes --image or text, not both")
		}
		if req.ImagePNG, err = os.ReadFile(img); err != nil {
			return fmt.Errorf("read the image: %w", err)
		}
	case len(text) > 0:
		req.Text = strings.Join(text, " ")
	default:
		b, err := io.ReadAll(io.LimitReader(e.stdin, 64<<20))
		if err != nil {
			return fmt.Errorf("read text from stdin: %w", err)
		}
		req.Text = string(b)
	}
	_, err = cl.SetClipboard(ctx, req)
	return err
}

// parseInterleaved parses flags wherever they stand among the positional
// arguments it returns (Go's flag package stops at the first of them);
// everything after "--" is positional, and so is a negative number
// ("acu act scroll -3").
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		for len(args) > 0 && negNumber().MatchString(args[0]) {
			pos, args = append(pos, args[0]), args[1:]
		}
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// negNumber matches a negative number or position, which is an argument,
// not a flag: -3, -10,20, -5,-5@960x540.
var negNumber = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-\d+(,-?\d+)?(@\d+x\d+)?$`) })
