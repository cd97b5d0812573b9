// Command relay measures the relay under load from a second process on
// loopback: it starts itself as the relay server (-serve), then drives it
// with concurrent clients posting sense events and polling the feed, and
// reports throughput, latency percentiles, and the server's memory after a
// million events.
//
//	go run ./bench/relay -duration 10s -clients 8 -events 1000000
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acu-dev/acu/internal/relay"
)

func main() {
	serve := flag.Bool("serve", false, "run as the relay server (the bench starts this itself)")
	duration := flag.Duration("duration", 10*time.Second, "length of each load phase")
	clients := flag.Int("clients", 8, "concurrent clients per load phase")
	events := flag.Int("events", 1_000_000, "events posted before the memory reading")
	ocrBytes := flag.Int("ocr", 2000, "OCR text size of each sense event")
	flag.Parse()
	if *serve {
		if err := runServer(); err != nil {
			fmt.Fprintln(os.Stderr, "relay bench server:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*duration, *clients, *events, *ocrBytes); err != nil {
		fmt.Fprintln(os.Stderr, "relay bench:", err)
		os.Exit(1)
	}
}

// runServer serves a relay (no model: the loop's calls are not measured
// here) on a loopback port it prints, and answers "mem" on stdin with its
// memory after a GC.
func runServer() error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := relay.New(ctx, relay.Options{Token: benchToken})
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(l.Addr().String())
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			if sc.Text() == "mem" {
				runtime.GC()
				debug.FreeOSMemory()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				b, _ := json.Marshal(map[string]any{"heapAllocMB": mb(ms.HeapAlloc), "heapInuseMB": mb(ms.HeapInuse),
					"sysMB": mb(ms.Sys), "rssMB": rssMB(), "goroutines": runtime.NumGoroutine()})
				fmt.Println(string(b))
			}
		}
		cancel()
	}()
	return r.Serve(ctx, l)
}

// benchToken is the benchmark relay's token, which every client sends.
const benchToken = "bench-relay-token"

// bearer adds the token to every request, as the relay's clients do.
type bearer struct{ next http.RoundTripper }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+benchToken)
	return b.next.RoundTrip(r)
}

func mb(n uint64) float64 { return float64(n*10/(1<<20)) / 10 }

func rssMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return float64(int(kb/1024*10)) / 10
		}
	}
	return 0
}

type result struct {
	name       string
	n          int64
	errs       int64
	throughput float64
	p50, p90   time.Duration
	p99, max   time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("%-22s %9d req  %8.0f req/s  p50 %7s  p90 %7s  p99 %7s  max %7s  errors %d",
		r.name, r.n, r.throughput, r.p50.Round(time.Microsecond), r.p90.Round(time.Microsecond), r.p99.Round(time.Microsecond), r.max.Round(time.Microsecond), r.errs)
}

func run(d time.Duration, clients, events, ocrBytes int) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "-serve")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	out := bufio.NewScanner(stdout)
	if !out.Scan() {
		return fmt.Errorf("the server printed no address")
	}
	base := "http://" + out.Text()
	tr := &http.Transport{MaxIdleConnsPerHost: clients * 2, MaxConnsPerHost: clients * 2}
	hc := &http.Client{Transport: bearer{tr}}
	ocr := strings.Repeat("x", ocrBytes)
	body := func(i int64) []byte {
		return []byte(`{"type":"text","ts":` + strconv.FormatInt(time.Now().UnixMilli(), 10) + `,"ocr":"` + ocr + strconv.FormatInt(i, 10) +
			`","meta":{"app":"code","ssim":0.85}}`)
	}
	feedBody := func(i int64) []byte {
		return []byte(`{"text":"message ` + strconv.FormatInt(i, 10) + `","priority":"normal"}`)
	}

	// drain reads and checks one answer.
	drain := func(path string, resp *http.Response, err error) error {
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("%s: %s", path, resp.Status)
		}
		return nil
	}
	post := func(path string, b []byte) error {
		resp, err := hc.Post(base+path, "application/json", bytes.NewReader(b))
		return drain(path, resp, err)
	}
	get := func(path string) error {
		resp, err := hc.Get(base + path)
		return drain(path, resp, err)
	}
	// Seed the feed so polls return items.
	for i := range int64(100) {
		if err := post("/feed", feedBody(i)); err != nil {
			return err
		}
	}

	phase := func(name string, op func(i int64) error) result {
		var wg sync.WaitGroup
		var seq, errs atomic.Int64
		lats := make([][]time.Duration, clients)
		stop := time.Now().Add(d)
		start := time.Now()
		for c := range clients {
			wg.Go(func() {
				for time.Now().Before(stop) {
					i := seq.Add(1)
					t0 := time.Now()
					if op(i) != nil {
						errs.Add(1)
						continue
					}
					lats[c] = append(lats[c], time.Since(t0))
				}
			})
		}
		wg.Wait()
		el := time.Since(start)
		all := slices.Concat(lats...)
		slices.Sort(all)
		r := result{name: name, n: int64(len(all)), errs: errs.Load(), throughput: float64(len(all)) / el.Seconds()}
		if len(all) > 0 {
			r.p50, r.p90, r.p99, r.max = all[len(all)/2], all[len(all)*9/10], all[len(all)*99/100], all[len(all)-1]
		}
		return r
	}

	fmt.Printf("relay bench: %d clients, %s per phase, sense events with %d bytes of OCR, GOMAXPROCS %d\n", clients, d, ocrBytes, runtime.GOMAXPROCS(0))
	fmt.Println(phase("POST /sense", func(i int64) error { return post("/sense", body(i)) }))
	fmt.Println(phase("GET /feed?after=N", func(i int64) error { return get("/feed?after=" + strconv.FormatInt(i%100, 10)) }))
	fmt.Println(phase("mixed (3 post : 1 get)", func(i int64) error {
		if i%4 == 0 {
			return get("/feed?after=50")
		}
		if i%2 == 0 {
			return post("/feed", feedBody(i))
		}
		return post("/sense", body(i))
	}))

	// A million events (half sense, half feed), then the server's memory.
	t0 := time.Now()
	var next, errs atomic.Int64
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(events) {
					return
				}
				var err error
				if i%2 == 0 {
					err = post("/sense", body(i))
				} else {
					err = post("/feed", feedBody(i))
				}
				if err != nil {
					errs.Add(1)
				}
			}
		})
	}
	wg.Wait()
	fmt.Printf("%d events posted in %s (%.0f/s, %d errors)\n", events, time.Since(t0).Round(time.Millisecond), float64(events)/time.Since(t0).Seconds(), errs.Load())
	fmt.Fprintln(stdin, "mem")
	if !out.Scan() {
		return fmt.Errorf("the server did not report its memory")
	}
	fmt.Println("server memory after them:", out.Text())
	return nil
}
