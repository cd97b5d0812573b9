package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/api"
)

const actUsage = `[flags] ACTION ARGS...   |   acu act --json FILE|-

Actions (POS is an element id such as btn_ok, X,Y in 0..1000 of the screen
or of --window, or X,Y@WxH: pixels of a screenshot of that size):
  move POS                 click POS [--button right] [--count 2]
  double_click POS         right_click POS          middle_click POS
  mouse_down [POS]         mouse_up [POS]           drag POS POS [POS...]
  scroll [POS] DY [DX]     type TEXT [--at POS]     key COMBO [--hold-ms N] [--repeat N]
  wait MS
The older forms "click X Y", "drag X1 Y1 X2 Y2" and "scroll X Y DY" still work.
Flags go before or after the action ("acu act click btn_ok --settle"); after
"--" everything is the action's ("acu act type -- --at" types "--at").
With a daemon running, actions go through it (POST /v1/actions: settle,
audit on the daemon's session run); without one, or with --local or --crop,
this process runs the same request through the same action service and
gate (the ACU_ACT_* policy, element ids, screenshots); --settle needs the
daemon, and a button mouse_down holds there is released when acu act exits
(hold it across commands with a daemon, or send mouse_down and mouse_up in
one --json request). --dry-run prints the request and sends nothing.`

func runAct(ctx context.Context, e *env, args []string) error {
	var a actCommand
	fs := a.flags(e)
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if a.crop != "" {
		a.local = true
	}
	req, err := a.request(e, fs, rest)
	if err != nil {
		return err
	}
	if a.dry {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(req)
	}
	var resp api.ActResponse
	if client := a.daemon(ctx, e); client != nil {
		client.SetClientName("cli")
		resp, err = client.Act(ctx, req)
	} else {
		resp, err = actInProcess(ctx, e, req, a.crop)
	}
	if err != nil {
		return err
	}
	return a.report(e, resp)
}

// actCommand is `acu act`'s flags.
type actCommand struct {
	display, window, json, button, at, shot, crop string
	count, holdMs, repeat                         int
	settle, diff, printJSON, local, dry           bool
}

func (a *actCommand) flags(e *env) *flag.FlagSet {
	fs := newFlags(e, "act", actUsage)
	fs.StringVar(&a.display, "display", "", "X display (default $DISPLAY, or the daemon's)")
	fs.StringVar(&a.window, "window", "", "X,Y positions are 0..1000 of this window (title substring or window:0x…)")
	fs.StringVar(&a.json, "json", "", "read a whole POST /v1/actions request from FILE (- for stdin)")
	fs.StringVar(&a.button, "button", "", "click, drag, mouse_down/up: left (default), right or middle")
	fs.IntVar(&a.count, "count", 0, "click: 1 to 3")
	fs.StringVar(&a.at, "at", "", "type, key: focus this POS first")
	fs.IntVar(&a.holdMs, "hold-ms", 0, "key: hold each key this long; drag: hold before moving")
	fs.IntVar(&a.repeat, "repeat", 0, "key: press it this many times")
	fs.BoolVar(&a.settle, "settle", false, "after the actions, wait until the screen stops changing (daemon)")
	fs.StringVar(&a.shot, "screenshot", "", "after the actions, save a screenshot to FILE (.png or .jpg; daemon)")
	fs.BoolVar(&a.diff, "diff", false, "print what changed in the element map (daemon)")
	fs.BoolVar(&a.printJSON, "print-json", false, "print the daemon's whole answer as JSON")
	fs.BoolVar(&a.local, "local", false, "do not use a running daemon")
	fs.StringVar(&a.crop, "crop", "", "local only: working area x1,y1,x2,y2 in 0..1000; actions are clamped into it")
	fs.BoolVar(&a.dry, "dry-run", false, "local only: map and validate without sending input")
	return fs
}

// daemon is the running daemon's client, or nil to act in this process
// (--local, --dry-run, or no daemon answers).
func (a *actCommand) daemon(ctx context.Context, e *env) *api.Client {
	if a.local || a.dry {
		return nil
	}
	cl, _, err := newClient(e)
	if err != nil {
		return nil
	}
	hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := cl.Health(hctx); err != nil {
		return nil
	}
	return cl
}

// request is the request the flags and arguments say: --json's, or one
// action from the arguments.
func (a *actCommand) request(e *env, fs *flag.FlagSet, rest []string) (api.ActRequest, error) {
	var req api.ActRequest
	if a.json != "" {
		var r io.Reader = e.stdin
		if a.json != "-" {
			f, err := os.Open(a.json)
			if err != nil {
				return req, err
			}
			defer f.Close()
			r = f
		}
		dec := json.NewDecoder(r)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return req, fmt.Errorf("act --json %s: %w", a.json, err)
		}
	} else {
		if len(rest) == 0 {
			fs.Usage()
			return req, &exitError{code: 2, msg: "acu act: name an action"}
		}
		act, err := cliAction(rest, a.button, a.count, a.at, a.holdMs, a.repeat)
		if err != nil {
			fs.Usage()
			return req, &exitError{code: 2, msg: "acu act: " + err.Error()}
		}
		req.Actions = []api.Action{act}
	}
	if a.display != "" {
		req.Display = a.display
	}
	if a.window != "" {
		req.Window = a.window
	}
	if a.settle && req.Settle == nil {
		req.Settle = &api.SettleOptions{}
	}
	if a.shot != "" {
		format := "png"
		if strings.HasSuffix(a.shot, ".jpg") || strings.HasSuffix(a.shot, ".jpeg") {
			format = "jpeg"
		}
		req.Screenshot = &api.ShotOptions{Format: format}
	}
	req.Diff = req.Diff || a.diff
	return req, nil
}

// report saves the screenshot and prints the answer; an action that failed
// is exit status 1.
func (a *actCommand) report(e *env, resp api.ActResponse) error {
	if a.shot != "" && resp.Screenshot != nil {
		if err := os.WriteFile(a.shot, resp.Screenshot.Data, 0o600); err != nil {
			return err
		}
	}
	if a.printJSON {
		if resp.Screenshot != nil {
			resp.Screenshot.Data = nil
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(resp); err != nil {
			return err
		}
	} else {
		printActResponse(e.stdout, resp, a.shot)
	}
	if !resp.OK {
		return &exitError{code: 1, msg: "acu act: an action failed (see above)"}
	}
	return nil
}

func printActResponse(w io.Writer, r api.ActResponse, shotFile string) {
	for _, x := range r.Results {
		fmt.Fprintf(w, "%s (%.1f ms)\n", x, x.Ms)
	}
	if s := r.Settle; s != nil {
		fmt.Fprintf(w, "settled: %v after %.0f ms (%d changes)\n", s.Settled, s.WaitedMs, s.Changes)
	}
	if s := r.Screenshot; s != nil && shotFile != "" {
		fmt.Fprintf(w, "screenshot: %s (%dx%d, id %s)\n", shotFile, s.Width, s.Height, s.ID)
	}
	if d := r.Diff; d != nil {
		fmt.Fprint(w, d.Text)
	}
	if r.SessionRun != "" {
		fmt.Fprintf(w, "audit: run %s\n", r.SessionRun)
	}
}

// Compiled on first use: package-level work runs in every acu process.
var (
	normPos  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(-?\d+),(-?\d+)$`) })
	pixelPos = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(-?\d+),(-?\d+)@(\d+x\d+)$`) })
	elemPos  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.:-]*$`) })
)

// parsePos reads POS: an element id, X,Y (0..1000) or X,Y@WxH (pixels of a
// screenshot of that size).
func parsePos(s string) (*api.Point, error) {
	if m := pixelPos().FindStringSubmatch(s); m != nil {
		x, _ := strconv.Atoi(m[1])
		y, _ := strconv.Atoi(m[2])
		return &api.Point{X: &x, Y: &y, Image: m[3]}, nil
	}
	if m := normPos().FindStringSubmatch(s); m != nil {
		x, _ := strconv.Atoi(m[1])
		y, _ := strconv.Atoi(m[2])
		return api.Pt(x, y), nil
	}
	if elemPos().MatchString(s) {
		return api.El(s), nil
	}
	return nil, fmt.Errorf("position %q: use an element id (btn_ok), X,Y in 0..1000, or X,Y@WxH for pixels of a screenshot of that size", s)
}

// positions reads the arguments as POS values, also accepting the older
// "X Y" pairs of separate numbers.
func positions(args []string) ([]api.Point, error) {
	var out []api.Point
	for i := 0; i < len(args); i++ {
		if i+1 < len(args) && isInt(args[i]) && isInt(args[i+1]) {
			x, _ := strconv.Atoi(args[i])
			y, _ := strconv.Atoi(args[i+1])
			out = append(out, *api.Pt(x, y))
			i++
			continue
		}
		p, err := parsePos(args[i])
		if err != nil {
			return nil, err
		}
		out = append(out, *p)
	}
	return out, nil
}

func isInt(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

// cliAction turns `acu act KIND ARGS...` into one action of the schema.
func cliAction(args []string, button string, count int, at string, holdMs, repeat int) (api.Action, error) {
	kind, rest := strings.ToLower(args[0]), args[1:]
	a := api.Action{Kind: kind, Button: button, Count: count, HoldMs: holdMs, Repeat: repeat}
	one := func(optional bool) error {
		ps, err := positions(rest)
		if err != nil {
			return err
		}
		switch {
		case len(ps) == 1:
			a.At = &ps[0]
		case len(ps) == 0 && optional:
		default:
			return fmt.Errorf("%s takes one position, got %d", kind, len(ps))
		}
		return nil
	}
	var err error
	switch kind {
	case "double_click", "right_click", "middle_click":
		a.Kind = api.ActClick
		switch kind {
		case "double_click":
			a.Count = 2
		case "right_click":
			a.Button = "right"
		case "middle_click":
			a.Button = "middle"
		}
		err = one(false)
	case api.ActMove, api.ActClick:
		err = one(false)
	case api.ActMouseDown, api.ActMouseUp:
		err = one(true)
	case api.ActDrag:
		a.Path, err = positions(rest)
		if err == nil && len(a.Path) < 2 {
			err = errors.New("drag takes two or more positions")
		}
	case api.ActScroll:
		// scroll [POS] DY [DX], or the older scroll X Y DY.
		var nums []int
		for len(rest) > 0 && isInt(rest[len(rest)-1]) && len(nums) < 3 {
			n, _ := strconv.Atoi(rest[len(rest)-1])
			nums = append([]int{n}, nums...)
			rest = rest[:len(rest)-1]
		}
		switch {
		case len(rest) == 1 && len(nums) >= 1:
			a.At, err = parsePos(rest[0])
			a.DY = nums[0]
			if len(nums) > 1 {
				a.DX = nums[1]
			}
		case len(rest) == 0 && len(nums) == 3:
			a.At, a.DY = api.Pt(nums[0], nums[1]), nums[2]
		case len(rest) == 0 && (len(nums) == 1 || len(nums) == 2):
			a.DY = nums[0]
			if len(nums) == 2 {
				a.DX = nums[1]
			}
		default:
			err = errors.New("scroll takes [POS] DY [DX]")
		}
	case api.ActType:
		a.Text = strings.Join(rest, " ")
	case api.ActKey:
		a.Keys = strings.Join(rest, " ")
	case api.ActWait:
		if len(rest) != 1 || !isInt(rest[0]) {
			return a, errors.New("wait takes milliseconds")
		}
		a.Ms, _ = strconv.Atoi(rest[0])
	default:
		return a, fmt.Errorf("unknown action %q: use one of %s", kind, strings.Join(api.ActionKinds, ", "))
	}
	if err == nil && at != "" && (kind == api.ActType || kind == api.ActKey) {
		a.At, err = parsePos(at)
	}
	return a, err
}

// runElements prints the element map (GET /v1/elements).
func runElements(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "elements", "[--display :99] [--window W] [--json] [--labels out.jpg]")
	dpyF := fs.String("display", "", "X display (default: the daemon's)")
	window := fs.String("window", "", "only elements inside this window")
	asJSON := fs.Bool("json", false, "print the map as JSON")
	labels := fs.String("labels", "", "save a screenshot with each element's id drawn on it to FILE (.jpg or .png)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, _, err := newClient(e)
	if err != nil {
		return err
	}
	q := api.ElementsQuery{Display: *dpyF, Window: *window}
	if *labels != "" {
		q.Labels = true
		format := "png"
		if strings.HasSuffix(*labels, ".jpg") || strings.HasSuffix(*labels, ".jpeg") {
			format = "jpeg"
		}
		q.Shot = &api.ShotOptions{Format: format}
	}
	m, err := c.Elements(ctx, q)
	if err != nil {
		return err
	}
	if *labels != "" && m.Screenshot != nil {
		if err := os.WriteFile(*labels, m.Screenshot.Data, 0o600); err != nil {
			return err
		}
		m.Screenshot.Data = nil
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(m)
	}
	fmt.Fprint(e.stdout, m.Text)
	if !strings.HasSuffix(m.Text, "\n") {
		fmt.Fprintln(e.stdout)
	}
	return nil
}

func init() {
	featureCommands = append(featureCommands, command{"elements", "print the element map (accessibility tree + OCR) with ids to act on", runElements})
}
