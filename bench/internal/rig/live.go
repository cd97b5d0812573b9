package rig

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/acu-dev/acu/internal/api"
)

// Browser starts a headless Chromium with a w×h window, closed at the
// benchmark's cleanup, and returns its context.
func Browser(b *testing.B, w, h int) context.Context {
	b.Helper()
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
	return ctx
}

// Eval evaluates expr in the page of ctx.
func Eval[T any](b *testing.B, ctx context.Context, expr string) T {
	b.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// OpenLive opens the live view (/ui/) of c's server in a new Browser of
// w×h and returns once the page has painted a frame.
func OpenLive(b *testing.B, c *api.Client, w, h int) context.Context {
	b.Helper()
	link, err := c.LoginLink(context.Background(), "/ui/")
	if err != nil {
		b.Fatal(err)
	}
	ctx := Browser(b, w, h)
	if err := chromedp.Do(ctx, chromedp.Navigate(link.URL)); err != nil {
		b.Fatal(err)
	}
	for range 600 {
		if Eval[bool](b, ctx, `!!(window.acuLive && window.acuLive.frames > 0)`) {
			return ctx
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Fatal("the live page painted no frame")
	return nil
}

// GlassToGlass makes b.N changes on the screen the live page (OpenLive)
// shows, change(i) making the i-th after 150 ms of quiet, and returns for
// each the time from the change until Chromium painted the frame that
// shows it: the page's own paint time, read afterwards, so polling adds
// nothing. The benchmark's timer runs only around the changes.
func GlassToGlass(b *testing.B, page context.Context, change func(i int)) []time.Duration {
	b.Helper()
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		time.Sleep(150 * time.Millisecond) // quiet before each change
		seq := Eval[int](b, page, `window.acuLive.last.seq`)
		t0 := time.Now()
		change(i)
		var wall float64
		for {
			v := Eval[[]float64](b, page, `[window.acuLive.last.seq, window.acuLive.last.wall]`)
			if int(v[0]) > seq {
				wall = v[1]
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		lat = append(lat, time.UnixMilli(int64(wall)).Sub(t0))
	}
	b.StopTimer()
	return lat
}
