package actionsbench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/acu-dev/acu/bench/internal/rig"
	"github.com/acu-dev/acu/internal/actions"
	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/input"
	"github.com/acu-dev/acu/internal/server"
	"github.com/acu-dev/acu/internal/smartwait"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// daemon is the API server with the action service over hub on dpy.
func daemon(b *testing.B, dpy string, hub *capture.Hub, sessionBus string) *api.Client {
	return daemonWith(b, dpy, hub, sessionBus, input.Options{}, true)
}

func daemonWith(b *testing.B, dpy string, hub *capture.Hub, sessionBus string, io input.Options, pauseOnUser bool) *api.Client {
	b.Helper()
	c := rig.NewCore(b, hub)
	eng := smartwait.New(smartwait.Options{Runs: c.Runs, Capture: hub, Store: c.DB, DefaultDisplay: dpy})
	svc, err := actions.New(actions.Options{Hub: hub, Runs: c.Runs, Settle: eng, DefaultDisplay: dpy, SessionBus: sessionBus,
		Policy: actions.Policy{PauseOnUser: pauseOnUser}, Input: io})
	if err != nil {
		b.Fatal(err)
	}
	rig.Go(b, svc.Run)
	return api.NewClient(rig.Serve(b, server.New(server.Options{Token: rig.Token, Runs: c.Runs, Actions: svc})), rig.Token)
}

func report(b *testing.B, name string, ds []time.Duration) { rig.Report(b, name, ds) }

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
	fl := rig.NewFlipper(b, dpy, 100, 100, 400, 300)
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
		acuAfter = append(acuAfter, end.Sub(fl.Still()))

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
		refAfter = append(refAfter, end.Sub(fl.Still()))
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
