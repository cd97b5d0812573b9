package actionsbench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/jezek/xgb/xtest"

	"github.com/acu-dev/acu/bench/internal/rig"
	"github.com/acu-dev/acu/internal/actions"
	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/input"
	"github.com/acu-dev/acu/internal/server"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// formRig is the API server on a desktop with a form of one toolkit, its
// entry focused, and the ids of the entry and its Submit button.
type formRig struct {
	c      *api.Client
	form   *atspitest.Form
	submit string
}

func newFormRig(b *testing.B, toolkit string) *formRig {
	b.Helper()
	d := atspitest.NewDesktop(b)
	form := d.Form(b, toolkit, "Acu Bench Form")
	c := daemonWith(b, d.Display, d.Hub, d.Session.SessionBus, input.Options{}, false)
	ctx := context.Background()
	var entry, submit string
	for range 50 {
		m, err := c.Elements(ctx, api.ElementsQuery{})
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range m.Elements {
			if e.Editable && e.Showing && entry == "" {
				entry = e.ID
			}
			if e.Type == "button" && e.Text == "Submit" {
				submit = e.ID
			}
		}
		if entry != "" && submit != "" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if entry == "" || submit == "" {
		b.Fatalf("the %s form has no entry or Submit in its element map", toolkit)
	}
	if _, err := c.Act(ctx, api.ActRequest{Actions: []api.Action{{Kind: api.ActClick, At: &api.Point{Element: entry}, Pointer: true}}}); err != nil {
		b.Fatal(err)
	}
	return &formRig{c: c, form: form, submit: submit}
}

// BenchmarkOrderTypeThenClick: one request per iteration types a fresh
// value by XTest and clicks Submit by its element id (an AT-SPI action);
// the form prints what it got. out_of_order counts the requests whose
// value the application did not get whole; order_p50_ms is the time acu
// added to prove the order (the wait before the click).
func BenchmarkOrderTypeThenClick(b *testing.B) {
	for _, tk := range []string{atspitest.GTK, atspitest.Qt} {
		b.Run(tk, func(b *testing.B) {
			r := newFormRig(b, tk)
			ctx := context.Background()
			var acts, orders []time.Duration
			bad, unproved := 0, 0
			b.ResetTimer()
			for i := range b.N {
				want := fmt.Sprintf("v%d-%08x", i, rand.Uint32())
				t0 := time.Now()
				resp, err := r.c.Act(ctx, api.ActRequest{Actions: []api.Action{
					{Kind: api.ActType, Text: want}, {Kind: api.ActClick, At: &api.Point{Element: r.submit}}}})
				if err != nil || !resp.OK {
					b.Fatalf("act %d = %+v, %v", i, resp, err)
				}
				acts = append(acts, time.Since(t0))
				click := resp.Results[1]
				orders = append(orders, time.Duration(click.OrderMs*float64(time.Millisecond)))
				if click.Ordered == nil || !*click.Ordered {
					unproved++
				}
				wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				got, err := r.form.WaitGot(wctx, i+1)
				cancel()
				if err != nil {
					b.Fatalf("request %d: the form reported %d values: %v", i, len(got), err)
				}
				if got[i] != want {
					bad++
					b.Logf("request %d: the application got %q, want %q (ordered %v: %s)", i, got[i], want, click.Ordered != nil && *click.Ordered, click.OrderNote)
				}
			}
			b.StopTimer()
			report(b, "act", acts)
			report(b, "order", orders)
			b.ReportMetric(float64(bad), "out_of_order")
			b.ReportMetric(float64(unproved), "unproved")
		})
	}
}

// BenchmarkUserFirstSelfRefusal: clicks by acu alone, one per request,
// with the user-first pause on (ACU_ACT_PAUSE_ON_INPUT, quiet 3 s): every
// refusal is acu refusing itself. On a bare display, and under openbox,
// whose click-to-focus grab (synchronous, on every client window) holds
// the pointer frozen from each press until openbox replays it: acu's
// release then reaches the application, and the master device's raw
// events, after acu's input has ended.
func BenchmarkUserFirstSelfRefusal(b *testing.B) {
	for _, wm := range []string{"bare", "openbox"} {
		b.Run(wm, func(b *testing.B) {
			dpy := testx.StartXvfb(b, xvfb.Options{Width: 1280, Height: 720})
			hub, err := capture.NewHub(capture.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { hub.Close() })
			testx.NewWindow(b, dpy, testx.Spec{Title: "target", X: 0, Y: 0, W: 1280, H: 720})
			if wm == "openbox" {
				testx.StartWM(b, dpy) // it manages the window mapped before it
			}
			c := daemonWith(b, dpy, hub, "", input.Options{}, true)
			ctx := context.Background()
			refused := 0
			var ds []time.Duration
			b.ResetTimer()
			for i := range b.N {
				req := api.ActRequest{Actions: []api.Action{{Kind: api.ActClick, At: api.Pt(50+i%900, 50+i%900)}}}
				t0 := time.Now()
				_, err := c.Act(ctx, req)
				ds = append(ds, time.Since(t0))
				var se *api.StatusError
				switch {
				case errors.As(err, &se) && se.Code == api.CodeUserActive:
					refused++
					if refused <= 20 {
						b.Logf("click %d refused: %s", i, se.Message)
					}
				case err != nil:
					b.Fatal(err)
				}
			}
			b.StopTimer()
			report(b, "click", ds)
			b.ReportMetric(float64(refused), "self_refusals")
		})
	}
}

// daemonQuiet is the API server on dpy with the user-first pause on and
// a quiet period of quiet.
func daemonQuiet(b *testing.B, dpy string, hub *capture.Hub, quiet time.Duration) *api.Client {
	b.Helper()
	c := rig.NewCore(b, hub)
	svc, err := actions.New(actions.Options{Hub: hub, Runs: c.Runs, DefaultDisplay: dpy,
		Policy: actions.Policy{PauseOnUser: true, Quiet: quiet}})
	if err != nil {
		b.Fatal(err)
	}
	rig.Go(b, svc.Run)
	return api.NewClient(rig.Serve(b, server.New(server.Options{Token: rig.Token, Runs: c.Runs, Actions: svc})), rig.Token)
}

// BenchmarkUserTouchThenAct: "the user" moves the pointer (XTEST from
// another client, as xdotool does), stays still for longer than the quiet
// period (1 s here), then acu clicks: refused counts the clicks refused.
func BenchmarkUserTouchThenAct(b *testing.B) {
	dpy := testx.StartXvfb(b, xvfb.Options{Width: 1280, Height: 720})
	hub, err := capture.NewHub(capture.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { hub.Close() })
	c := daemonQuiet(b, dpy, hub, time.Second)
	user, err := display.Open(context.Background(), dpy, display.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(user.Close)
	ctx := context.Background()
	refused := 0
	b.ResetTimer()
	for i := range b.N {
		if err := xtest.FakeInputChecked(user.X, 6, 0, 0, user.Screen.Root, int16(300+i%200), 300, 0).Check(); err != nil {
			b.Fatal(err)
		}
		time.Sleep(1200 * time.Millisecond)
		_, err := c.Act(ctx, api.ActRequest{Actions: []api.Action{{Kind: api.ActClick, At: api.Pt(100, 100)}}})
		var se *api.StatusError
		switch {
		case errors.As(err, &se) && se.Code == api.CodeUserActive:
			refused++
			b.Logf("click %d refused: %s", i, se.Message)
		case err != nil:
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(refused), "refused")
}

// outsideKeymap is the pool of characters no US keymap has that the
// typing benchmark draws from: Latin-extended, symbols, Greek, Cyrillic,
// CJK, Hangul, emoji.
func outsideKeymap(n int) []rune {
	var pool []rune
	for _, r := range []struct{ lo, hi rune }{
		{0x100, 0x17f}, {0x2200, 0x2240}, {0x391, 0x3a9}, {0x410, 0x44f}, {0x4e00, 0x4e40}, {0xac00, 0xac20},
		{0x1f600, 0x1f640}, {0xd7, 0xd7}, {0xf7, 0xf7}, {0x20ac, 0x20ac},
	} {
		for c := r.lo; c <= r.hi; c++ {
			if unicode.IsGraphic(c) { // not U+03A2, which Unicode leaves unassigned
				pool = append(pool, c)
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	return pool[:min(n, len(pool))]
}

// typeOutside types b.N characters drawn from pool, 50 per request, each
// line submitted with Return, and counts the characters the application
// did not get as sent (lost, wrong or added: the edit distance).
func typeOutside(b *testing.B, c *api.Client, pool []rune, got func(ctx context.Context, n int) ([]string, error)) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	var lines []string
	var ds []time.Duration
	b.ResetTimer()
	for left := b.N; left > 0; left -= 50 {
		var sb strings.Builder
		for range min(50, left) {
			sb.WriteRune(pool[rng.IntN(len(pool))])
		}
		line := sb.String()
		lines = append(lines, line)
		t0 := time.Now()
		if _, err := c.Act(ctx, api.ActRequest{Actions: []api.Action{{Kind: api.ActType, Text: line}, {Kind: api.ActKey, Keys: "Return"}}}); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	out, err := got(wctx, len(lines))
	cancel()
	b.StopTimer()
	if err != nil {
		b.Fatalf("the application reported %d of %d lines: %v", len(out), len(lines), err)
	}
	bad := 0
	for i, want := range lines {
		bad += editDistance([]rune(want), []rune(out[i]))
		if out[i] != want {
			b.Logf("line %d: got %q, want %q", i, out[i], want)
		}
	}
	report(b, "request", ds)
	b.ReportMetric(float64(bad), "lost_or_wrong")
	b.ReportMetric(float64(len(pool)), "distinct")
}

// editDistance is the number of characters lost, added or replaced
// between want and got (Levenshtein).
func editDistance(want, got []rune) int {
	prev := make([]int, len(got)+1)
	cur := make([]int, len(got)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(want); i++ {
		cur[0] = i
		for j := 1; j <= len(got); j++ {
			sub := prev[j-1]
			if want[i-1] != got[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(got)]
}

// BenchmarkTypeOutsideKeymap: b.N characters outside the keymap typed into
// a GTK form, a Qt form and xterm, each line as the application reports
// it. GTK and Qt draw from 400 distinct characters, far more than the 18
// spare keycodes of Xvfb's keymap (mappings are taken over once the
// application proved it read the last key); xterm, which answers no ping
// (a takeover would wait RemapHold), from 18.
func BenchmarkTypeOutsideKeymap(b *testing.B) {
	for _, tk := range []struct {
		name string
		pool int
	}{{atspitest.GTK, 400}, {atspitest.Qt, 400}} {
		b.Run(tk.name, func(b *testing.B) {
			r := newFormRig(b, tk.name)
			typeOutside(b, r.c, outsideKeymap(tk.pool), r.form.WaitGot)
		})
	}
	b.Run("xterm", func(b *testing.B) {
		b.Setenv("LC_ALL", "C.UTF-8")
		dpy := testx.StartXvfb(b, xvfb.Options{Width: 1280, Height: 720})
		hub, err := capture.NewHub(capture.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { hub.Close() })
		out := filepath.Join(b.TempDir(), "typed")
		testx.StartXterm(b, dpy, testx.XtermSpec{Geometry: "120x20+0+0", Args: []string{"-u8"},
			Command: []string{"sh", "-c", `while IFS= read -r l; do printf '%s\n' "$l" >> "$0"; done`, out}})
		c := daemonWith(b, dpy, hub, "", input.Options{}, false)
		if _, err := c.Act(context.Background(), api.ActRequest{Actions: []api.Action{{Kind: api.ActClick, At: api.Pt(200, 100)}}}); err != nil {
			b.Fatal(err)
		}
		typeOutside(b, c, outsideKeymap(18), func(ctx context.Context, n int) ([]string, error) {
			for {
				raw, _ := os.ReadFile(out)
				lines := strings.Split(string(raw), "\n")
				lines = lines[:len(lines)-1]
				if len(lines) >= n {
					return lines, nil
				}
				select {
				case <-ctx.Done():
					return lines, ctx.Err()
				case <-time.After(20 * time.Millisecond):
				}
			}
		})
	})
}
