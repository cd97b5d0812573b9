package smartwait

import (
	"context"
	"errors"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/judge"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/notify"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/store"
)

// harness is one acu "process": a store, a run registry, a capture hub, a
// notification dispatcher and the engine, all real.
type harness struct {
	t       *testing.T
	dbPath  string
	db      *store.DB
	reg     *runs.Registry
	hub     *capture.Hub
	eng     *Engine
	outFile string // the exec notifier appends each message here
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	stopped bool
}

type harnessOpts struct {
	judge   judge.Backend
	dbPath  string // "" = a new database in t.TempDir()
	outFile string // "" = a new file in t.TempDir()
	display string
	modify  func(*Options)
	noStart bool // do not call Resume + Run
}

// newHarness wires the real parts and starts the engine and dispatcher; it
// stops them at cleanup (or earlier with stop) and checks for leaks.
func newHarness(t *testing.T, o harnessOpts) *harness {
	t.Helper()
	dir := t.TempDir()
	if o.dbPath == "" {
		o.dbPath = filepath.Join(dir, "acu.db")
	}
	if o.outFile == "" {
		o.outFile = filepath.Join(dir, "notified.txt")
	}
	db, err := store.Open(t.Context(), o.dbPath, store.Options{})
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	reg := runs.New(db, runs.Options{})
	hub, err := capture.NewHub(capture.Options{})
	if err != nil {
		t.Fatalf("capture.NewHub: %v", err)
	}
	ex, err := notify.NewExec(notify.ExecOptions{Command: `sh -c 'printf "%s\n" "$1" >> "$2"' sh {message} ` + o.outFile})
	if err != nil {
		t.Fatalf("notify.NewExec: %v", err)
	}
	disp, err := notify.NewDispatcher(db, notify.DispatcherOptions{Notifiers: []notify.Notifier{ex}, PollInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("notify.NewDispatcher: %v", err)
	}
	opts := Options{
		Runs:           reg,
		Capture:        hub,
		Judge:          o.judge,
		Store:          db,
		Notify:         disp,
		ScreenshotDir:  filepath.Join(dir, "shots"),
		PollInterval:   250 * time.Millisecond,
		MinPoll:        50 * time.Millisecond,
		DefaultDisplay: o.display,
	}
	if o.modify != nil {
		o.modify(&opts)
	}
	h := &harness{t: t, dbPath: o.dbPath, db: db, reg: reg, hub: hub, eng: New(opts), outFile: o.outFile}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.wg.Add(1)
	go func() { defer h.wg.Done(); _ = disp.Run(ctx) }()
	if !o.noStart {
		if err := h.eng.Resume(t.Context()); err != nil {
			t.Fatalf("Resume: %v", err)
		}
	}
	h.wg.Add(1)
	go func() { defer h.wg.Done(); _ = h.eng.Run(ctx) }()
	t.Cleanup(h.stop)
	return h
}

// stop ends Run and the dispatcher (the "process" exits, live jobs stay
// live in the store) and closes the hub and the database.
func (h *harness) stop() {
	if h.stopped {
		return
	}
	h.stopped = true
	h.cancel()
	h.wg.Wait()
	h.hub.Close()
	if err := h.db.Close(); err != nil {
		h.t.Errorf("close db: %v", err)
	}
	checkNoLeaks(h.t)
}

// checkNoLeaks fails when a goroutine of this package is still running.
func checkNoLeaks(t *testing.T) {
	t.Helper()
	var stacks string
	for range 100 {
		buf := make([]byte, 1<<20)
		stacks = string(buf[:runtime.Stack(buf, true)])
		leaked := false
		for _, g := range strings.Split(stacks, "\n\n") {
			if strings.Contains(g, "smartwait.(*Engine)") {
				leaked = true
			}
		}
		if !leaked {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("leaked engine goroutines:\n%s", stacks)
}

// waitEnd waits for the job's run to end and returns the job.
func (h *harness) waitEnd(id string, limit time.Duration) Job {
	h.t.Helper()
	if _, err := h.reg.Wait(h.t.Context(), id, limit); err != nil {
		h.t.Fatalf("wait for run %s: %v", id, err)
	}
	j, err := h.eng.Get(h.t.Context(), id)
	if err != nil {
		h.t.Fatalf("Get(%s): %v", id, err)
	}
	return j
}

// notified waits until the exec notifier's file holds n lines and returns them.
func (h *harness) notified(n int) []string {
	h.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(h.outFile)
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		if len(b) == 0 {
			lines = nil
		}
		if len(lines) >= n {
			return lines
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("notifications = %q, want %d lines", lines, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// verdicts returns the job's verdict events.
func (h *harness) verdicts(id string) []runs.Event {
	h.t.Helper()
	evs, err := h.db.EventsAfter(h.t.Context(), 0, store.EventFilter{RunID: id, Streams: []string{StreamVerdict}, Limit: 10000})
	if err != nil {
		h.t.Fatalf("events of %s: %v", id, err)
	}
	out := make([]runs.Event, len(evs))
	for i, e := range evs {
		out[i] = runs.Event{Cursor: e.Cursor, RunID: e.RunID, Seq: e.Seq, Stream: e.Stream, At: e.At, Data: e.Data}
	}
	return out
}

// markerJudge is an OpenAI-compatible fake judge that decodes the JPEG it
// receives and answers YES only when enough marker-red pixels are present.
type markerJudge struct {
	srv   *llmtest.Server
	calls atomic.Int64
	delay time.Duration
}

func isMarker(r, g, b uint32) bool { return r>>8 > 200 && g>>8 < 60 && b>>8 < 60 }

func newMarkerJudge(t *testing.T) (*markerJudge, judge.Backend) {
	t.Helper()
	m := &markerJudge{}
	m.srv = llmtest.NewOpenAI(t, func(r llmtest.Request) llmtest.Reply {
		m.calls.Add(1)
		if m.delay > 0 {
			time.Sleep(m.delay)
		}
		imgs := r.Images()
		if len(imgs) != 1 || imgs[0].Image == nil {
			return llmtest.Reply{Text: "NO: no image received."}
		}
		if n := countMarker(imgs[0].Image); n >= 100 {
			return llmtest.Reply{Text: fmt.Sprintf("YES: a red marker of about %d pixels is visible.", n)}
		}
		return llmtest.Reply{Text: "NO: no red marker is visible."}
	})
	return m, visionJudge(t, m.srv)
}

func countMarker(img image.Image) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if isMarker(r, g, bl) {
				n++
			}
		}
	}
	return n
}

func visionJudge(t *testing.T, srv *llmtest.Server) judge.Backend {
	t.Helper()
	o := srv.Options()
	o.MaxRetries = 0
	o.Timeout = 10 * time.Second
	c, err := llm.New(o)
	if err != nil {
		t.Fatalf("llm.New: %v", err)
	}
	v, err := judge.NewVision(judge.VisionOptions{Client: c, Backend: "openrouter", Model: "google/gemini-2.0-flash-lite-001"})
	if err != nil {
		t.Fatalf("judge.NewVision: %v", err)
	}
	return v
}

// eventually polls cond until it holds or 30 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func isValidation(err error, field string) bool {
	var ve *ValidationError
	return errors.As(err, &ve) && ve.Field == field
}
