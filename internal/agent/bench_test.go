package agent

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/acu-dev/acu/internal/annotate"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/store"
	"github.com/acu-dev/acu/internal/testx"
)

// benchTurn is a typical turn: a click and a move with a bbox.
const benchTurn = `{"observation":"bench","bboxes":[{"x1":160,"y1":170,"x2":840,"y2":830}],"actions":[{"name":"click","x1":700,"y1":700},{"name":"move","x1":300,"y1":500}]}`

// benchAgent is a prepared agent on the test display with a live session
// (run directory, run in the store), capturing at 1280x720 with the cache
// off so every turn reads the screen.
func benchAgent(b *testing.B, adjust func(*Options)) *Agent {
	b.Helper()
	testx.NewWindow(b, dpy, testx.Spec{Title: b.Name(), W: screenW, H: screenH, Pattern: desktop})
	time.Sleep(100 * time.Millisecond)
	hub, err := capture.NewHub(capture.Options{NoCache: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { hub.Close() })
	db, err := store.Open(b.Context(), filepath.Join(b.TempDir(), "acu.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	model := llmtest.NewOpenAI(b, nil)
	opts := Options{Display: dpy, Hub: hub, Model: model.Client(b, nil), Physical: true, UI: annotate.Default(),
		RunsDir: filepath.Join(b.TempDir(), "runs"), LogToFile: true, Runs: runs.New(db, runs.Options{})}
	if adjust != nil {
		adjust(&opts)
	}
	a, err := New(opts)
	if err != nil {
		b.Fatal(err)
	}
	release, err := a.prepare(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(release)
	if err := a.startSession(b.Context()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.endSession(runs.StatusCompleted, "") })
	return a
}

// BenchmarkTurn is the engine's overhead per turn without the model at
// 1280x720: parse, execute (XTest click + move, no configured delays beyond
// the click's 10 ms button hold), capture, crop, annotate, encode both PNGs,
// write the run directory, emit the turn event.
func BenchmarkTurn(b *testing.B) {
	for _, c := range []struct {
		trail int
		hold  time.Duration
	}{{1, 0}, {4, 0}, {1, -1}} {
		name := fmt.Sprintf("trail=%d", c.trail)
		if c.hold < 0 {
			name += "/no-click-hold" // the engine's own work, without the deliberate 10 ms button hold
		}
		b.Run(name, func(b *testing.B) {
			a := benchAgent(b, func(o *Options) { o.UI.ExecutedHeat.TrailTurns, o.ClickHold = c.trail, c.hold })
			ctx := b.Context()
			var critical time.Duration
			var each []time.Duration
			cpu0 := cpuTime()
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				if _, _, _, _, err := a.act(ctx, benchTurn); err != nil {
					b.Fatal(err)
				}
				d := time.Since(t0)
				critical += d
				each = append(each, d)
				a.flush()
			}
			// ns/op is the whole turn's work; critical is what delays the
			// model call (the raw PNG and the files run beside it).
			b.ReportMetric(float64(critical.Microseconds())/1000/float64(b.N), "critical-ms/op")
			slices.Sort(each)
			b.ReportMetric(float64(each[len(each)/2].Microseconds())/1000, "p50-critical-ms")
			// CPU time of this process per turn (the X server's share of
			// the capture excluded): steadier than wall time on a busy
			// machine.
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkStage splits the turn into its stages.
func BenchmarkStage(b *testing.B) {
	a := benchAgent(b, nil)
	ctx := b.Context()
	out := Parse(benchTurn)
	s, err := a.capture(ctx)
	if err != nil {
		b.Fatal(err)
	}
	trail := a.ann.Push(a.marks(out.Actions))
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Parse(benchTurn)
		}
	})
	b.Run("execute", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			a.execute(ctx, 1, out.Actions)
		}
	})
	b.Run("capture", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := a.capture(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("annotate", func(b *testing.B) {
		buf := make([]byte, s.w*s.h*4)
		bx := []annotate.Box{{X1: 160, Y1: 170, X2: 840, Y2: 830}}
		b.ReportAllocs()
		for b.Loop() {
			copy(buf, s.pix)
			a.ann.Draw(annotate.Image{Pix: buf, W: s.w, H: s.h, Stride: s.w * 4}, bx, trail)
		}
	})
	b.Run("encode_png", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := frame.EncodePNG(s.pix, s.w, s.h, s.stride); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode_png_annotated", func(b *testing.B) {
		buf := make([]byte, s.w*s.h*4)
		copy(buf, s.pix)
		a.ann.Draw(annotate.Image{Pix: buf, W: s.w, H: s.h, Stride: s.w * 4}, []annotate.Box{{X1: 160, Y1: 170, X2: 840, Y2: 830}}, trail)
		var e frame.PNGEncoder
		b.ReportAllocs()
		for b.Loop() {
			b.SetBytes(int64(len(e.Encode(buf, s.w, s.h, s.w*4))))
		}
	})
	b.Run("encode_png_raw", func(b *testing.B) {
		var e frame.PNGEncoder
		b.ReportAllocs()
		for b.Loop() {
			b.SetBytes(int64(len(e.Encode(s.pix, s.w, s.h, s.stride))))
		}
	})
	b.Run("annotate_and_encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			a.annotateAndEncode(s, out.BBoxes, trail)
		}
	})
	annPNG := a.annotateAndEncode(s, out.BBoxes, trail)
	rawPNG := a.rawEnc.Encode(s.pix, s.w, s.h, s.stride)
	b.Run("log", func(b *testing.B) {
		b.ReportAllocs()
		n := 1000
		for b.Loop() {
			n++
			a.saveRaw(n, out, benchTurn, rawPNG)
			a.saveAnnotated(n, annPNG)
			a.emitTurn(ctx, n, out, nil, nil)
		}
	})
}

// BenchmarkSeedPanelRoundTrip measures the seed's design in real headless
// Chromium: GET /state with the raw PNG as base64 JSON, decode it in the
// page, composite the overlays on a canvas, export PNG base64 and POST it
// back (the engine decodes the JSON and refuses the seq, so nothing
// advances). It excludes the panel's polling interval, which the seed adds
// on top.
func BenchmarkSeedPanelRoundTrip(b *testing.B) {
	a := benchAgent(b, func(o *Options) { o.Annotator = AnnotatorPanel })
	s, err := a.capture(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	raw, err := frame.EncodePNG(s.pix, s.w, s.h, s.stride)
	if err != nil {
		b.Fatal(err)
	}
	out := Parse(benchTurn)
	a.mu.Lock()
	a.st.RawPNG, a.st.Actions, a.st.BBoxes, a.st.Trail, a.st.Phase = raw, out.Actions, out.BBoxes, [][]Action{out.Actions}, PhaseWaitingAnnotated
	a.mu.Unlock()
	srv := httptestServer(b, a)
	ctx := chromium(b, srv)
	js := `(async () => {
		const st = await (await fetch("/state", {cache: "no-store"})).json();
		const png = await window.acuPanelAnnotate(st);
		const r = await fetch("/annotated", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({seq: -1, image_b64: png})});
		return r.status;
	})()`
	b.ReportAllocs()
	for b.Loop() {
		status, err := chromedp.Run(ctx, chromedp.Evaluate[int](js, awaitPromise))
		if err != nil || status != 409 {
			b.Fatalf("round trip: status %d, %v", status, err)
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func awaitPromise(p *runtime.EvaluateParams) { t := true; p.AwaitPromise = &t }

// httptestServer serves the agent's handler (no token: benchmarks only).
func httptestServer(b *testing.B, a *Agent) string {
	srv := httptest.NewServer(a.Handler())
	b.Cleanup(srv.Close)
	return srv.URL
}

func chromium(b *testing.B, url string) context.Context {
	b.Helper()
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath("chromium"), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.UserDataDir(b.TempDir()))
	ctx, cancel := chromedp.NewContext(actx)
	b.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"/")); err != nil {
		b.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`typeof window.acuPanelAnnotate === "function"`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		b.Fatal(err)
	}
	return ctx
}
