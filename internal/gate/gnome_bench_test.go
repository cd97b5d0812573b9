package gate_test

import (
	"bufio"
	"context"
	"fmt"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/wayland/mutterframes"
)

// BenchmarkGnomeClick measures a click's round trip on a real headless
// mutter: from the gate's ClickAt until foot (fullscreen, xterm SGR mouse
// reporting on) has written the release report to a pipe the benchmark
// reads. It reports the p50 and p95 in ms.
func BenchmarkGnomeClick(b *testing.B) { gnomeClick(b, gate.Policy{}) }

// BenchmarkGnomeClickUserFirst is BenchmarkGnomeClick with the user-first
// check on: each click reads mutter's idle monitor before it and waits
// for mutter to have handled it after (portal.IdleWatch).
func BenchmarkGnomeClickUserFirst(b *testing.B) {
	gnomeClick(b, gate.Policy{PauseOnUser: true, Quiet: time.Millisecond})
}

func gnomeClick(b *testing.B, pol gate.Policy) {
	h := startMutter(b, "foot")
	ctx := gate.WithCaller(context.Background(), gate.Caller{Token: "t", Engine: "bench"})
	dir := b.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		b.Fatal(err)
	}
	fifo := filepath.Join(dir, "reports")
	if err := syscall.Mkfifo(fifo, 0o666); err != nil {
		b.Fatal(err)
	}
	script := fmt.Sprintf(`stty raw -echo; printf '\033[?1000h\033[?1006h'; exec cat > %s`, fifo)
	cmd := exec.Command("foot", "--fullscreen", "sh", "-c", script)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + dir, "LANG=C.UTF-8"}, h.Env()...)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	f, err := os.Open(fifo) // blocks until cat opens it
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	// No hold between press and release (ACU_ACT_CLICK_HOLD=0), as the
	// wlroots figure in docs/wayland.md is measured.
	g := gate.New(gate.Options{DefaultDisplay: h.Socket(), Env: []string{"DBUS_SESSION_BUS_ADDRESS=" + h.BusAddress()}, Input: gate.InputOptions{ClickDelay: -1}, Policy: pol})
	defer g.Close()
	hands, err := g.Hands(ctx, h.Socket())
	if err != nil {
		b.Fatal(err)
	}
	// foot's reports, read as they come: a release report ends with 'm'.
	releases := make(chan struct{}, 16)
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
	p := image.Pt(300, 200)
	click := func(wait time.Duration) bool {
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

// BenchmarkGnomeScreenshot measures a screenshot of a real headless
// mutter's 1280x720 monitor: "first" opens the screen cast and pipeline
// and waits for the first frame (what `acu screenshot` does), "hub" is
// a capture from the daemon's running hub after the screen changed.
func BenchmarkGnomeScreenshot(b *testing.B) {
	h := startMutter(b)
	ctx := context.Background()
	screen := capture.Target{Kind: capture.Screen}
	b.Run("first", func(b *testing.B) {
		for range b.N {
			hub := mutterframes.New(mutterframes.Options{Bus: func() string { return h.BusAddress() }})
			if _, err := hub.Capture(ctx, h.Socket(), screen); err != nil {
				b.Fatal(err)
			}
			hub.Close()
		}
	})
	b.Run("hub", func(b *testing.B) {
		hub := mutterframes.New(mutterframes.Options{Bus: func() string { return h.BusAddress() }})
		defer hub.Close()
		if _, err := hub.Capture(ctx, h.Socket(), screen); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for range b.N {
			if _, err := hub.Capture(ctx, h.Socket(), screen); err != nil {
				b.Fatal(err)
			}
		}
	})
}
