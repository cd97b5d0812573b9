package smartwaitbench

import (
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/config"
	"github.com/acu-dev/acu/internal/judge"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/notify"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/secret"
	"github.com/acu-dev/acu/internal/smartwait"
	"github.com/acu-dev/acu/internal/store"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

var (
	grey = color.RGBA{R: 0x80, G: 0x80, B: 0x80, A: 0xff}
	red  = color.RGBA{R: 0xff, A: 0xff}
)

// rig is one acu "process" wired from real parts.
type rig struct {
	db    *store.DB
	reg   *runs.Registry
	hub   *capture.Hub
	eng   *smartwait.Engine
	calls *atomic.Int64

	mu    sync.Mutex
	woken map[string]time.Time // run id -> when its notification arrived
	wake  chan string
}

// newRig starts the engine with a fake judge answering latency after each
// request arrives. With decode, the judge runs in this process and answers
// YES when enough marker-red pixels are in the JPEG it receives; without,
// it runs in a child process and always answers NO, so its request
// recording and image decoding do not count in this process's CPU and RSS.
func newRig(b *testing.B, display string, latency time.Duration, decode bool) *rig {
	b.Helper()
	r := &rig{calls: new(atomic.Int64), woken: map[string]time.Time{}, wake: make(chan string, 4096)}
	var o llm.Options
	if decode {
		srv := llmtest.NewOpenAI(b, func(q llmtest.Request) llmtest.Reply {
			r.calls.Add(1)
			defer func() { time.Sleep(time.Until(q.At.Add(latency))) }()
			for _, im := range q.Images() {
				if countMarker(im) >= 100 {
					return llmtest.Reply{Text: "YES: a red marker is visible."}
				}
			}
			return llmtest.Reply{Text: "NO: no red marker is visible."}
		})
		o = srv.Options()
	} else {
		o = fakeJudgeProcess(b, latency)
	}
	o.MaxRetries = 0
	c, err := llm.New(o)
	if err != nil {
		b.Fatal(err)
	}
	jb, err := judge.NewVision(judge.VisionOptions{Client: &counting{c: c, n: r.calls, skip: decode}, Backend: "openrouter", Model: "google/gemini-2.0-flash-lite-001"})
	if err != nil {
		b.Fatal(err)
	}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body struct {
			RunID string `json:"runId"`
		}
		_ = json.NewDecoder(req.Body).Decode(&body)
		r.mu.Lock()
		if _, ok := r.woken[body.RunID]; !ok {
			r.woken[body.RunID] = time.Now()
			r.wake <- body.RunID
		}
		r.mu.Unlock()
	}))
	b.Cleanup(hook.Close)
	wh, err := notify.NewWebhook(notify.WebhookOptions{URL: hook.URL})
	if err != nil {
		b.Fatal(err)
	}
	r.db, err = store.Open(context.Background(), filepath.Join(b.TempDir(), "acu.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	r.reg = runs.New(r.db, runs.Options{})
	r.hub, err = capture.NewHub(capture.Options{})
	if err != nil {
		b.Fatal(err)
	}
	disp, err := notify.NewDispatcher(r.db, notify.DispatcherOptions{Notifiers: []notify.Notifier{wh}, PerNotifier: 64})
	if err != nil {
		b.Fatal(err)
	}
	r.eng = smartwait.New(smartwait.Options{Runs: r.reg, Capture: r.hub, Judge: jb, Store: r.db, Notify: disp, DefaultDisplay: display})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = disp.Run(ctx) })
	wg.Go(func() { _ = r.eng.Run(ctx) })
	b.Cleanup(func() {
		cancel()
		wg.Wait()
		r.hub.Close()
		r.db.Close()
	})
	return r
}

// counting counts model calls made through it (when the fake judge is in
// another process and cannot count them itself).
type counting struct {
	c    *llm.Client
	n    *atomic.Int64
	skip bool
}

func (c *counting) Chat(ctx context.Context, req llm.Request) (llm.Response, error) {
	if !c.skip {
		c.n.Add(1)
	}
	return c.c.Chat(ctx, req)
}

const fakeJudgeEnv = "ACU_BENCH_FAKE_JUDGE_LATENCY"

// fakeJudgeProcess starts this test binary as a fake judge process
// (TestFakeJudgeProcess) and returns client options aimed at it.
func fakeJudgeProcess(b *testing.B, latency time.Duration) llm.Options {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFakeJudgeProcess$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), fakeJudgeEnv+"="+latency.String())
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			b.Errorf("fake judge process: %v", err)
		}
	})
	var url, key string
	if _, err := fmt.Fscanf(stdout, "URL %s KEY %s\n", &url, &key); err != nil {
		b.Fatalf("read fake judge address: %v", err)
	}
	go io.Copy(io.Discard, stdout) //nolint:errcheck // drains the child's test output until it exits
	return llm.Options{Provider: llm.OpenAI, BaseURL: url, Model: llmtest.Model, APIKey: secret.String(key), Timeout: 10 * time.Second, Name: "bench"}
}

// TestFakeJudgeProcess is the child process of fakeJudgeProcess: an
// OpenAI-compatible fake judge answering NO after a fixed latency, until its
// standard input closes. Run directly, it does nothing.
func TestFakeJudgeProcess(t *testing.T) {
	lat, err := time.ParseDuration(os.Getenv(fakeJudgeEnv))
	if err != nil {
		t.Skip("helper process of BenchmarkConcurrentWaits")
	}
	srv := llmtest.NewOpenAI(t, func(q llmtest.Request) llmtest.Reply {
		time.Sleep(time.Until(q.At.Add(lat)))
		return llmtest.Reply{Text: "NO: the condition is not met."}
	})
	fmt.Printf("URL %s KEY %s\n", srv.URL, srv.Key())
	_, _ = io.Copy(io.Discard, os.Stdin)
}

func countMarker(im llmtest.Image) int {
	if im.Image == nil {
		return 0
	}
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

func (r *rig) waitWoken(b *testing.B, id string) time.Time {
	b.Helper()
	deadline := time.After(60 * time.Second)
	for {
		r.mu.Lock()
		at, ok := r.woken[id]
		r.mu.Unlock()
		if ok {
			return at
		}
		select {
		case <-r.wake:
		case <-deadline:
			b.Fatalf("no notification for %s", id)
		}
	}
}

func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p * float64(len(s)-1))
	return s[i]
}

// BenchmarkDetectionLatency: a screen change to the agent's notification
// (webhook delivery), fake judge of fixed 300 ms latency. One trial per b.N;
// reports p50/p95 in ms.
func BenchmarkDetectionLatency(b *testing.B) {
	b.ReportAllocs()
	dpy := testx.StartXvfb(b, xvfb.Options{Width: 1280, Height: 720})
	w := testx.NewWindow(b, dpy, testx.Spec{Title: "canvas", X: 100, Y: 100, W: 200, H: 150, Fill: grey})
	r := newRig(b, dpy, 300*time.Millisecond, true)
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		w.Fill(grey)
		// A fresh criteria per trial: no verdict from an earlier trial is reused.
		job, err := r.eng.Create(context.Background(), smartwait.Spec{Criteria: fmt.Sprintf("a red marker is visible (trial %d)", i), Timeout: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		for {
			j, _ := r.eng.Get(context.Background(), job.ID)
			if j.Evaluations > 0 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond) // the change lands on an idle job, as it does in real waits
		b.StartTimer()
		t0 := time.Now()
		w.Fill(red)
		at := r.waitWoken(b, job.ID)
		lat = append(lat, at.Sub(t0))
	}
	b.StopTimer()
	b.ReportMetric(float64(percentile(lat, 0.5).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(percentile(lat, 0.95).Microseconds())/1000, "p95-ms")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkJudgeCalls: one 30 s wait on a screen that changes N times (N-1
// single-pixel changes, then the marker), evenly spread. Reports judge calls
// (target N+1, whatever the duration) and what the seed's fixed 1 s poll
// makes over the same time (one a second: 300 for a 5-minute wait).
func BenchmarkJudgeCalls(b *testing.B) {
	const (
		N   = 10
		gap = 3 * time.Second
	)
	dpy := testx.StartXvfb(b, xvfb.Options{Width: 1280, Height: 720})
	w := testx.NewWindow(b, dpy, testx.Spec{Title: "canvas", X: 100, Y: 100, W: 200, H: 150, Fill: grey})
	r := newRig(b, dpy, 50*time.Millisecond, true)
	var calls, seed float64
	for i := range b.N {
		w.Fill(grey)
		before := r.calls.Load()
		start := time.Now()
		job, err := r.eng.Create(context.Background(), smartwait.Spec{Criteria: fmt.Sprintf("a red marker is visible (run %d)", i), Timeout: 5 * time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		for k := range N - 1 {
			time.Sleep(gap)
			w.SetPixel(k, 0, color.RGBA{R: 0x10, G: byte(0x10 + k), B: byte(i)})
		}
		time.Sleep(gap)
		w.Fill(red)
		r.waitWoken(b, job.ID)
		calls += float64(r.calls.Load() - before)
		seed += time.Since(start).Seconds()
	}
	b.ReportMetric(calls/float64(b.N), "judge-calls/wait")
	b.ReportMetric(float64(N+1), "target-calls/wait")
	b.ReportMetric(seed/float64(b.N), "seed-1s-poll-calls/wait")
}

// BenchmarkBusyScreen: a wait on a screen with a clock that changes every
// second for 30 s, a fake judge of 300 ms (NO). The seed judges, then sleeps
// its 1 s poll: at 0, 1.3 s, 2.6 s, ..., 24 calls in 30 s. acu must never make more, and still judges
// the first change after a quiet spell at once (BenchmarkDetectionLatency).
func BenchmarkBusyScreen(b *testing.B) {
	const (
		dur     = 30 * time.Second
		latency = 300 * time.Millisecond
	)
	dpy := testx.StartXvfb(b, xvfb.Options{Width: 1280, Height: 720})
	w := testx.NewWindow(b, dpy, testx.Spec{Title: "clock", X: 100, Y: 100, W: 200, H: 150, Fill: grey})
	r := newRig(b, dpy, latency, true)
	var calls float64
	for i := range b.N {
		before := r.calls.Load()
		job, err := r.eng.Create(context.Background(), smartwait.Spec{Criteria: fmt.Sprintf("a red marker is visible (run %d)", i), Timeout: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		tick := time.NewTicker(time.Second)
		for k := 0; k < int(dur/time.Second); k++ {
			<-tick.C
			w.SetPixel(k%200, 0, color.RGBA{R: 0x10, G: byte(k), B: byte(i), A: 0xff})
		}
		tick.Stop()
		calls += float64(r.calls.Load() - before)
		if _, err := r.eng.Cancel(context.Background(), job.ID, "benchmark over"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(calls/float64(b.N), "judge-calls/30s")
	// The seed judges at 0, 1.3 s, 2.6 s, ...: one call, then one per
	// judge latency plus its 1 s sleep.
	b.ReportMetric(math.Floor(dur.Seconds()/(time.Second+latency).Seconds())+1, "seed-calls/30s")
}

// BenchmarkConcurrentWaits: many waits across several displays, each display
// changing one pixel a second; fake judge of 300 ms that does not decode.
// Reports CPU (process user+sys over wall), peak RSS, captures per display
// and judge calls. The fake judge runs in a child process; this process
// holds the engine, capture hub, store, dispatcher and a webhook receiver.
// BenchmarkConcurrentWaits runs many waits on several displays under the
// daemon's default soft memory limit (ACU_MEMORY_LIMIT; GOMEMLIMIT wins when
// set, as in acu). conditions=20 repeats 20 conditions (judgements are
// shared between jobs); conditions=distinct gives every wait its own.
func BenchmarkConcurrentWaits(b *testing.B) {
	if os.Getenv("GOMEMLIMIT") == "" {
		c, _, _, err := config.Load(func(string) string { return "" }, nil, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(c.MemoryLimit))
	}
	for _, c := range []struct {
		waits, displays int
		distinct        bool
	}{{100, 2, false}, {1000, 10, false}, {1000, 10, true}} {
		conds := "20"
		if c.distinct {
			conds = "distinct"
		}
		b.Run(fmt.Sprintf("waits=%d/displays=%d/conditions=%s", c.waits, c.displays, conds), func(b *testing.B) {
			for range b.N {
				concurrentWaits(b, c.waits, c.displays, c.distinct, 10*time.Second)
			}
		})
	}
}

func concurrentWaits(b *testing.B, waits, displays int, distinct bool, dur time.Duration) {
	dpys := make([]string, displays)
	wins := make([]*testx.Window, displays)
	for i := range dpys {
		dpys[i] = testx.StartXvfb(b, xvfb.Options{Width: 1280, Height: 720})
		wins[i] = testx.NewWindow(b, dpys[i], testx.Spec{Title: "canvas", X: 100, Y: 100, W: 200, H: 150, Fill: grey})
	}
	r := newRig(b, dpys[0], 300*time.Millisecond, false)
	var ids []string
	for i := range waits {
		n := i % 20
		if distinct {
			n = i
		}
		j, err := r.eng.Create(context.Background(), smartwait.Spec{
			Criteria: fmt.Sprintf("condition %d is met", n),
			Display:  dpys[i%displays], Timeout: time.Hour,
		})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	cpu0 := cpuTime()
	start := time.Now()
	ticker := time.NewTicker(time.Second)
	for k := 0; time.Since(start) < dur; k++ {
		<-ticker.C
		for i, w := range wins {
			w.SetPixel(k%200, i%150, color.RGBA{B: byte(k)})
		}
	}
	ticker.Stop()
	wall := time.Since(start)
	cpu := cpuTime() - cpu0
	var captures uint64
	for _, d := range dpys {
		captures += r.hub.StatsFor(d).Captures
	}
	b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "cpu-%")
	b.ReportMetric(float64(maxRSS())/1024, "maxrss-MB")
	b.ReportMetric(float64(captures)/float64(displays)/wall.Seconds(), "captures/display/s")
	b.ReportMetric(float64(r.calls.Load())/wall.Seconds(), "judge-calls/s")
	st := r.eng.Stats()
	b.ReportMetric(float64(st.SkippedByHash)/wall.Seconds(), "skipped/s")
	b.ReportMetric(float64(st.Deduped)/wall.Seconds(), "deduped/s")
	for _, id := range ids {
		if _, err := r.eng.Cancel(context.Background(), id, "benchmark over"); err != nil && !strings.Contains(err.Error(), "ended") {
			b.Fatal(err)
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// maxRSS is the process's peak resident set in KiB.
func maxRSS() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Maxrss
}
