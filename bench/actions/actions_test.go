package actionsbench

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/internal/actions"
	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/input"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/server"
	"github.com/acu-dev/acu/internal/smartwait"
	"github.com/acu-dev/acu/internal/store"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

const token = "bench-token-0123456789"

// daemon is the API server with the action service over hub on dpy.
func daemon(b *testing.B, dpy string, hub *capture.Hub, sessionBus string) *api.Client {
	return daemonWith(b, dpy, hub, sessionBus, input.Options{}, true)
}

func daemonWith(b *testing.B, dpy string, hub *capture.Hub, sessionBus string, io input.Options, pauseOnUser bool) *api.Client {
	b.Helper()
	db, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "acu.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	reg := runs.New(db, runs.Options{})
	eng := smartwait.New(smartwait.Options{Runs: reg, Capture: hub, Store: db, DefaultDisplay: dpy})
	svc, err := actions.New(actions.Options{Hub: hub, Runs: reg, Settle: eng, DefaultDisplay: dpy, SessionBus: sessionBus,
		Policy: actions.Policy{PauseOnUser: pauseOnUser}, Input: io})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = svc.Run(ctx) }()
	b.Cleanup(func() { cancel(); <-done })
	srv := httptest.NewServer(server.New(server.Options{Token: token, Runs: reg, Actions: svc}))
	b.Cleanup(srv.Close)
	return api.NewClient(srv.URL, token)
}

func report(b *testing.B, name string, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	q := func(p float64) float64 { return float64(ds[int(p*float64(len(ds)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.5), name+"_p50_ms")
	b.ReportMetric(q(0.95), name+"_p95_ms")
}

// BenchmarkClickRoundTrip: one click per POST /v1/actions, request to
// response, on loopback.
// The daemon's click holds the button down 2 ms (ACU_ACT_CLICK_HOLD);
// hold=0 measures acu's own path, hold=10ms the agent loop's hold
// (xdotool's is 12 ms).
func BenchmarkClickRoundTrip(b *testing.B) {
	for _, hold := range []time.Duration{0, actions.DefaultClickHold, input.DefaultClickDelay} {
		b.Run(fmt.Sprintf("hold=%s", hold), func(b *testing.B) { clickRoundTrip(b, hold) })
	}
}

func clickRoundTrip(b *testing.B, hold time.Duration) {
	dpy := testx.StartXvfb(b, xvfb.Options{Width: 1280, Height: 720})
	hub, err := capture.NewHub(capture.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { hub.Close() })
	if hold == 0 {
		hold = -1 // no delay at all
	}
	c := daemonWith(b, dpy, hub, "", input.Options{ClickDelay: hold}, true)
	req := api.ActRequest{Actions: []api.Action{{Kind: api.ActClick, At: api.Pt(500, 500)}}}
	if _, err := c.Act(context.Background(), req); err != nil { // opens the display
		b.Fatal(err)
	}
	ds := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if _, err := c.Act(context.Background(), req); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	b.StopTimer()
	report(b, "click", ds)
}

// flipper is an X client whose window changes colour once per button
// press, and records when it finished drawing (the screen is still from
// then on).
type flipper struct {
	x     *xgb.Conn
	win   xproto.Window
	still atomic.Int64 // unix ns of the last change
}

func newFlipper(b *testing.B, dpy string) *flipper {
	b.Helper()
	x, err := xgb.NewConnDisplay(dpy)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(x.Close)
	scr := xproto.Setup(x).DefaultScreen(x)
	win, err := xproto.NewWindowId(x)
	if err != nil {
		b.Fatal(err)
	}
	err = xproto.CreateWindowChecked(x, scr.RootDepth, win, scr.Root, 100, 100, 400, 300, 0, xproto.WindowClassInputOutput,
		scr.RootVisual, xproto.CwBackPixel|xproto.CwEventMask, []uint32{0x336699, xproto.EventMaskButtonPress}).Check()
	if err != nil {
		b.Fatal(err)
	}
	xproto.MapWindow(x, win)
	xproto.ClearArea(x, false, win, 0, 0, 0, 0)
	if _, err := xproto.GetInputFocus(x).Reply(); err != nil {
		b.Fatal(err)
	}
	f := &flipper{x: x, win: win}
	go func() {
		colour := uint32(0x336699)
		for {
			ev, err := x.WaitForEvent()
			if ev == nil && err == nil {
				return
			}
			if _, ok := ev.(xproto.ButtonPressEvent); !ok {
				continue
			}
			colour ^= 0xffffff
			xproto.ChangeWindowAttributes(x, win, xproto.CwBackPixel, []uint32{colour})
			xproto.ClearArea(x, false, win, 0, 0, 0, 0)
			_, _ = xproto.GetInputFocus(x).Reply() // drawn
			f.still.Store(time.Now().UnixNano())
		}
	}()
	return f
}

// BenchmarkActSettleScreenshot: a click on a window that changes once,
// then settle and a 960-wide JPEG, in one request (acu), against the
// reference approach (xdotool subprocess, fixed 2 s sleep, then a
// screenshot), interleaved. after_still is the time from the screen
// becoming still to the screenshot being in the client's hands.
func BenchmarkActSettleScreenshot(b *testing.B) {
	if _, err := exec.LookPath("xdotool"); err != nil {
		b.Fatal("xdotool is needed for the reference: apt-get install xdotool (scripts/install-deps.sh)")
	}
	dpy := testx.StartXvfb(b, xvfb.Options{Width: 1280, Height: 720})
	hub, err := capture.NewHub(capture.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { hub.Close() })
	// The reference's xdotool is another client moving the pointer: to
	// acu, a user, so the user-first pause is off here.
	c := daemonWith(b, dpy, hub, "", input.Options{}, false)
	fl := newFlipper(b, dpy)
	req := api.ActRequest{Actions: []api.Action{{Kind: api.ActClick, At: api.Pt(234, 347)}}, // inside the window
		Settle: &api.SettleOptions{QuietMs: 100}, Screenshot: &api.ShotOptions{Format: "jpeg", MaxWidth: 960}}
	if _, err := c.Act(context.Background(), req); err != nil {
		b.Fatal(err)
	}
	var acuTurn, acuAfter, refTurn, refAfter []time.Duration
	env := append(os.Environ(), "DISPLAY="+dpy)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		resp, err := c.Act(context.Background(), req)
		if err != nil || !resp.OK || resp.Screenshot == nil {
			b.Fatalf("act = %+v, %v", resp, err)
		}
		end := time.Now()
		acuTurn = append(acuTurn, end.Sub(t0))
		acuAfter = append(acuAfter, end.Sub(time.Unix(0, fl.still.Load())))

		t0 = time.Now()
		cmd := exec.Command("xdotool", "mousemove", "400", "250", "click", "1")
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("xdotool: %v: %s", err, out)
		}
		time.Sleep(2 * time.Second)
		if _, err := c.ScreenshotWith(context.Background(), dpy, api.ShotOptions{Format: "jpeg", MaxWidth: 960}); err != nil {
			b.Fatal(err)
		}
		end = time.Now()
		refTurn = append(refTurn, end.Sub(t0))
		refAfter = append(refAfter, end.Sub(time.Unix(0, fl.still.Load())))
	}
	b.StopTimer()
	report(b, "acu_turn", acuTurn)
	report(b, "acu_after_still", acuAfter)
	report(b, "ref_turn", refTurn)
	report(b, "ref_after_still", refAfter)
	slices.Sort(acuTurn)
	slices.Sort(refTurn)
	b.ReportMetric(float64(refTurn[len(refTurn)/2])/float64(acuTurn[len(acuTurn)/2]), "turn_ratio")
}

// BenchmarkElementMap: the element map of a zenity form (GTK) over GET
// /v1/elements against elements.Extract in-process, interleaved, both
// tree-only on the same display.
func BenchmarkElementMap(b *testing.B) {
	d := atspitest.NewDesktop(b)
	d.Zenity(b, "--forms", "--title=Acu Bench", "--text=Bench form", "--add-entry=Name", "--add-entry=City",
		"--add-password=Secret", "--add-calendar=Day")
	c := daemon(b, d.Display, d.Hub, d.Session.SessionBus)
	x, err := elements.New(elements.Options{Display: d.Display, Capture: d.Hub, Tree: d.Tree, Input: d.Input})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Elements(ctx, api.ElementsQuery{}); err != nil {
		b.Fatal(err)
	}
	var httpD, inD []time.Duration
	n := 0
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		m, err := x.Extract(ctx)
		if err != nil {
			b.Fatal(err)
		}
		inD = append(inD, time.Since(t0))
		t0 = time.Now()
		hm, err := c.Elements(ctx, api.ElementsQuery{})
		if err != nil {
			b.Fatal(err)
		}
		httpD = append(httpD, time.Since(t0))
		n = len(hm.Elements)
		if len(m.Elements) != n {
			b.Logf("in-process %d elements, HTTP %d", len(m.Elements), n)
		}
	}
	b.StopTimer()
	report(b, "inproc", inD)
	report(b, "http", httpD)
	b.ReportMetric(float64(n), "elements")
	slices.Sort(inD)
	slices.Sort(httpD)
	b.ReportMetric(float64(httpD[len(httpD)/2])/float64(inD[len(inD)/2]), "http_over_inproc")
}
