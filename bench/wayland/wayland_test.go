package waylandbench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/acu-dev/acu/bench/internal/rig"
	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/judge"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/notify"
	"github.com/acu-dev/acu/internal/smartwait"
)

// BenchmarkDetectionLatency: the terminal paints a red block; the time
// from writing it to the terminal to the wait's webhook notification,
// with a fake vision judge (an OpenAI-compatible httptest server) that
// answers 300 ms after each request arrives, YES when the JPEG it got
// shows the red block. As bench/smartwait's BenchmarkDetectionLatency,
// whose change is an X window's fill instead of a terminal's drawing.
func BenchmarkDetectionLatency(b *testing.B) {
	for _, be := range backends {
		b.Run(be, func(b *testing.B) { detectionLatency(b, be) })
	}
}

func detectionLatency(b *testing.B, backend string) {
	d := startDesk(b, backend, "-echo", "")
	srv := llmtest.NewOpenAI(b, func(q llmtest.Request) llmtest.Reply {
		defer func() { time.Sleep(time.Until(q.At.Add(300 * time.Millisecond))) }()
		for _, im := range q.Images() {
			if im.Image != nil && countRed(im) >= 100 {
				return llmtest.Reply{Text: "YES: a red block is visible."}
			}
		}
		return llmtest.Reply{Text: "NO: no red block is visible."}
	})
	o := srv.Options()
	o.MaxRetries = 0
	client, err := llm.New(o)
	if err != nil {
		b.Fatal(err)
	}
	jb, err := judge.NewVision(judge.VisionOptions{Client: client, Backend: "openrouter", Model: "google/gemini-2.0-flash-lite-001"})
	if err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	woken := map[string]time.Time{}
	wake := make(chan struct{}, 1)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body struct {
			RunID string `json:"runId"`
		}
		_ = json.NewDecoder(req.Body).Decode(&body)
		mu.Lock()
		if _, ok := woken[body.RunID]; !ok {
			woken[body.RunID] = time.Now()
		}
		mu.Unlock()
		select {
		case wake <- struct{}{}:
		default:
		}
	}))
	b.Cleanup(hook.Close)
	wh, err := notify.NewWebhook(notify.WebhookOptions{URL: hook.URL})
	if err != nil {
		b.Fatal(err)
	}
	core := rig.NewCore(b, nil)
	disp, err := notify.NewDispatcher(core.DB, notify.DispatcherOptions{Notifiers: []notify.Notifier{wh}, PerNotifier: 64})
	if err != nil {
		b.Fatal(err)
	}
	eng := smartwait.New(smartwait.Options{Runs: core.Runs, Capture: d.hub, Judge: jb, Store: core.DB, Notify: disp, DefaultDisplay: d.display})
	rig.Go(b, disp.Run, eng.Run)
	ctx := context.Background()
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		d.term.write(b, clear)
		time.Sleep(300 * time.Millisecond) // the cleared screen is drawn before the wait starts
		// A fresh criteria per trial: no verdict from an earlier trial is reused.
		job, err := eng.Create(ctx, smartwait.Spec{Criteria: fmt.Sprintf("a red block is visible (trial %d)", i), Timeout: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		for {
			j, err := eng.Get(ctx, job.ID)
			if err != nil {
				b.Fatal(err)
			}
			if j.Status != smartwait.StatusWatching {
				b.Fatalf("trial %d: the wait ended (%s) before the block was drawn", i, j.Status)
			}
			if j.Evaluations > 0 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond) // the change lands on an idle job, as it does in real waits
		b.StartTimer()
		t0 := time.Now()
		d.term.write(b, block(196))
		deadline := time.After(30 * time.Second)
		for {
			mu.Lock()
			at, ok := woken[job.ID]
			mu.Unlock()
			if ok {
				lat = append(lat, at.Sub(t0))
				break
			}
			select {
			case <-wake:
			case <-deadline:
				b.Fatalf("trial %d: no notification", i)
			}
		}
	}
	b.StopTimer()
	report(b, "detect", lat)
}

func countRed(im llmtest.Image) int {
	n := 0
	bd := im.Image.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			r, g, bl, _ := im.Image.At(x, y).RGBA()
			if r>>8 > 200 && g>>8 < 60 && bl>>8 < 60 {
				n++
			}
		}
	}
	return n
}

// BenchmarkClickToApp: one left click by acu's device (XTest on X11, the
// virtual pointer on Wayland, no hold between press and release) on a
// terminal with xterm's SGR mouse reporting on, to the terminal's
// application reading the press's and the release's reports.
func BenchmarkClickToApp(b *testing.B) {
	for _, be := range backends {
		b.Run(be, func(b *testing.B) { clickToApp(b, be) })
	}
}

func clickToApp(b *testing.B, backend string) {
	d := startDesk(b, backend, "raw -echo", `\033[?1000h\033[?1006h`)
	ctx := context.Background()
	var release []time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		got, _ := d.term.received()
		from := len(got)
		x, y := 300+(i%10)*40, 300 // a different cell each time: no double clicks
		b.StartTimer()
		t0 := time.Now()
		if err := d.dev.Click(ctx, x, y); err != nil {
			b.Fatal(err)
		}
		end := d.term.waitFor(b, from, "m") // SGR: M is a press, m a release
		b.StopTimer()
		got, _ = d.term.received()
		if !slices.Contains(got[from:], 'M') {
			b.Fatalf("click %d: the app received %q, no press", i, got[from:])
		}
		release = append(release, end.Sub(t0))
		b.StartTimer()
	}
	b.StopTimer()
	report(b, "click", release)
}

// BenchmarkActSettleShot: type a word into the terminal, which echoes it
// (the screen changes once), wait until the screen has been still for
// 100 ms, and take a 960-wide JPEG: acu with its own device, hub and the
// smart-wait engine's settle; against a script's way: wtype (xdotool on
// X11) + a fixed 2 s sleep + grim (xwd on X11), interleaved. ydotool is
// not measured: it needs /dev/uinput.
//
// With ACU_BENCH_API=URL (and ACU_BENCH_TOKEN), acu's turn is one POST
// /v1/actions to that daemon instead, naming the benchmark's display, as
// an agent would send it: type, settle, screenshot.
func BenchmarkActSettleShot(b *testing.B) {
	for _, be := range backends {
		b.Run(be, func(b *testing.B) { actSettleShot(b, be) })
	}
}

func actSettleShot(b *testing.B, backend string) {
	d := startDesk(b, backend, "raw", "")
	ctx := context.Background()
	turn := inProcessTurn(b, d)
	if url := os.Getenv("ACU_BENCH_API"); url != "" {
		turn = httpTurn(api.NewClient(url, os.Getenv("ACU_BENCH_TOKEN")), d.display)
	}
	out := filepath.Join(b.TempDir(), "shot")
	var acu, ref []time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		d.term.write(b, clear)
		time.Sleep(200 * time.Millisecond)
		got, _ := d.term.received()
		text := fmt.Sprintf("acu%d ", i)
		b.StartTimer()
		t0 := time.Now()
		if err := turn(ctx, text); err != nil {
			b.Fatal(err)
		}
		acu = append(acu, time.Since(t0))
		b.StopTimer()
		d.term.waitFor(b, len(got), text) // the app got the keys (and echoed them)

		d.term.write(b, clear)
		time.Sleep(200 * time.Millisecond)
		got, _ = d.term.received()
		text = fmt.Sprintf("ref%d ", i)
		b.StartTimer()
		t0 = time.Now()
		if o, err := d.refType(text).CombinedOutput(); err != nil {
			b.Fatalf("%s: %v: %s", backend, err, o)
		}
		time.Sleep(2 * time.Second)
		if o, err := d.refShot(out).CombinedOutput(); err != nil {
			b.Fatalf("%s: %v: %s", backend, err, o)
		}
		ref = append(ref, time.Since(t0))
		b.StopTimer()
		d.term.waitFor(b, len(got), text)
		b.StartTimer()
	}
	b.StopTimer()
	a, r := report(b, "acu", acu), report(b, "ref", ref)
	b.ReportMetric(r/a, "ratio")
}

// inProcessTurn types text with the desk's device, settles through the
// smart-wait engine on the desk's hub (100 ms quiet, as POST /v1/actions
// by default) and encodes a 960-wide JPEG of the screen at quality 72.
func inProcessTurn(b *testing.B, d *desk) func(context.Context, string) error {
	core := rig.NewCore(b, nil)
	eng := smartwait.New(smartwait.Options{Runs: core.Runs, Capture: d.hub, Store: core.DB, DefaultDisplay: d.display})
	rig.Go(b, eng.Run)
	scr, _ := capture.ParseTarget("screen")
	return func(ctx context.Context, text string) error {
		if err := d.dev.Type(ctx, text); err != nil {
			return err
		}
		res, err := eng.Settle(ctx, smartwait.SettleSpec{Quiet: 100 * time.Millisecond, Timeout: 5 * time.Second})
		if err != nil {
			return err
		}
		if !res.Settled {
			return fmt.Errorf("the screen did not settle: %+v", res)
		}
		f, err := d.hub.Capture(ctx, d.display, scr)
		if err != nil {
			return err
		}
		defer f.Release()
		_, err = f.JPEG(960, 72)
		return err
	}
}

// httpTurn is the same turn as one request to a daemon's POST /v1/actions.
func httpTurn(c *api.Client, dpy string) func(context.Context, string) error {
	return func(ctx context.Context, text string) error {
		resp, err := c.Act(ctx, api.ActRequest{Display: dpy, Actions: []api.Action{{Kind: api.ActType, Text: text}},
			Settle: &api.SettleOptions{QuietMs: 100}, Screenshot: &api.ShotOptions{Format: "jpeg", MaxWidth: 960}})
		if err != nil {
			return err
		}
		if !resp.OK || resp.Screenshot == nil {
			return fmt.Errorf("POST /v1/actions on %s: %+v", dpy, resp)
		}
		return nil
	}
}

func report(b *testing.B, name string, ds []time.Duration) float64 {
	p50 := rig.Report(b, name, ds)
	b.ReportMetric(0, "ns/op")
	return p50
}
