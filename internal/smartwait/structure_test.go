package smartwait

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/a11yjudge"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/store"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// A structural wait is woken by the application's accessibility events:
// with a poll of 30 s it resolves as soon as the button is enabled, from
// the tree, with no call to the frame judge.
func TestStructureWaitOnEvents(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{})
	s := atspitest.Start(t, dpy)
	a := a11yjudge.New(a11yjudge.Options{SessionBus: s.SessionBus})
	t.Cleanup(a.Close)
	m, vision := newMarkerJudge(t)
	h := newHarness(t, harnessOpts{judge: vision, display: dpy, modify: func(o *Options) { o.Structure = a }})
	fx := s.StartFixture(t, atspitest.GTK, "Acu Fixture")
	job, err := h.eng.Create(t.Context(), Spec{Criteria: "the Install button is enabled", Timeout: time.Minute, PollInterval: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the first judgement", func() bool { return len(h.verdicts(job.ID)) > 0 })
	if _, err := fx.Do(t.Context(), "enable"); err != nil {
		t.Fatal(err)
	}
	got := h.waitEnd(job.ID, 10*time.Second)
	if got.Status != StatusResolved || got.Evidence != `push button "Install" in "Acu Fixture" (gtk_fixture.py) is enabled` {
		t.Errorf("job = %s %q, want resolved by the tree", got.Status, got.Evidence)
	}
	if n := m.calls.Load(); n != 0 {
		t.Errorf("frame judge calls = %d, want 0", n)
	}
	for _, ev := range h.verdicts(job.ID) {
		var v struct {
			Backend string  `json:"backend"`
			Cost    float64 `json:"costUsd"`
		}
		if err := json.Unmarshal(ev.Data, &v); err != nil || v.Backend != a11yjudge.Name || v.Cost != 0 {
			t.Errorf("verdict event %s: want backend a11y at no cost", ev.Data)
		}
	}
	run, err := h.reg.Get(t.Context(), job.ID)
	if err != nil {
		t.Fatal(err)
	}
	var r result
	if err := json.Unmarshal(run.Result, &r); err != nil || r.Judges[a11yjudge.Name] == 0 || r.ModelCalls != 0 || r.CostUSD == nil || *r.CostUSD != 0 {
		t.Errorf("run result %s: want a11y judgements, no model call, cost 0", run.Result)
	}
}

// What the tree decides needs no judge: a daemon without one still takes
// structural waits, and refuses the ones with a part it cannot decide.
func TestStructureWithoutJudge(t *testing.T) {
	a := a11yjudge.New(a11yjudge.Options{SessionBus: "unix:path=/nonexistent/bus"})
	t.Cleanup(a.Close)
	h := newHarness(t, harnessOpts{display: testx.StartXvfb(t, xvfb.Options{}), modify: func(o *Options) { o.Structure = a }})
	if _, err := h.eng.Create(t.Context(), Spec{Criteria: "the Save dialog is open", Timeout: time.Minute}); err != nil {
		t.Errorf("structural wait without a judge: %v", err)
	}
	_, err := h.eng.Create(t.Context(), Spec{Criteria: `the Save dialog is open and "Saved" is visible`, Timeout: time.Minute})
	if !errors.Is(err, ErrNoJudge) {
		t.Errorf("structural wait with a text part, without a judge = %v, want ErrNoJudge", err)
	}
	if _, err := h.eng.Create(t.Context(), Spec{Criteria: `"Saved" is visible`, Timeout: time.Minute}); !errors.Is(err, ErrNoJudge) {
		t.Errorf("text wait without a judge = %v, want ErrNoJudge", err)
	}
}

// BenchmarkStructureDetection measures, on a real GTK application, the
// time from a change (the application's own clock once its progress bar
// is set) to the wait's verdict that the condition holds, and to the wait's
// end (notification enqueued, run ended). Each iteration is one wait.
//
//	go test -run '^$' -bench StructureDetection -benchtime 20x -count 3 ./internal/smartwait/
func BenchmarkStructureDetection(b *testing.B) {
	dpy := testx.StartXvfb(b, xvfb.Options{})
	s := atspitest.Start(b, dpy)
	a := a11yjudge.New(a11yjudge.Options{SessionBus: s.SessionBus})
	b.Cleanup(a.Close)
	dir := b.TempDir()
	db, err := store.Open(context.Background(), filepath.Join(dir, "acu.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	hub, err := capture.NewHub(capture.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { hub.Close() })
	reg := runs.New(db, runs.Options{})
	eng := New(Options{Runs: reg, Capture: hub, Store: db, Structure: a, DefaultDisplay: dpy, PollInterval: 30 * time.Second, MaxPoll: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = eng.Run(ctx); close(done) }()
	b.Cleanup(func() { cancel(); <-done })
	fx := s.StartFixture(b, atspitest.GTK, "Acu Fixture")
	for _, c := range []struct{ name, reset, cond, change string }{
		{"progress", "progress 0", "the download progress reaches 100%", "progress 1"},
		{"dialog", "", "the Export dialog is open", "dialog Export"},
	} {
		b.Run(c.name, func(b *testing.B) {
			var verdict, end []time.Duration
			for range b.N {
				reset := c.reset
				if c.name == "dialog" {
					reset = "close Export"
				}
				if _, err := fx.Do(ctx, reset); err != nil && c.name != "dialog" {
					b.Fatal(err)
				}
				job, err := eng.Create(ctx, Spec{Criteria: c.cond, Timeout: time.Minute, PollInterval: 30 * time.Second})
				if err != nil {
					b.Fatal(err)
				}
				for start := time.Now(); ; { // its first judgement: not yet
					j, err := eng.Get(ctx, job.ID)
					if err != nil {
						b.Fatal(err)
					}
					if j.LastVerdict != nil && j.LastVerdict.Error == "" {
						break
					}
					if time.Since(start) > 30*time.Second {
						b.Fatalf("no judgement within 30 s: %+v", j)
					}
					time.Sleep(5 * time.Millisecond)
				}
				applied, err := fx.Do(ctx, c.change)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := reg.Wait(ctx, job.ID, 30*time.Second); err != nil {
					b.Fatal(err)
				}
				ended := atspitest.Monotonic()
				j, err := eng.Get(ctx, job.ID)
				if err != nil || j.Status != StatusResolved {
					b.Fatalf("job = %+v, %v; want resolved", j, err)
				}
				// The verdict event's wall time, on the application's clock.
				wallToMono := atspitest.Monotonic() - time.Duration(time.Now().UnixNano())
				evs, err := db.EventsAfter(ctx, 0, store.EventFilter{RunID: job.ID, Streams: []string{StreamVerdict}, Limit: 1000})
				if err != nil || len(evs) == 0 {
					b.Fatalf("verdict events: %v", err)
				}
				at := evs[len(evs)-1].At
				verdict = append(verdict, time.Duration(at.UnixNano())+wallToMono-applied)
				end = append(end, ended-applied)
			}
			b.ReportMetric(pct(verdict, 50), "verdict-p50-ms")
			b.ReportMetric(pct(verdict, 90), "verdict-p90-ms")
			b.ReportMetric(pct(end, 50), "end-p50-ms")
			b.ReportMetric(pct(end, 90), "end-p90-ms")
		})
	}
}

func pct(ds []time.Duration, p int) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	i := (len(s)*p + 99) / 100
	return float64(s[max(i-1, 0)].Microseconds()) / 1000
}

// TestFallbackKeepsTheNameAsWritten: the OCR judge reads text as shown, so
// a window named in a structural part is looked for in the case the
// condition wrote it.
func TestFallbackKeepsTheNameAsWritten(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"downloads", "the window 'Downloads' is open", "Downloads"},
		{"save as", `the "Save As" dialog is gone`, "Save As"},
		{"ok", "nothing like it", "ok"},
	} {
		if got := asWritten(c.name, c.text); got != c.want {
			t.Errorf("asWritten(%q, %q) = %q, want %q", c.name, c.text, got, c.want)
		}
	}
}
