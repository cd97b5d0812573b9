// Package fleet measures a fleet of real `acu serve` daemons on one real
// PostgreSQL 15 server (durable settings: fsync and synchronous commit on):
// 10 daemons (hosts h0..h9, each with its own Xvfb display), 10,000 waits
// created through h0's API, a tenth for each host, so nine in ten are
// claimed across hosts through the database. The judge is an
// OpenAI-compatible fake answering YES at once (no model time: what is
// measured is acu and the database), and every resolution wakes a webhook
// that counts deliveries per key.
//
// Reported per run: claim latency (a remote wait's creation to its
// daemon's "claimed" ownership event), the whole batch's time, resolutions,
// events and notifications per second, and duplicate wakes (must be 0).
//
//	go test -run '^$' -bench Fleet -benchtime 1x -count 3 -timeout 60m ./bench/fleet
//
// ACU_BENCH_FLEET_WAITS and ACU_BENCH_FLEET_DAEMONS change the sizes.
package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/pgtest"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func freePort(tb testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// hook counts webhook deliveries per wait and when they came.
type hook struct {
	mu    sync.Mutex
	keys  map[string]int
	first time.Time
	last  time.Time
}

func (h *hook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var body struct {
		RunID string `json:"runId"`
		Event string `json:"event"`
	}
	json.Unmarshal(b, &body)
	now := time.Now()
	h.mu.Lock()
	h.keys[body.RunID+":"+body.Event]++
	if h.first.IsZero() {
		h.first = now
	}
	h.last = now
	h.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (h *hook) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, c := range h.keys {
		n += c
	}
	return n
}

func BenchmarkFleet(b *testing.B) {
	waits := envInt("ACU_BENCH_FLEET_WAITS", 10000)
	daemons := envInt("ACU_BENCH_FLEET_DAEMONS", 10)
	dir := b.TempDir()
	bin := filepath.Join(dir, "acu")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/acu").CombinedOutput(); err != nil {
		b.Fatalf("build acu: %v\n%s", err, out)
	}
	pg, err := pgtest.Start(pgtest.Options{Durable: true})
	if err != nil {
		b.Fatal(err)
	}
	defer pg.Stop()
	judge := llmtest.NewOpenAI(b, func(r llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "YES: the marker is visible."} })
	judge.SetKey("")

	for range b.N {
		h := &hook{keys: map[string]int{}}
		hs := httptest.NewServer(h)
		_, dsn, err := pg.CreateDB(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		clients := startFleet(b, bin, dsn, daemons, judge.URL, hs.URL)
		res := runBatch(b, clients, dsn, waits, daemons, h)
		idle := idleClaims(b, clients, dsn, 50)
		hs.Close()
		b.ReportMetric(res.claimP50, "claim-p50-ms")
		b.ReportMetric(res.claimP95, "claim-p95-ms")
		b.ReportMetric(res.claimP99, "claim-p99-ms")
		b.ReportMetric(res.elapsed.Seconds(), "batch-s")
		b.ReportMetric(float64(waits)/res.elapsed.Seconds(), "resolutions/s")
		b.ReportMetric(float64(res.events)/res.elapsed.Seconds(), "events/s")
		b.ReportMetric(res.notifyRate, "notifications/s")
		b.ReportMetric(float64(res.dups), "duplicate-wakes")
		b.ReportMetric(idle[0], "idle-claim-p50-ms")
		b.ReportMetric(idle[1], "idle-claim-max-ms")
		b.Logf("%d waits on %d daemons: %d events, claim p50 %.1f ms p95 %.1f ms p99 %.1f ms, batch %s, %.0f notifications/s, %d duplicate wakes; one wait at a time: claim p50 %.1f ms, max %.1f ms",
			waits, daemons, res.events, res.claimP50, res.claimP95, res.claimP99, res.elapsed.Round(time.Millisecond), res.notifyRate, res.dups, idle[0], idle[1])
	}
}

// startFleet starts n daemons (hosts h0..hN-1) on dsn and returns their
// clients; they are stopped at the benchmark's cleanup.
func startFleet(b *testing.B, bin, dsn string, n int, judgeURL, hookURL string) []*api.Client {
	var clients []*api.Client
	for i := range n {
		dpy := testx.StartXvfb(b, xvfb.Options{Width: 320, Height: 240})
		data := filepath.Join(b.TempDir(), "data")
		os.MkdirAll(data, 0o700)
		port := freePort(b)
		cmd := exec.Command(bin, "serve")
		cmd.Env = append(os.Environ(), "HOME="+data, "XDG_CONFIG_HOME="+data, "ACU_DATA_DIR="+data,
			"ACU_DAEMON_PORT="+strconv.Itoa(port), "ACU_RELAY_PORT="+strconv.Itoa(freePort(b)), "DISPLAY="+dpy,
			"ACU_DB="+dsn, "ACU_HOST_ID=h"+strconv.Itoa(i), "ACU_LOG_LEVEL=warn", "ACU_KEEP_JUDGED_FRAMES=false",
			"ACU_VISION_BACKEND=vllm", "ACU_VISION_BASE_URL="+judgeURL, "ACU_VISION_MODEL=fake",
			"ACU_NOTIFIERS=webhook", "ACU_WEBHOOK_URL="+hookURL, "ACU_MEMORY_LIMIT=0")
		logf, _ := os.Create(filepath.Join(data, "serve.log"))
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				<-done
			}
			logf.Close()
		})
		base := fmt.Sprintf("http://127.0.0.1:%d", port)
		deadline := time.Now().Add(60 * time.Second)
		for {
			if resp, err := http.Get(base + "/health"); err == nil {
				resp.Body.Close()
				break
			}
			if time.Now().After(deadline) {
				log, _ := os.ReadFile(filepath.Join(data, "serve.log"))
				b.Fatalf("daemon h%d did not answer:\n%s", i, log)
			}
			time.Sleep(50 * time.Millisecond)
		}
		tok, err := os.ReadFile(filepath.Join(data, "token"))
		if err != nil {
			b.Fatal(err)
		}
		clients = append(clients, api.NewClient(base, strings.TrimSpace(string(tok))))
	}
	return clients
}

type batchResult struct {
	claimP50, claimP95, claimP99 float64
	elapsed                      time.Duration
	events                       int64
	notifyRate                   float64
	dups                         int
}

// runBatch creates the waits through the first daemon, waits for every
// wake, and reads claim times and event counts from the database.
func runBatch(b *testing.B, clients []*api.Client, dsn string, waits, daemons int, h *hook) batchResult {
	ctx := context.Background()
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	for range 32 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= waits {
					return
				}
				_, err := clients[0].CreateWait(ctx, api.CreateWait{Criteria: fmt.Sprintf("marker %d is visible", i),
					Host: "h" + strconv.Itoa(i%daemons), Timeout: 600})
				if err != nil {
					select {
					case errs <- err:
					default:
					}
					return
				}
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatalf("create wait: %v", err)
	default:
	}
	deadline := time.Now().Add(30 * time.Minute)
	for h.count() < waits {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d wakes after 30 min", h.count(), waits)
		}
		time.Sleep(50 * time.Millisecond)
	}
	elapsed := time.Since(start)
	time.Sleep(2 * time.Second) // room for a duplicate wake to show

	var r batchResult
	r.elapsed = elapsed
	h.mu.Lock()
	for _, c := range h.keys {
		r.dups += c - 1
	}
	if span := h.last.Sub(h.first).Seconds(); span > 0 {
		r.notifyRate = float64(waits) / span
	}
	h.mu.Unlock()

	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM events`).Scan(&r.events); err != nil {
		b.Fatal(err)
	}
	rows, err := conn.Query(ctx, `SELECT e.at - r.started_at FROM events e JOIN runs r ON r.id = e.run_id
		WHERE e.stream = 'ownership' AND e.data LIKE '%"claimed"%'`)
	if err != nil {
		b.Fatal(err)
	}
	var claims []float64
	for rows.Next() {
		var ms int64
		if err := rows.Scan(&ms); err != nil {
			b.Fatal(err)
		}
		claims = append(claims, float64(ms))
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	slices.Sort(claims)
	if len(claims) > 0 {
		pct := func(p float64) float64 { return claims[min(len(claims)-1, int(p*float64(len(claims))))] }
		r.claimP50, r.claimP95, r.claimP99 = pct(0.50), pct(0.95), pct(0.99)
	}
	b.Logf("%d remote claims measured; GOMAXPROCS %d", len(claims), runtime.GOMAXPROCS(0))
	return r
}

// idleClaims creates n waits one at a time through the first daemon for
// the second host, each after the previous one resolved, and returns the
// median and largest claim latency: a claim with nothing else going on,
// woken by NOTIFY.
func idleClaims(b *testing.B, clients []*api.Client, dsn string, n int) [2]float64 {
	ctx := context.Background()
	host := "h" + strconv.Itoa(1%len(clients))
	var ids []string
	for i := range n {
		w, err := clients[0].CreateWait(ctx, api.CreateWait{Criteria: fmt.Sprintf("idle marker %d is visible", i), Host: host, Timeout: 60})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := clients[0].WaitRun(ctx, w.ID, time.Minute); err != nil {
			b.Fatal(err)
		}
		ids = append(ids, w.ID)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	var lat []float64
	rows, err := conn.Query(ctx, `SELECT e.at - r.started_at FROM events e JOIN runs r ON r.id = e.run_id
		WHERE e.stream = 'ownership' AND e.data LIKE '%"claimed"%' AND r.id = ANY($1)`, ids)
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
		var ms int64
		if err := rows.Scan(&ms); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, float64(ms))
	}
	if err := rows.Err(); err != nil || len(lat) == 0 {
		b.Fatalf("idle claims: %d read, %v", len(lat), err)
	}
	slices.Sort(lat)
	return [2]float64{lat[len(lat)/2], lat[len(lat)-1]}
}
