package waylandbench

import (
	"testing"

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
	ctx := rig.OpenLive(b, api.NewClient(url, rig.Token), 1000, 700)
	lat := rig.GlassToGlass(b, ctx, func(i int) {
		d.term.write(b, block(17+i%200)) // a colour of the 256-colour cube, new each time
	})
	report(b, "g2g", lat)
	b.ReportMetric(rig.Quantile(lat, 0), "g2g_min_ms")
}
