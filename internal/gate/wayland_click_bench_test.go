package gate_test

import (
	"bufio"
	"context"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// BenchmarkWaylandClick measures a click's round trip through the gate on
// a real headless sway: from ClickAt until foot (xterm SGR mouse
// reporting on) has written the release report to a pipe the benchmark
// reads. "user-first" has the user-first check on (the idle watch's
// round trips are inside each click), "unchecked" has it off. It reports
// the p50 and p95 in ms.
func BenchmarkWaylandClick(b *testing.B) {
	for _, pause := range []bool{true, false} {
		name := "unchecked"
		if pause {
			name = "user-first"
		}
		b.Run(name, func(b *testing.B) { waylandClick(b, pause) })
	}
}

func waylandClick(b *testing.B, pause bool) {
	waylandtest.Need(b, "foot")
	c := waylandtest.Start(b, 640, 400)
	ctx := gate.WithCaller(context.Background(), gate.Caller{Token: "t", Engine: "bench"})
	dir := b.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		b.Fatal(err)
	}
	fifo := filepath.Join(dir, "reports")
	if err := syscall.Mkfifo(fifo, 0o666); err != nil {
		b.Fatal(err)
	}
	waylandtest.Client(b, c, "foot", "sh", "-c", fmt.Sprintf(`stty raw -echo; printf '\033[?1000h\033[?1006h'; exec cat > %s`, fifo))
	f, err := os.Open(fifo) // blocks until cat opens it
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	// No hold between press and release, as the wlroots figures in
	// docs/perf/wayland.md are measured.
	g := gate.New(gate.Options{DefaultDisplay: c.Socket(), Input: gate.InputOptions{ClickDelay: -1},
		Policy: gate.Policy{PauseOnUser: pause, Quiet: time.Second}})
	defer g.Close()
	hands, err := g.Hands(ctx, c.Socket())
	if err != nil {
		b.Fatal(err)
	}
	releases := make(chan struct{}, 16) // foot's release reports end with 'm'
	go func() {
		for {
			c, err := r.ReadByte()
			if err != nil {
				close(releases)
				return
			}
			if c == 'm' {
				releases <- struct{}{}
			}
		}
	}()
	i := 0
	click := func(wait time.Duration) bool {
		p := image.Pt(100+(i%10)*30, 200) // a different cell each time: no double clicks
		i++
		if _, err := hands.ClickAt(ctx, &p, gate.ButtonLeft, 1); err != nil {
			b.Fatal(err)
		}
		select {
		case _, ok := <-releases:
			if !ok {
				b.Fatal("foot's reports ended")
			}
			return true
		case <-time.After(wait):
			return false
		}
	}
	// foot reports once it has drawn and turned mouse reporting on.
	deadline := time.Now().Add(30 * time.Second)
	for !click(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("foot reported no click within 30 s")
		}
	}
	for len(releases) > 0 {
		<-releases
	}
	var took []time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if !click(10 * time.Second) {
			b.Fatal("foot reported no click within 10 s")
		}
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*95/100].Microseconds())/1000, "p95-ms")
}
