package waylandbench

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/acu-dev/acu/bench/internal/rig"
	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/live"
	"github.com/acu-dev/acu/internal/server"
)

// BenchmarkGlassToGlass: the terminal repaints a 40x15-cell block in a new
// colour; the time from writing it to the terminal until headless
// Chromium has painted the live view's frame that shows it (the page's
// own paint time, read afterwards, so polling adds nothing). The page
// shows the 1280x720 screen scaled into a 1000x700 window. As
// bench/live's BenchmarkGlassToGlass, whose change is an X window's fill
// (no terminal in the path).
func BenchmarkGlassToGlass(b *testing.B) {
	for _, be := range backends {
		b.Run(be, func(b *testing.B) { glassToGlass(b, be) })
	}
}

func glassToGlass(b *testing.B, backend string) {
	d := startDesk(b, backend, "-echo", "")
	core := rig.NewCore(b, nil)
	lv := live.New(live.Options{Capture: d.hub, DefaultDisplay: d.display})
	rig.Go(b, lv.Run)
	url := rig.Serve(b, server.New(server.Options{Token: rig.Token, Runs: core.Runs, Live: lv}))
	ctx := openLive(b, api.NewClient(url, rig.Token), 1000, 700)
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		time.Sleep(150 * time.Millisecond) // quiet before each change
		seq := eval[int](b, ctx, `window.acuLive.last.seq`)
		t0 := time.Now()
		d.term.write(b, block(17+i%200)) // a colour of the 256-colour cube, new each time
		var wall float64
		for {
			v := eval[[]float64](b, ctx, `[window.acuLive.last.seq, window.acuLive.last.wall]`)
			if int(v[0]) > seq {
				wall = v[1]
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		lat = append(lat, time.UnixMilli(int64(wall)).Sub(t0))
	}
	b.StopTimer()
	report(b, "g2g", lat)
	b.ReportMetric(rig.Quantile(lat, 0), "g2g_min_ms")
}

func openLive(b *testing.B, c *api.Client, w, h int) context.Context {
	b.Helper()
	link, err := c.LoginLink(context.Background(), "/ui/")
	if err != nil {
		b.Fatal(err)
	}
	bin, err := exec.LookPath("chromium")
	if err != nil {
		b.Fatal(err)
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.UserDataDir(b.TempDir()), chromedp.WindowSize(w, h))
	ctx, cancel := chromedp.NewContext(actx)
	if err := chromedp.Do(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cancel(); cancelA() })
	if err := chromedp.Do(ctx, chromedp.Navigate(link.URL)); err != nil {
		b.Fatal(err)
	}
	for range 600 {
		if eval[bool](b, ctx, `!!(window.acuLive && window.acuLive.frames > 0)`) {
			return ctx
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Fatal("the live page painted no frame")
	return nil
}

func eval[T any](b *testing.B, ctx context.Context, expr string) T {
	b.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}
