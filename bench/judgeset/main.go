// Command judgeset draws the OCR judge's labelled set with real Debian
// applications on private Xvfb displays (xterm, rxvt-unicode, lxterminal,
// zenity, yad, mousepad, FeatherPad: a Qt editor, galculator) and headless Chromium, and writes the screens as
// PNGs and the cases as labels.json. Run it through gen.sh:
//
//	bench/judgeset/gen.sh            # writes internal/judge/testdata/ocrset
//	go run ./bench/judgeset -only featherpad -merge   # redraws one app's screens in place
//
// Every screen shows phrases from a bank of pairs that differ in one word
// or number. For each phrase shown the set asks whether it is visible
// (YES), whether its pair is visible (NO: a near miss), whether it is gone
// (NO: it is on screen) and whether its pair is gone (YES). Screens also
// carry a phrase only partly shown (cut at a terminal's margin or a page's
// clipped box: NO) and, on two-window screens, phrases asked of the other
// window (the frame is cropped to the target window: NO).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// pairs are phrases and their near misses: one word or number differs.
var pairs = [][2]string{
	{"Status: Connected", "Status: Disconnected"},
	{"Step 3 of 5", "Step 2 of 5"},
	{"api-02 Healthy", "api-01 Healthy"},
	{"Order ships Thursday", "Order ships Tuesday"},
	{"Frames: 240 of 240", "Frames: 239 of 240"},
	{"Build succeeded", "Build failed"},
	{"Upload complete", "Upload incomplete"},
	{"Saved 12 files", "Saved 13 files"},
	{"Version 2.4.1 installed", "Version 2.4.7 installed"},
	{"Payment accepted", "Payment declined"},
	{"3 errors found", "0 errors found"},
	{"Sync paused", "Sync resumed"},
	{"Invoice 4521 paid", "Invoice 4527 paid"},
	{"Welcome back, Alice", "Welcome back, Alicia"},
	{"Tests passed: 118", "Tests passed: 116"},
	{"Battery 85%", "Battery 55%"},
	{"Export finished", "Export cancelled"},
	{"Server is running", "Server is stopped"},
	{"Disk usage 42 GB", "Disk usage 47 GB"},
	{"Backup verified", "Backup unverified"},
	{"Door locked", "Door unlocked"},
	{"Queue empty", "Queue full"},
	{"Room 214 booked", "Room 241 booked"},
	{"Signal strong", "Signal weak"},
	{"Checkout ready", "Checkout pending"},
	{"Tracking 7Q4X9", "Tracking 7Q4X8"},
	{"Login successful", "Login unsuccessful"},
	{"Deploy to staging", "Deploy to production"},
}

// thirds change one word of a pair (same index), a word both its
// phrases hold, so a screen showing either can be asked about the phrase
// with that word changed (a near miss: one word differs). The "near"
// screens ask them; the first screens do not.
var thirds = [][2]string{
	{"Status", "State"}, {"of 5", "of 6"}, {"Healthy", "Degraded"}, {"Order", "Parcel"}, {"of 240", "of 250"},
	{"Build", "Deploy"}, {"Upload", "Download"}, {"files", "folders"}, {"installed", "removed"}, {"Payment", "Refund"},
	{"errors", "warnings"}, {"Sync", "Backup"}, {"paid", "overdue"}, {"back", "home"}, {"Tests", "Checks"},
	{"Battery", "Signal"}, {"Export", "Import"}, {"Server", "Worker"}, {"Disk", "Swap"}, {"Backup", "Restore"},
	{"Door", "Gate"}, {"Queue", "Cache"}, {"Room", "Desk"}, {"Signal", "Battery"}, {"Checkout", "Payment"},
	{"Tracking", "Order"}, {"Login", "Logout"}, {"Deploy", "Release"},
}

// extras are words put after a phrase shown: the screen shows only part of
// the phrase asked (a near miss: one word more).
var extras = []string{"again", "today", "twice", "now", "here", "later"}

// prefixes are words put before a phrase shown, for the same reason.
var prefixes = []string{"Nightly", "Remote", "Local", "Auto", "Main", "Backup"}

// numbers are what galculator's display shows; their near misses differ in
// one digit (or have one digit more).
var numbers = []string{"4521.75", "86400", "3.14159", "2048", "73905", "0.0625", "299792", "1234.5", "6021", "987.65", "31337", "512.25"}

// Case is one labelled question, as internal/judge loads it.
type Case struct {
	Name      string `json:"name"`
	Image     string `json:"image"`
	Condition string `json:"condition"`
	Expect    bool   `json:"expect"`
	Crop      []int  `json:"crop,omitempty"` // x0 y0 x1 y1: the target window
	Size      int    `json:"size_pt"`
	Px        int    `json:"size_px"`
	Theme     string `json:"theme"`
	App       string `json:"app"`
	Scale     int    `json:"scale"`
	Kind      string `json:"kind"`
	Note      string `json:"note,omitempty"`
}

type screen struct {
	name   string
	app    string
	theme  string
	scale  int
	pt     int
	font   string // "aa" (anti-aliased TrueType) or "bitmap"
	shown  []int  // pair indexes shown
	flip   []bool // show the second phrase of the pair instead
	cut    int    // a pair shown only in part (-1 none)
	second string // app of a second window on top (other-window cases)
	shown2 []int  // pairs shown in the second window
	// more: a "near" screen, whose phrases are also asked with their
	// third (one word differs) and with one word more.
	more bool
	// number: galculator's display; numbers2 are shown in the second
	// window (other-window cases). rng draws the near misses' digits.
	number   string
	numbers2 []string
	seed     uint64
}

func main() {
	out := flag.String("out", "internal/judge/testdata/ocrset", "directory to write the set to")
	only := flag.String("only", "", "generate only screens whose name contains this")
	merge := flag.Bool("merge", false, "with -only: put the screens generated into the set in -out (their cases replace the ones they had), leaving the other screens as they are")
	flag.Parse()
	log.SetFlags(0)
	xgb.Logger = log.New(io.Discard, "", 0)
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	screens := plan()
	var cases []Case
	for _, s := range screens {
		if *only != "" && !strings.Contains(s.name, *only) {
			continue
		}
		t0 := time.Now()
		img, target, err := draw1(s)
		if err != nil {
			log.Fatalf("screen %s: %v", s.name, err)
		}
		file := s.name + ".png"
		if err := writePNG(filepath.Join(*out, file), img); err != nil {
			log.Fatal(err)
		}
		cs := casesOf(s, file, target)
		cases = append(cases, cs...)
		log.Printf("%s: %d cases, %s", s.name, len(cs), time.Since(t0).Round(time.Millisecond))
	}
	if *only != "" && !*merge {
		return
	}
	if *merge {
		old, err := os.ReadFile(filepath.Join(*out, "labels.json"))
		if err != nil {
			log.Fatalf("-merge: %v", err)
		}
		var kept []Case
		if err := json.Unmarshal(old, &kept); err != nil {
			log.Fatalf("-merge: labels.json: %v", err)
		}
		redrawn := map[string]bool{}
		for _, c := range cases {
			redrawn[c.Image] = true
		}
		all := kept[:0]
		for _, c := range kept {
			if !redrawn[c.Image] {
				all = append(all, c)
			}
		}
		cases = append(all, cases...)
	}
	data, err := json.MarshalIndent(cases, "", " ")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*out, "labels.json"), append(data, '\n'), 0o644); err != nil {
		log.Fatal(err)
	}
	no := 0
	for _, c := range cases {
		if !c.Expect {
			no++
		}
	}
	log.Printf("%d cases, %d NO", len(cases), no)
}

// plan lists the screens: every app in both themes at 1x and 2x, sizes
// from 8 to 96 pt spread over them, phrases drawn from the bank with a
// fixed seed so the set is the same on every run.
func plan() []screen {
	rng := rand.New(rand.NewPCG(28, 2))
	sizes := []int{8, 10, 12, 16, 24, 36, 48, 72, 96}
	apps := []appSpec{
		{"xterm", "aa", sizes},
		{"xterm", "bitmap", []int{8, 10, 12, 16}},
		{"urxvt", "aa", sizes},
		{"lxterminal", "aa", sizes},
		{"zenity", "aa", sizes},
		{"yad", "aa", sizes},
		{"mousepad", "aa", []int{10}},
		{"chromium", "aa", sizes},
	}
	var out []screen
	out = appScreens(rng, apps, out)
	// Two windows: phrases of one asked of the other.
	for i, spec := range []struct{ app, second, theme string }{
		{"xterm", "yad", "dark"}, {"xterm", "yad", "light"},
		{"lxterminal", "yad", "light"}, {"urxvt", "yad", "dark"},
	} {
		s := screen{app: spec.app, second: spec.second, theme: spec.theme, scale: 1 + i%2, pt: []int{10, 12}[i%2], font: "aa", cut: -1}
		s.name = fmt.Sprintf("two-%s-%s-%s-%dx", spec.app, spec.second, spec.theme, s.scale)
		perm := rng.Perm(len(pairs))
		s.shown, s.shown2 = perm[:3], perm[3:6]
		s.flip = []bool{false, true, false}
		out = append(out, s)
	}
	// Apps added since draw from a seed of their own, so the screens
	// above stay as they were: FeatherPad, a Qt editor.
	out = appScreens(rand.New(rand.NewPCG(28, 3)), []appSpec{{"featherpad", "aa", []int{10, 16, 24, 36}}}, out)
	out = galculatorScreens(rand.New(rand.NewPCG(28, 4)), out)
	return nearScreens(rand.New(rand.NewPCG(28, 5)), out)
}

// galculatorScreens adds galculator's display (numbers only) in both
// themes at 1x and 2x, at two sizes each, and four screens of galculator
// beside an xterm showing other numbers, the frame cropped to galculator.
func galculatorScreens(rng *rand.Rand, out []screen) []screen {
	sizes := []int{12, 16, 26, 36}
	k := 0
	for _, theme := range []string{"light", "dark"} {
		for _, scale := range []int{1, 2} {
			for i := 0; i < 2; i++ {
				pt := sizes[(k+i*2)%len(sizes)]
				s := screen{app: "galculator", theme: theme, scale: scale, pt: pt, font: "aa", cut: -1,
					number: numbers[rng.IntN(len(numbers))], seed: rng.Uint64()}
				s.name = fmt.Sprintf("galculator-aa-%s-%dx-%dpt", theme, scale, pt)
				out = append(out, s)
			}
			k++
		}
	}
	for i, theme := range []string{"light", "dark", "dark", "light"} {
		s := screen{app: "galculator", second: "xterm", theme: theme, scale: 1 + i/2, pt: []int{16, 26}[i%2], font: "aa", cut: -1, seed: rng.Uint64()}
		perm := rng.Perm(len(numbers))
		s.number = numbers[perm[0]]
		s.numbers2 = []string{numbers[perm[1]], numbers[perm[2]], numbers[perm[3]]}
		s.name = fmt.Sprintf("two-galculator-xterm-%s-%dx-%dpt", theme, s.scale, s.pt)
		out = append(out, s)
	}
	return out
}

// nearScreens adds screens whose phrases are asked with more near misses:
// each app once in each theme, at 1x and 2x in turn.
func nearScreens(rng *rand.Rand, out []screen) []screen {
	apps := []struct {
		app   string
		sizes []int
	}{
		{"xterm", []int{10, 16}}, {"urxvt", []int{12, 24}}, {"lxterminal", []int{10, 16}},
		{"zenity", []int{12, 24}}, {"yad", []int{10, 16}}, {"chromium", []int{12, 24}},
		{"mousepad", []int{10, 12}}, {"featherpad", []int{12, 16}},
	}
	for i, a := range apps {
		for j, theme := range []string{"light", "dark"} {
			scale := 1 + (i+j)%2
			pt := a.sizes[j]
			s := screen{app: a.app, theme: theme, scale: scale, pt: pt, font: "aa", cut: -1, more: true}
			s.name = fmt.Sprintf("near-%s-aa-%s-%dx-%dpt", a.app, theme, scale, pt)
			fit := phrasesThatFit(pt+4, scale) // room for a word more
			for _, p := range rng.Perm(len(pairs)) {
				if len(s.shown) == 5 {
					break
				}
				if fit(p) {
					s.shown = append(s.shown, p)
					s.flip = append(s.flip, rng.IntN(2) == 1)
				}
			}
			if a.app != "zenity" && a.app != "yad" && a.app != "mousepad" && a.app != "featherpad" {
				for _, p := range rng.Perm(len(pairs)) {
					if !contains(s.shown, p) {
						s.cut = p
						break
					}
				}
			}
			out = append(out, s)
		}
	}
	return out
}

// digitMisses returns up to n numbers that differ from num in one digit
// (each at another position), and num with one digit more at its end.
func digitMisses(num string, n int, rng *rand.Rand) []string {
	var pos []int
	for i, r := range num {
		if r >= '0' && r <= '9' {
			pos = append(pos, i)
		}
	}
	rng.Shuffle(len(pos), func(i, j int) { pos[i], pos[j] = pos[j], pos[i] })
	var out []string
	for _, i := range pos {
		if len(out) == n {
			break
		}
		d := int(num[i] - '0')
		nd := (d + 1 + rng.IntN(9)) % 10
		if i == 0 && nd == 0 {
			nd = (d + 1) % 10
			if nd == 0 {
				nd = 1
			}
		}
		out = append(out, num[:i]+strconv.Itoa(nd)+num[i+1:])
	}
	return append(out, num+strconv.Itoa(1+rng.IntN(9)))
}

type appSpec struct {
	app   string
	font  string
	sizes []int
}

// appScreens adds each app's screens to out: both themes at 1x and 2x,
// sizes spread over them, phrases drawn from the bank with rng.
func appScreens(rng *rand.Rand, apps []appSpec, out []screen) []screen {
	k := 0
	for _, a := range apps {
		for _, theme := range []string{"light", "dark"} {
			for _, scale := range []int{1, 2} {
				n := 2
				if a.app == "mousepad" || a.app == "featherpad" || a.font == "bitmap" {
					n = 1
				}
				for i := 0; i < n; i++ {
					pt := a.sizes[(k+i*4)%len(a.sizes)]
					s := screen{app: a.app, theme: theme, scale: scale, pt: pt, font: a.font, cut: -1}
					s.name = fmt.Sprintf("%s-%s-%s-%dx-%dpt", a.app, a.font, theme, scale, pt)
					fit := phrasesThatFit(pt, scale)
					lines := min(5, max(1, 560*scale/(pt*2*scale)))
					perm := rng.Perm(len(pairs))
					for _, p := range perm {
						if len(s.shown) == lines {
							break
						}
						if fit(p) {
							s.shown = append(s.shown, p)
							s.flip = append(s.flip, rng.IntN(2) == 1)
						}
					}
					if a.app != "mousepad" && a.app != "featherpad" && a.app != "zenity" && a.app != "yad" && pt <= 48 {
						for _, p := range perm {
							if fit(p) && !contains(s.shown, p) {
								s.cut = p
								break
							}
						}
					}
					out = append(out, s)
				}
				k++
			}
		}
	}
	return out
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// phrasesThatFit says which pairs fit across a 1280-pixel-wide screen at
// pt (an estimate: a character is at most 0.62 em wide).
func phrasesThatFit(pt, scale int) func(int) bool {
	return func(p int) bool {
		n := max(len(pairs[p][0]), len(pairs[p][1]))
		px := float64(pt) * 4 / 3
		return float64(n)*0.62*px < 1100
	}
}

func phrase(s screen, i int) string {
	p := pairs[s.shown[i]]
	if s.flip[i] {
		return p[1]
	}
	return p[0]
}

func other(s screen, i int) string {
	p := pairs[s.shown[i]]
	if s.flip[i] {
		return p[0]
	}
	return p[1]
}

// casesOf labels a screen.
func casesOf(s screen, file string, target image.Rectangle) []Case {
	base := Case{Image: file, Size: s.pt, Px: s.pt * 4 / 3 * s.scale, Theme: s.theme, App: s.app, Scale: s.scale}
	if s.font == "bitmap" {
		base.App = s.app + "-bitmap"
	}
	var cs []Case
	add := func(kind, cond string, expect bool, crop bool) {
		c := base
		c.Name = fmt.Sprintf("%s/%d", s.name, len(cs))
		c.Kind, c.Condition, c.Expect = kind, cond, expect
		if crop {
			c.Crop = []int{target.Min.X, target.Min.Y, target.Max.X, target.Max.Y}
		}
		cs = append(cs, c)
	}
	q := strconv.Quote
	if s.number != "" {
		rng := rand.New(rand.NewPCG(s.seed, 28))
		crop := s.second != ""
		add("visible", q(s.number)+" is visible", true, crop)
		add("gone-present", q(s.number)+" is gone", false, crop)
		misses := digitMisses(s.number, 7, rng)
		for i, m := range misses {
			add("near", q(m)+" is visible", false, crop)
			if i < 2 {
				add("gone-absent", q(m)+" is gone", true, crop)
			}
		}
		for _, n := range s.numbers2 {
			add("other-window", q(n)+" is visible", false, true)
			add("other-window-gone", q(n)+" is gone", true, true)
		}
		return cs
	}
	for i := range s.shown {
		p, o := phrase(s, i), other(s, i)
		add("visible", q(p)+" is visible", true, s.second != "")
		add("near", q(o)+" is visible", false, s.second != "")
		add("gone-present", q(p)+" is gone", false, s.second != "")
		add("gone-absent", q(o)+" is gone", true, s.second != "")
		if s.more {
			t := thirds[s.shown[i]]
			add("near", q(strings.Replace(p, t[0], t[1], 1))+" is visible", false, false)
			add("near", q(p+" "+extras[(s.shown[i]+i)%len(extras)])+" is visible", false, false)
			add("near", q(prefixes[(s.shown[i]+2*i)%len(prefixes)]+" "+p)+" is visible", false, false)
			if strings.ContainsAny(p, "0123456789") {
				// One digit differs, where the pair's does not.
				rng := rand.New(rand.NewPCG(uint64(s.shown[i]), uint64(s.pt)))
				for _, m := range digitMisses(p, 3, rng) {
					if m != o && !strings.HasPrefix(m, p) {
						add("near", q(m)+" is visible", false, false)
						break
					}
				}
			}
		}
	}
	if s.cut >= 0 {
		add("partial", q(pairs[s.cut][0])+" is visible", false, false)
	}
	for _, p := range s.shown2 {
		add("other-window", q(pairs[p][0])+" is visible", false, true)
		add("other-window-gone", q(pairs[p][0])+" is gone", true, true)
	}
	return cs
}

type display struct {
	name string
	cmd  *exec.Cmd
	conn *xgb.Conn
	w, h int
	home string
	kids []*exec.Cmd
}

func startX(w, h int) (*display, error) {
	r, wr, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", fmt.Sprintf("%dx%dx24", w, h), "-dpi", "96", "-nolisten", "tcp", "-ac", "-br")
	cmd.ExtraFiles = []*os.File{wr}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start Xvfb (apt-get install xvfb): %w", err)
	}
	wr.Close()
	line, err := bufio.NewReader(r).ReadString('\n')
	r.Close()
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("read Xvfb display number: %w", err)
	}
	d := &display{name: ":" + strings.TrimSpace(line), cmd: cmd, w: w, h: h}
	if d.conn, err = xgb.NewConnDisplay(d.name); err != nil {
		d.stop()
		return nil, err
	}
	d.home, _ = os.MkdirTemp("", "judgeset")
	return d, nil
}

func (d *display) stop() {
	for _, k := range d.kids {
		k.Process.Kill()
		k.Wait()
	}
	if d.conn != nil {
		d.conn.Close()
	}
	d.cmd.Process.Kill()
	d.cmd.Wait()
	if d.home != "" {
		os.RemoveAll(d.home)
	}
}

func (d *display) env(extra ...string) []string {
	env := append(os.Environ(), "DISPLAY="+d.name, "HOME="+d.home, "XDG_CONFIG_HOME="+filepath.Join(d.home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(d.home, ".cache"), "NO_AT_BRIDGE=1", "GSETTINGS_BACKEND=memory", "LANG=C.UTF-8")
	return append(env, extra...)
}

func (d *display) start(env []string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Dir = d.home
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	d.kids = append(d.kids, cmd)
	return nil
}

func (d *display) grab() (*image.RGBA, error) {
	img := image.NewRGBA(image.Rect(0, 0, d.w, d.h))
	root := xproto.Setup(d.conn).DefaultScreen(d.conn).Root
	band := max(1, (1<<20)/(d.w*4))
	for y := 0; y < d.h; y += band {
		h := min(band, d.h-y)
		r, err := xproto.GetImage(d.conn, xproto.ImageFormatZPixmap, xproto.Drawable(root), 0, int16(y), uint16(d.w), uint16(h), 0xffffffff).Reply()
		if err != nil {
			return nil, err
		}
		for i := 0; i < d.w*h; i++ {
			p := r.Data[i*4 : i*4+4]
			o := img.Pix[(y*d.w+i)*4:]
			o[0], o[1], o[2], o[3] = p[2], p[1], p[0], 255
		}
	}
	return img, nil
}

// settle waits for ready (a file the client's script touches, "" for
// none) and a screen that stays the same over three grabs.
func (d *display) settle(ready string, minWait time.Duration) (*image.RGBA, error) {
	deadline := time.Now().Add(20 * time.Second)
	time.Sleep(minWait)
	var prev []byte
	same := 0
	for time.Now().Before(deadline) {
		if ready != "" {
			if _, err := os.Stat(ready); err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
		}
		img, err := d.grab()
		if err != nil {
			return nil, err
		}
		if bytes.Equal(img.Pix, prev) && !blank(img) {
			same++
			if same >= 2 {
				return img, nil
			}
		} else {
			same = 0
		}
		prev = img.Pix
		time.Sleep(250 * time.Millisecond)
	}
	return nil, fmt.Errorf("screen of %s did not settle", d.name)
}

func blank(img *image.RGBA) bool {
	for i := 0; i < len(img.Pix); i += 4 {
		if img.Pix[i] != img.Pix[0] || img.Pix[i+1] != img.Pix[1] || img.Pix[i+2] != img.Pix[2] {
			return false
		}
	}
	return true
}

// geometry returns the rectangle of the first window whose title matches
// the regular expression title.
func (d *display) geometry(title string) (image.Rectangle, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	args := []string{"search", "--sync", "--limit", "1", "--name", title, "getwindowgeometry", "--shell"}
	if title == galculatorTitle {
		// Its first window of that name is a 10x10 one never shown.
		args = slices.Insert(args, 2, "--onlyvisible")
	}
	cmd := exec.CommandContext(ctx, "xdotool", args...)
	cmd.Env = d.env()
	out, err := cmd.Output()
	if err != nil {
		return image.Rectangle{}, fmt.Errorf("find window %q (apt-get install xdotool): %w", title, err)
	}
	v := map[string]int{}
	for _, l := range strings.Split(string(out), "\n") {
		if k, val, ok := strings.Cut(l, "="); ok {
			v[k], _ = strconv.Atoi(val)
		}
	}
	return image.Rect(v["X"], v["Y"], v["X"]+v["WIDTH"], v["Y"]+v["HEIGHT"]), nil
}

const galculatorTitle = "^galculator$"

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

// chromium renders a page of the screen's phrases with headless Chromium:
// plain text, text on coloured buttons, on gradients, in a serif face and
// in bold, and a phrase cut by a clipped box.
func chromium(s screen) (*image.RGBA, error) {
	dir, err := os.MkdirTemp("", "judgeset-chromium")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	fg, bg := colours(s.theme)
	var b strings.Builder
	fmt.Fprintf(&b, `<!doctype html><html><head><meta charset="utf-8"><style>
body{margin:0;padding:24px;background:%s;color:%s;font-family:"DejaVu Sans",sans-serif;font-size:%dpt}
div{margin:0 0 14px 0;white-space:nowrap}
.btn{display:inline-block;background:#1a73e8;color:#fff;border-radius:8px;padding:6px 16px}
.grad{display:inline-block;background:linear-gradient(90deg,#f6d365,#fda085);color:#222;padding:4px 12px}
.serif{font-family:"DejaVu Serif",serif}
.bold{font-weight:bold}
.clip{display:inline-block;overflow:hidden;font-family:"DejaVu Sans Mono",monospace}
</style></head><body>`, bg, fg, s.pt)
	styles := []string{"", "btn", "grad", "serif", "bold"}
	for i := range s.shown {
		st := styles[(i+s.pt)%len(styles)]
		fmt.Fprintf(&b, `<div><span class="%s">%s</span></div>`, st, html.EscapeString(phrase(s, i)))
	}
	if s.cut >= 0 {
		p := pairs[s.cut][0]
		fmt.Fprintf(&b, `<div><span class="clip" style="width:%dch">%s</span></div>`, len(p)/2, html.EscapeString(p))
	}
	b.WriteString("</body></html>")
	page := filepath.Join(dir, "page.html")
	if err := os.WriteFile(page, []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=1280,720",
		"--force-device-scale-factor="+strconv.Itoa(s.scale), "--screenshot="+shot, "file://"+page)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("chromium --screenshot (apt-get install chromium): %w: %s", err, out)
	}
	fh, err := os.Open(shot)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	img, err := png.Decode(fh)
	if err != nil {
		return nil, err
	}
	rgba := image.NewRGBA(img.Bounds())
	draw.Draw(rgba, rgba.Rect, img, img.Bounds().Min, draw.Src)
	return rgba, nil
}

// writePNG stores img as an 8-bit paletted PNG when it has at most 256
// colours, else with its 256 most common colours (each pixel mapped to the
// nearest), which keeps anti-aliased text within a few levels of its grey.
func writePNG(path string, img *image.RGBA) error {
	counts := map[uint32]int{}
	for i := 0; i < len(img.Pix); i += 4 {
		counts[uint32(img.Pix[i])<<16|uint32(img.Pix[i+1])<<8|uint32(img.Pix[i+2])]++
	}
	keys := make([]uint32, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if counts[keys[i]] != counts[keys[j]] {
			return counts[keys[i]] > counts[keys[j]]
		}
		return keys[i] < keys[j]
	})
	var enc image.Image = img
	{
		n := min(256, len(keys))
		pal := make(color.Palette, n)
		index := map[uint32]uint8{}
		for i, k := range keys[:n] {
			pal[i] = color.RGBA{uint8(k >> 16), uint8(k >> 8), uint8(k), 255}
			index[k] = uint8(i)
		}
		p := image.NewPaletted(img.Rect, pal)
		near := map[uint32]uint8{}
		for i, j := 0, 0; i < len(img.Pix); i, j = i+4, j+1 {
			k := uint32(img.Pix[i])<<16 | uint32(img.Pix[i+1])<<8 | uint32(img.Pix[i+2])
			v, ok := index[k]
			if !ok {
				if v, ok = near[k]; !ok {
					v = uint8(pal.Index(color.RGBA{img.Pix[i], img.Pix[i+1], img.Pix[i+2], 255}))
					near[k] = v
				}
			}
			p.Pix[j] = v
		}
		enc = p
	}
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	e := png.Encoder{CompressionLevel: png.BestCompression}
	if err := e.Encode(fh, enc); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}
