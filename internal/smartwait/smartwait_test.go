package smartwait

import (
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/judge"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/ocr"
	"github.com/acu-dev/acu/internal/store"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

var (
	grey = color.RGBA{R: 0x80, G: 0x80, B: 0x80, A: 0xff}
	red  = color.RGBA{R: 0xff, A: 0xff}
)

func ocrJudge(t *testing.T) judge.Backend {
	t.Helper()
	eng, err := ocr.New(ocr.Options{})
	if err != nil {
		t.Fatalf("ocr.New: %v", err)
	}
	j, err := judge.NewOCR(judge.OCROptions{Engine: eng})
	if err != nil {
		t.Fatalf("judge.NewOCR: %v", err)
	}
	return j
}

// An xterm shows "Download complete" after 3 s: the OCR-judged wait
// resolves, the exec notifier's message lands in a file exactly, the
// screenshot is saved and the task log updated.
func TestOCRWaitResolves(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 1024, Height: 600})
	xt := testx.StartXterm(t, dpy, testx.XtermSpec{
		Title:    "pretend-download",
		Geometry: "60x10+0+0",
		Args:     []string{"-fa", "Monospace", "-fs", "14", "-bg", "white", "-fg", "black"},
		Command:  []string{"sh", "-c", "echo Downloading...; sleep 3; echo Download complete; sleep 600"},
	})
	h := newHarness(t, harnessOpts{judge: ocrJudge(t), display: dpy})
	const criteria = `"Download complete" is visible`
	job, err := h.eng.Create(t.Context(), Spec{Criteria: criteria, Timeout: 60 * time.Second, Target: "window:" + xt.Title, TaskID: "task-1"})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if job.Status != StatusWatching || !strings.HasPrefix(job.Target, "window:") {
		t.Errorf("Create = %+v, want a watching job on the window", job)
	}
	got := h.waitEnd(job.ID, 60*time.Second)
	if got.Status != StatusResolved {
		t.Fatalf("job ended %s (%s), want resolved", got.Status, got.Reason)
	}
	want := ResolvedMessage(job.ID, criteria, got.Evidence)
	if got.Message != want {
		t.Errorf("Message = %q, want %q", got.Message, want)
	}
	if !strings.HasPrefix(want, "[smart_wait resolved] Job "+job.ID+": "+criteria+" → ") || got.Evidence == "" {
		t.Errorf("message %q lacks the exact prefix or evidence", want)
	}
	lines := h.notified(1)
	if lines[0] != want {
		t.Errorf("notified %q, want %q", lines[0], want)
	}
	png, err := os.ReadFile(got.Screenshot)
	if err != nil || len(png) < 8 || string(png[1:4]) != "PNG" {
		t.Errorf("screenshot %q: %v (%d bytes)", got.Screenshot, err, len(png))
	}
	entries, err := h.db.TaskProgress(t.Context(), "task-1")
	if err != nil {
		t.Fatalf("TaskProgress: %v", err)
	}
	if len(entries) != 1 || entries[0].Message != want || entries[0].RunID != job.ID {
		t.Errorf("task progress = %+v, want one entry %q", entries, want)
	}
	if got.Evaluations < 1 {
		t.Errorf("Evaluations = %d, want >= 1", got.Evaluations)
	}
}

// A fake vision judge that really decodes the JPEG: the wait resolves only
// after the marker is drawn; one changed pixel is judged again; a static
// screen is judged once, not once per poll.
func TestVisionMarkerHashGate(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 640, Height: 480})
	w := testx.NewWindow(t, dpy, testx.Spec{Title: "canvas", X: 10, Y: 10, W: 200, H: 150, Fill: grey})
	mj, jb := newMarkerJudge(t)
	h := newHarness(t, harnessOpts{judge: jb, display: dpy})
	job, err := h.eng.Create(t.Context(), Spec{Criteria: "a red marker is visible", Timeout: 120 * time.Second, Target: "screen", PollInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	eventually(t, "first judgement", func() bool { return mj.calls.Load() == 1 })
	// Many poll intervals on a static screen: still one call.
	eventually(t, "several skipped polls", func() bool { return h.eng.Stats().SkippedByHash >= 10 })
	if n := mj.calls.Load(); n != 1 {
		t.Errorf("judge calls on a static screen = %d, want 1", n)
	}
	w.SetPixel(5, 5, color.RGBA{R: 0x10, G: 0x10, B: 0x10})
	eventually(t, "judgement of the one-pixel change", func() bool { return mj.calls.Load() == 2 })
	eventually(t, "more skipped polls", func() bool { return h.eng.Stats().SkippedByHash >= 20 })
	if n := mj.calls.Load(); n != 2 {
		t.Errorf("judge calls after one pixel change = %d, want 2", n)
	}
	if j, _ := h.eng.Get(t.Context(), job.ID); j.Status != StatusWatching {
		t.Fatalf("job %s before the marker, want watching", j.Status)
	}
	w.Fill(red)
	got := h.waitEnd(job.ID, 60*time.Second)
	if got.Status != StatusResolved || !strings.Contains(got.Evidence, "red marker") {
		t.Fatalf("job = %s %q, want resolved with the judge's evidence", got.Status, got.Evidence)
	}
	if n := mj.calls.Load(); n != 3 {
		t.Errorf("judge calls = %d, want 3 (first frame, one pixel, marker)", n)
	}
	evs := h.verdicts(job.ID)
	if len(evs) != 3 {
		t.Fatalf("verdict events = %d, want 3", len(evs))
	}
	var last map[string]any
	if err := json.Unmarshal(evs[2].Data, &last); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"met", "evidence", "latencyMs", "costUsd", "frameHash", "backend", "model"} {
		if _, ok := last[k]; !ok {
			t.Errorf("verdict event lacks %q: %s", k, evs[2].Data)
		}
	}
	if last["met"] != true {
		t.Errorf("last verdict = %s, want met", evs[2].Data)
	}
	if c, _ := last["costUsd"].(float64); c <= 0 || last["costUnknown"] != nil {
		t.Errorf("verdict cost = %v, costUnknown %v, want the priced model's cost: %s", last["costUsd"], last["costUnknown"], evs[2].Data)
	}
}

// TestVerdictCostUnknown: a judge model with no price, on an endpoint that
// reports no cost, gives verdict events whose cost is null with
// costUnknown, not a silent $0.
func TestVerdictCostUnknown(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 320, Height: 240})
	testx.NewWindow(t, dpy, testx.Spec{Title: "static", W: 100, H: 100, Fill: grey})
	srv := llmtest.NewOpenAI(t, llmtest.Text("NO: nothing red."))
	c := srv.Client(t, func(o *llm.Options) { o.Model = "some-lab/unpriced-model" })
	jb, err := judge.NewVision(judge.VisionOptions{Client: c, Backend: "openai", Model: "some-lab/unpriced-model"})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, harnessOpts{judge: jb, display: dpy})
	job, err := h.eng.Create(t.Context(), Spec{Criteria: "a red marker is visible", Timeout: time.Second, Target: "screen"})
	if err != nil {
		t.Fatal(err)
	}
	h.waitEnd(job.ID, 30*time.Second)
	evs := h.verdicts(job.ID)
	if len(evs) == 0 {
		t.Fatal("no verdict event")
	}
	var v map[string]any
	if err := json.Unmarshal(evs[0].Data, &v); err != nil {
		t.Fatal(err)
	}
	if c, ok := v["costUsd"]; !ok || c != nil || v["costUnknown"] != true {
		t.Errorf("verdict %s: want \"costUsd\":null and \"costUnknown\":true", evs[0].Data)
	}
}

func TestTimeoutCancelUpdate(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 320, Height: 240})
	testx.NewWindow(t, dpy, testx.Spec{Title: "static", W: 100, H: 100, Fill: grey})
	mj, jb := newMarkerJudge(t)
	h := newHarness(t, harnessOpts{judge: jb, display: dpy})

	t.Run("timeout", func(t *testing.T) {
		job, err := h.eng.Create(t.Context(), Spec{Criteria: "a red marker is visible", Timeout: time.Second})
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		got := h.waitEnd(job.ID, 30*time.Second)
		want := "[smart_wait timeout] Job " + job.ID + ": a red marker is visible — Timeout after 1s."
		if got.Status != StatusTimeout || got.Message != want {
			t.Errorf("job = %s %q, want timeout %q", got.Status, got.Message, want)
		}
		if !contains(h.notified(1), want) {
			t.Errorf("notifications %q lack %q", h.notified(1), want)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		job, err := h.eng.Create(t.Context(), Spec{Criteria: "a red marker is visible", Timeout: time.Hour})
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		got, err := h.eng.Cancel(t.Context(), job.ID, "the agent moved on")
		if err != nil {
			t.Fatalf("Cancel: %v", err)
		}
		want := "[smart_wait cancelled] Job " + job.ID + ": a red marker is visible — Cancelled: the agent moved on."
		if got.Status != StatusCancelled || got.Reason != "the agent moved on" || got.Message != want {
			t.Errorf("Cancel = %+v", got)
		}
		res, err := h.reg.Wait(t.Context(), job.ID, time.Second)
		if err != nil || res.Status != StatusCancelled {
			t.Errorf("run = %+v, %v; want cancelled", res, err)
		}
		if _, err := h.eng.Cancel(t.Context(), job.ID, "again"); !errors.Is(err, ErrNotLive) {
			t.Errorf("second Cancel error = %v, want ErrNotLive", err)
		}
		if _, err := h.eng.Cancel(t.Context(), "wait_nosuch", ""); !errors.Is(err, ErrNotFound) {
			t.Errorf("Cancel(unknown) error = %v, want ErrNotFound", err)
		}
	})
	t.Run("update", func(t *testing.T) {
		job, err := h.eng.Create(t.Context(), Spec{Criteria: "a red marker is visible", Timeout: time.Hour})
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		eventually(t, "first judgement", func() bool {
			j, _ := h.eng.Get(t.Context(), job.ID)
			return j.Evaluations == 1
		})
		calls := mj.calls.Load()
		crit := "a grey window is visible"
		to := 2 * time.Second
		before := time.Now()
		got, err := h.eng.Update(t.Context(), job.ID, Update{Criteria: &crit, Timeout: &to})
		if err != nil {
			t.Fatalf("Update: %v", err)
		}
		if got.Criteria != crit || got.Timeout != to || got.Deadline.Before(before.Add(to)) || got.Deadline.After(time.Now().Add(to)) {
			t.Errorf("Update = %+v, want new criteria and a deadline reset from now", got)
		}
		if len(got.History) != 2 || got.History[0].Criteria != "a red marker is visible" {
			t.Errorf("History = %+v, want the original and the update", got.History)
		}
		upd, err := h.db.EventsAfter(t.Context(), 0, store.EventFilter{RunID: job.ID, Streams: []string{StreamUpdate}})
		if err != nil || len(upd) != 1 || !strings.Contains(string(upd[0].Data), `"previous"`) {
			t.Errorf("update events = %+v, %v; want one with the previous state", upd, err)
		}
		// New criteria on the same frame: judged again (the verdict may differ).
		eventually(t, "judgement under the new criteria", func() bool { return mj.calls.Load() == calls+1 })
		run, err := h.reg.Get(t.Context(), job.ID)
		if err != nil {
			t.Fatal(err)
		}
		var sp spec
		if err := json.Unmarshal(run.Spec, &sp); err != nil || sp.Criteria != crit || len(sp.History) != 2 {
			t.Errorf("persisted spec = %s (%v), want the update", run.Spec, err)
		}
		ended := h.waitEnd(job.ID, 30*time.Second)
		want := "[smart_wait timeout] Job " + job.ID + ": " + crit + " — Timeout after 2s."
		if ended.Status != StatusTimeout || ended.Message != want {
			t.Errorf("job = %s %q, want %q", ended.Status, ended.Message, want)
		}
		if _, err := h.eng.Update(t.Context(), job.ID, Update{Criteria: &crit}); !errors.Is(err, ErrNotLive) {
			t.Errorf("Update of an ended job: %v, want ErrNotLive", err)
		}
	})
	t.Run("validation", func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			spec  Spec
			field string
		}{
			{"empty criteria", Spec{Criteria: "  "}, "criteria"},
			{"timeout too long", Spec{Criteria: "x", Timeout: 86401 * time.Second}, "timeout"},
			{"timeout too short", Spec{Criteria: "x", Timeout: time.Millisecond}, "timeout"},
			{"poll too fast", Spec{Criteria: "x", PollInterval: time.Millisecond}, "poll_interval"},
			{"bad target", Spec{Criteria: "x", Target: "nonsense:1"}, "target"},
			{"unknown window, strict", Spec{Criteria: "x", Target: "window:no-such-window", StrictTarget: true}, "target"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := h.eng.Create(t.Context(), tc.spec)
				if !isValidation(err, tc.field) {
					t.Errorf("Create(%+v) error = %v, want a validation error on %s", tc.spec, err, tc.field)
				}
			})
		}
		_, err := h.eng.Create(t.Context(), Spec{Criteria: "x", Target: "window:no-such-window", StrictTarget: true})
		var te *capture.TargetError
		if !errors.As(err, &te) {
			t.Errorf("unknown window error %v is not a *capture.TargetError", err)
		}
		// The OCR judge cannot decide an unquoted condition.
		o := New(Options{Runs: h.reg, Capture: h.hub, Judge: ocrJudge(t), Store: h.db, DefaultDisplay: dpy})
		if _, err := o.Create(t.Context(), Spec{Criteria: "the build looks finished"}); !isValidation(err, "criteria") {
			t.Errorf("OCR judge, unquoted condition: %v, want a criteria validation error", err)
		}
	})
	t.Run("list", func(t *testing.T) {
		all, err := h.eng.List(t.Context(), ListOptions{})
		if err != nil || len(all.Jobs) < 3 || all.Total != len(all.Jobs) || all.Next != "" {
			t.Fatalf("List() = %d jobs of %d (next %q), %v; want >= 3, all of them", len(all.Jobs), all.Total, all.Next, err)
		}
		to, err := h.eng.List(t.Context(), ListOptions{State: StatusTimeout})
		if err != nil || len(to.Jobs) != 2 || to.Total != 2 {
			t.Errorf("List(timeout) = %d jobs of %d, %v; want 2", len(to.Jobs), to.Total, err)
		}
		live, err := h.eng.List(t.Context(), ListOptions{State: "live"})
		if err != nil || len(live.Jobs) != 0 || live.Total != 0 {
			t.Errorf("List(live) = %+v, %v; want none", live, err)
		}
		// Pages of 1: every job once, in order, the total on each page.
		var ids []string
		for before := ""; ; {
			p, err := h.eng.List(t.Context(), ListOptions{Limit: 1, Before: before})
			if err != nil || len(p.Jobs) != 1 || p.Total != all.Total {
				t.Fatalf("List(limit 1, before %q) = %+v, %v", before, p, err)
			}
			ids = append(ids, p.Jobs[0].ID)
			if p.Next == "" {
				break
			}
			before = p.Next
		}
		for i, j := range all.Jobs {
			if i >= len(ids) || ids[i] != j.ID {
				t.Fatalf("paged ids = %v, want the order of List(): %d jobs", ids, len(all.Jobs))
			}
		}
		if _, err := h.eng.List(t.Context(), ListOptions{Before: "wait_nope"}); !isValidation(err, "before") {
			t.Errorf("List(before unknown) = %v, want a before validation error", err)
		}
	})
}

func contains(lines []string, s string) bool {
	for _, l := range lines {
		if l == s {
			return true
		}
	}
	return false
}

// Three concurrent jobs on two displays, each resolving on its own marker.
func TestConcurrentJobsTwoDisplays(t *testing.T) {
	d1 := testx.StartXvfb(t, xvfb.Options{Width: 320, Height: 240})
	d2 := testx.StartXvfb(t, xvfb.Options{Width: 320, Height: 240})
	w1 := testx.NewWindow(t, d1, testx.Spec{Title: "left", X: 0, Y: 0, W: 100, H: 100, Fill: grey})
	w2 := testx.NewWindow(t, d1, testx.Spec{Title: "right", X: 150, Y: 0, W: 100, H: 100, Fill: grey})
	w3 := testx.NewWindow(t, d2, testx.Spec{Title: "other", X: 0, Y: 0, W: 100, H: 100, Fill: grey})
	_, jb := newMarkerJudge(t)
	h := newHarness(t, harnessOpts{judge: jb, display: d1})
	ids := make([]string, 3)
	for i, s := range []Spec{
		{Criteria: "a red marker is visible", Target: "window:left", Display: d1},
		{Criteria: "a red marker is visible", Target: "window:right", Display: d1},
		{Criteria: "a red marker is visible", Target: "screen", Display: d2},
	} {
		s.Timeout = 120 * time.Second
		j, err := h.eng.Create(t.Context(), s)
		if err != nil {
			t.Fatalf("Create(%+v): %v", s, err)
		}
		ids[i] = j.ID
	}
	eventually(t, "three first judgements", func() bool {
		live, _ := h.eng.List(t.Context(), ListOptions{State: "live"})
		n := 0
		for _, j := range live.Jobs {
			if j.Evaluations > 0 {
				n++
			}
		}
		return n == 3
	})
	w2.Fill(red)
	if got := h.waitEnd(ids[1], 60*time.Second); got.Status != StatusResolved {
		t.Fatalf("right window job %s, want resolved", got.Status)
	}
	for _, id := range []string{ids[0], ids[2]} {
		if j, _ := h.eng.Get(t.Context(), id); j.Status != StatusWatching {
			t.Errorf("job %s %s after another window changed, want watching", id, j.Status)
		}
	}
	var wg sync.WaitGroup
	for _, w := range []*testx.Window{w1, w3} {
		wg.Go(func() { w.Fill(red) })
	}
	wg.Wait()
	for _, id := range []string{ids[0], ids[2]} {
		if got := h.waitEnd(id, 60*time.Second); got.Status != StatusResolved {
			t.Errorf("job %s %s, want resolved", id, got.Status)
		}
	}
	if lines := h.notified(3); len(lines) != 3 {
		t.Errorf("notifications = %q, want 3", lines)
	}
}

// A judge answering 500 throughout: the job is not ended early, errors are
// recorded, and the timeout message says the judge failed every time.
func TestJudgeFailsThroughout(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 320, Height: 240})
	testx.NewWindow(t, dpy, testx.Spec{Title: "static", W: 100, H: 100, Fill: grey})
	mj, jb := newMarkerJudge(t)
	mj.srv.Fail(llmtest.Fault{Kind: llmtest.Status, Status: 500, Message: "upstream exploded", Times: -1})
	h := newHarness(t, harnessOpts{judge: jb, display: dpy})
	job, err := h.eng.Create(t.Context(), Spec{Criteria: "a red marker is visible", Timeout: 2 * time.Second, PollInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	got := h.waitEnd(job.ID, 30*time.Second)
	prefix := "[smart_wait timeout] Job " + job.ID + ": a red marker is visible — Timeout after 2s. The judge failed on every evaluation: "
	if got.Status != StatusTimeout || !strings.HasPrefix(got.Message, prefix) || !strings.HasSuffix(got.Message, ".") {
		t.Errorf("job = %s %q, want timeout with prefix %q", got.Status, got.Message, prefix)
	}
	if got.JudgeErrors < 2 || got.JudgeErrors != got.Evaluations {
		t.Errorf("judge errors = %d of %d evaluations, want every one of several (retried on the same frame)", got.JudgeErrors, got.Evaluations)
	}
	if lines := h.notified(1); lines[0] != got.Message {
		t.Errorf("notified %q, want %q", lines[0], got.Message)
	}
	evs := h.verdicts(job.ID)
	if len(evs) == 0 || !strings.Contains(string(evs[0].Data), `"error"`) {
		t.Errorf("verdict events %v lack the error", evs)
	}
}

// An engine restart on the same database mid-wait resumes the job with its
// deadline, then resolves it; a job whose deadline passed while acu was down
// ends as timed out and is notified.
func TestRestart(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 320, Height: 240})
	w := testx.NewWindow(t, dpy, testx.Spec{Title: "canvas", W: 100, H: 100, Fill: grey})
	mj, jb := newMarkerJudge(t)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "acu.db")
	out := filepath.Join(dir, "notified.txt")

	h1 := newHarness(t, harnessOpts{judge: jb, display: dpy, dbPath: dbPath, outFile: out})
	long, err := h1.eng.Create(t.Context(), Spec{Criteria: "a red marker is visible", Timeout: 300 * time.Second, TaskID: "t-restart"})
	if err != nil {
		t.Fatal(err)
	}
	short, err := h1.eng.Create(t.Context(), Spec{Criteria: "a red marker is visible", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "first judgements", func() bool { return mj.calls.Load() >= 1 })
	if j, _ := h1.eng.Get(t.Context(), short.ID); j.Status != StatusWatching {
		t.Fatalf("short job %s before the restart, want watching", j.Status)
	}
	h1.stop() // the "process" exits with both jobs live

	// acu comes back after the short job's deadline (a clock 6 s ahead
	// stands for the downtime).
	later := func() time.Time { return time.Now().Add(6 * time.Second) }
	h2 := newHarness(t, harnessOpts{judge: jb, display: dpy, dbPath: dbPath, outFile: out, modify: func(o *Options) { o.Clock = later }})
	gotShort := h2.waitEnd(short.ID, 30*time.Second)
	if gotShort.Status != StatusTimeout || gotShort.Message != TimeoutMessage(short.ID, "a red marker is visible", 5*time.Second) {
		t.Errorf("short job after restart = %s %q, want timeout", gotShort.Status, gotShort.Message)
	}
	j, err := h2.eng.Get(t.Context(), long.ID)
	if err != nil || j.Status != StatusWatching || !j.Deadline.Equal(long.Deadline) {
		t.Fatalf("resumed job = %+v, %v; want watching with deadline %v", j, err, long.Deadline)
	}
	w.Fill(red)
	got := h2.waitEnd(long.ID, 60*time.Second)
	if got.Status != StatusResolved {
		t.Fatalf("resumed job ended %s, want resolved", got.Status)
	}
	lines := h2.notified(2)
	if !contains(lines, gotShort.Message) || !contains(lines, got.Message) {
		t.Errorf("notifications %q, want the timeout and the resolution", lines)
	}
}

// Settle returns once a window stopped changing; a window that keeps
// changing never settles before the timeout.
func TestSettle(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 320, Height: 240})
	w := testx.NewWindow(t, dpy, testx.Spec{Title: "busy", W: 100, H: 100, Fill: grey})
	_, jb := newMarkerJudge(t)
	h := newHarness(t, harnessOpts{judge: jb, display: dpy})

	t.Run("static", func(t *testing.T) {
		res, err := h.eng.Settle(t.Context(), SettleSpec{Target: "window:busy", Quiet: 200 * time.Millisecond, Timeout: 10 * time.Second})
		if err != nil || !res.Settled || res.Changes != 0 || res.FrameHash == "" {
			t.Errorf("Settle(static) = %+v, %v; want settled with no change", res, err)
		}
		run, err := h.reg.Get(t.Context(), res.RunID)
		if err != nil || run.Kind != KindSettle || run.Status != StatusSettled {
			t.Errorf("settle run = %+v, %v", run, err)
		}
	})
	t.Run("changing then quiet", func(t *testing.T) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := range 5 {
				time.Sleep(100 * time.Millisecond)
				w.SetPixel(i, 0, color.RGBA{B: 0xff})
			}
		}()
		res, err := h.eng.Settle(t.Context(), SettleSpec{Target: "window:busy", Quiet: 400 * time.Millisecond, Timeout: 30 * time.Second})
		<-done
		if err != nil || !res.Settled || res.Changes < 1 {
			t.Errorf("Settle = %+v, %v; want settled after changes", res, err)
		}
	})
	t.Run("never quiet", func(t *testing.T) {
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
				w.SetPixel(i%100, 1, color.RGBA{G: uint8(i)})
			}
		}()
		res, err := h.eng.Settle(t.Context(), SettleSpec{Target: "window:busy", Quiet: 5 * time.Second, Timeout: 6 * time.Second})
		close(stop)
		<-done
		if err != nil || res.Settled || res.Changes < 2 {
			t.Errorf("Settle(busy) = %+v, %v; want not settled, many changes", res, err)
		}
	})
	t.Run("validation", func(t *testing.T) {
		if _, err := h.eng.Settle(t.Context(), SettleSpec{Quiet: 5 * time.Second, Timeout: 2 * time.Second}); !isValidation(err, "quiet") {
			t.Errorf("quiet > timeout: %v", err)
		}
	})
}

// A pty target reads a real tmux session's pane text on a private socket.
func TestPtyTarget(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is required: %v", err)
	}
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 320, Height: 240})
	sock := fmt.Sprintf("acu-sw-%d-%d", os.Getpid(), time.Now().UnixNano())
	tmux := func(args ...string) {
		t.Helper()
		out, err := exec.Command("tmux", append([]string{"-L", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v: %s", args, err, out)
		}
	}
	tmux("new-session", "-d", "-s", "build", "-x", "80", "-y", "24", "sh -c 'echo compiling; sleep 2; echo Build finished OK; sleep 600'")
	t.Cleanup(func() {
		_ = exec.Command("tmux", "-L", sock, "kill-server").Run()
		_ = os.Remove(filepath.Join(fmt.Sprintf("/tmp/tmux-%d", os.Getuid()), sock))
	})

	h := newHarness(t, harnessOpts{judge: ocrJudge(t), display: dpy, modify: func(o *Options) { o.TmuxSocket = sock }})
	job, err := h.eng.Create(t.Context(), Spec{Criteria: `"Build finished" is visible`, Target: "pty:build", Timeout: 60 * time.Second})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if job.Source != sourceTmux {
		t.Errorf("Source = %q, want tmux", job.Source)
	}
	got := h.waitEnd(job.ID, 60*time.Second)
	if got.Status != StatusResolved {
		t.Fatalf("pty job %s (%s), want resolved", got.Status, got.Reason)
	}
	text, err := os.ReadFile(got.Screenshot)
	if err != nil || !strings.Contains(string(text), "Build finished OK") {
		t.Errorf("saved pane text %q: %v", text, err)
	}
	// No such session: falls back to the screen.
	j2, err := h.eng.Create(t.Context(), Spec{Criteria: `"x" is visible`, Target: "pty:nosuch", Timeout: 5 * time.Second})
	if err != nil || j2.Source != sourceScreen {
		t.Errorf("pty fallback = %+v, %v; want source screen", j2, err)
	}
	if _, err := h.eng.Cancel(t.Context(), j2.ID, "done"); err != nil {
		t.Errorf("Cancel: %v", err)
	}
	// Settle on the pane.
	res, err := h.eng.Settle(t.Context(), SettleSpec{Target: "pty:build", Quiet: 300 * time.Millisecond, Timeout: 10 * time.Second})
	if err != nil || !res.Settled {
		t.Errorf("Settle(pty) = %+v, %v", res, err)
	}
}

// The same (criteria, frame) is judged once across jobs.
func TestDedupeAcrossJobs(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 320, Height: 240})
	testx.NewWindow(t, dpy, testx.Spec{Title: "static", W: 100, H: 100, Fill: grey})
	mj, jb := newMarkerJudge(t)
	mj.delay = 300 * time.Millisecond
	h := newHarness(t, harnessOpts{judge: jb, display: dpy})
	var ids []string
	for range 4 {
		j, err := h.eng.Create(t.Context(), Spec{Criteria: "a red marker is visible", Timeout: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	eventually(t, "every job judged", func() bool {
		for _, id := range ids {
			if j, _ := h.eng.Get(t.Context(), id); j.Evaluations == 0 {
				return false
			}
		}
		return true
	})
	if n := mj.calls.Load(); n != 1 {
		t.Errorf("judge calls for 4 jobs on one frame = %d, want 1", n)
	}
	if s := h.eng.Stats(); s.Deduped != 3 || s.JudgeCalls != 1 {
		t.Errorf("Stats = %+v, want 1 call and 3 deduped", s)
	}
	for _, id := range ids {
		if _, err := h.eng.Cancel(t.Context(), id, "test over"); err != nil {
			t.Errorf("Cancel(%s): %v", id, err)
		}
	}
}

// A judge whose first reply is garbage and then YES, on a static screen:
// the garbage is no verdict, so the same frame is asked again (after a
// backoff) and the wait resolves instead of skipping every frame until it
// times out.
func TestUnparsedReplyIsRetried(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 320, Height: 240})
	testx.NewWindow(t, dpy, testx.Spec{Title: "static", W: 100, H: 100, Fill: grey})
	for _, tc := range []struct {
		name  string
		first string
	}{
		{"garbage", "I am not sure what you mean."},
		{"empty", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewOpenAI(t, llmtest.Script(tc.first, "YES: the window is visible."))
			h := newHarness(t, harnessOpts{judge: visionJudge(t, srv), display: dpy})
			job, err := h.eng.Create(t.Context(), Spec{Criteria: "a grey window is visible", Timeout: 60 * time.Second, PollInterval: 100 * time.Millisecond})
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			got := h.waitEnd(job.ID, 90*time.Second)
			if got.Status != StatusResolved {
				t.Fatalf("job ended %s after %d judge calls and %d skipped frames, want resolved", got.Status, srv.Calls(), got.Skipped)
			}
			if n := srv.Calls(); n != 2 {
				t.Errorf("judge calls = %d, want 2 (the unparsed reply, then YES)", n)
			}
			if got.JudgeErrors != 1 {
				t.Errorf("JudgeErrors = %d, want 1 (the unparsed reply)", got.JudgeErrors)
			}
			if s := h.eng.Stats(); s.Unparsed != 1 {
				t.Errorf("Stats.Unparsed = %d, want 1", s.Unparsed)
			}
			evs := h.verdicts(job.ID)
			if len(evs) < 2 || !strings.Contains(string(evs[0].Data), `"unparsed":true`) {
				t.Errorf("verdict events = %d, first %s; want the unparsed reply recorded first", len(evs), evs[0].Data)
			}
		})
	}
}

func TestJudgeBackoff(t *testing.T) {
	for _, tc := range []struct {
		interval time.Duration
		streak   int
		want     time.Duration
	}{
		{time.Second, 0, time.Second},
		{time.Second, 1, 2 * time.Second},
		{time.Second, 3, 8 * time.Second},
		{time.Second, 5, 30 * time.Second},
		{time.Second, 1000, 30 * time.Second},
		{time.Minute, 2, time.Minute},
	} {
		if got := judgeBackoff(tc.interval, tc.streak); got != tc.want {
			t.Errorf("judgeBackoff(%s, %d) = %s, want %s", tc.interval, tc.streak, got, tc.want)
		}
	}
}
