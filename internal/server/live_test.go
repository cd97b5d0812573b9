package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/guard/guardtest"
	"github.com/acu-dev/acu/internal/judge"
	"github.com/acu-dev/acu/internal/live"
	"github.com/acu-dev/acu/internal/ocr"
	"github.com/acu-dev/acu/internal/record"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/server"
	"github.com/acu-dev/acu/internal/smartwait"
	"github.com/acu-dev/acu/internal/store"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

const liveToken = "live-token-0123456789"

var uiPNG = flag.String("ui-png", "", "also write the pages' screenshots to this directory (docs/img)")

// screenshot writes the page's screenshot as name into -ui-png's directory.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if *uiPNG == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(filepath.Join(*uiPNG, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// liveFixture is a real Xvfb, the capture hub, the live view's engine and
// the HTTP server in front, and headless Chromium on the live page.
type liveFixture struct {
	dpy string
	hub *capture.Hub
	reg *runs.Registry
	db  *store.DB
	c   *api.Client
	url string
	ctx context.Context // the browser
}

func newLiveFixture(t *testing.T, w, h int, adjust func(*server.Options)) *liveFixture {
	t.Helper()
	dpy := testx.StartXvfb(t, xvfb.Options{Width: w, Height: h})
	hub, err := capture.NewHub(capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hub.Close() })
	f := serveLive(t, dpy, hub, adjust)
	f.hub = hub
	return f
}

// serveLive serves the live view of dpy, captured by src, with take-overs
// recorded as runs in a store of the test.
func serveLive(t *testing.T, dpy string, src live.Capturer, adjust func(*server.Options)) *liveFixture {
	t.Helper()
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "acu.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reg := runs.New(db, runs.Options{})
	lv := live.New(live.Options{Capture: src, DefaultDisplay: dpy, Takeover: live.TakeoverOptions{Runs: reg}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = lv.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	o := server.Options{Token: liveToken, Runs: reg, Live: lv}
	if adjust != nil {
		adjust(&o)
	}
	srv := httptest.NewServer(server.New(o))
	t.Cleanup(srv.Close)
	return &liveFixture{dpy: dpy, reg: reg, db: db, c: api.NewClient(srv.URL, liveToken), url: srv.URL}
}

// handBack clicks the page's hand-back and waits until the take-over's
// run has completed: the page shows the hand-back before its request is
// answered, and the run ends once the hold is cleared.
func (f *liveFixture) handBack(t *testing.T, ctx context.Context, runID string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Click("#handback")); err != nil {
		t.Fatal(err)
	}
	guardtest.Poll(t, ctx, "the hand-back", `document.body.dataset.takeover === "off"`)
	res, err := f.reg.Wait(t.Context(), runID, 10*time.Second)
	if err != nil || res.Status != runs.StatusCompleted {
		t.Fatalf("take-over run = %+v, %v; want completed", res, err)
	}
}

// open starts Chromium on the page at path (such as "/ui/") through a
// one-time link.
func (f *liveFixture) open(t *testing.T, path string, w, h int) context.Context {
	t.Helper()
	link, err := f.c.LoginLink(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(link.URL, f.url+path+"#code=") {
		t.Fatalf("login link %q, want the page %s itself", link.URL, path)
	}
	f.ctx = guardtest.Browser(t, w, h)
	if err := chromedp.Do(f.ctx, chromedp.Navigate(link.URL)); err != nil {
		t.Fatal(err)
	}
	return f.ctx
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// pageImage decodes the frame the page shows.
func pageImage(t *testing.T, ctx context.Context) image.Image {
	t.Helper()
	src := eval[string](t, ctx, `document.getElementById("screen").src`)
	b64, ok := strings.CutPrefix(src, "data:image/jpeg;base64,")
	if !ok {
		t.Fatalf("the page's image is %.40q, want a JPEG data URL", src)
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	img, err := jpeg.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestLivePageShowsXtermLine: the live page in real Chromium shows a line
// an xterm prints: the frame it paints is the screen the hub captured after
// the line appeared (same content hash), and Tesseract reads the line off
// the page's image. A static screen sends no frame.
func TestLivePageShowsXtermLine(t *testing.T) {
	f := newLiveFixture(t, 1024, 640, nil)
	flag := filepath.Join(t.TempDir(), "go")
	testx.StartXterm(t, f.dpy, testx.XtermSpec{Geometry: "60x10+0+0", Args: []string{"-fa", "Monospace", "-fs", "16", "-bg", "white", "-fg", "black"},
		Command: []string{"sh", "-c", fmt.Sprintf("echo ready; while [ ! -e %s ]; do sleep 0.05; done; echo LIVE LINE 4711; exec sleep 600", flag)}})
	ctx := f.open(t, "/ui/", 1200, 800)
	guardtest.Poll(t, ctx, "the live stream", `document.body.dataset.state === "live" && window.acuLive.frames > 0`)
	guardtest.Poll(t, ctx, "the display's name", `document.getElementById("display").textContent === "`+f.dpy+`"`)

	// A static screen: no more frames arrive.
	time.Sleep(500 * time.Millisecond)
	n0 := eval[int](t, ctx, `window.acuLive.frames`)
	time.Sleep(time.Second)
	if n := eval[int](t, ctx, `window.acuLive.frames`); n != n0 {
		t.Errorf("a static screen sent %d frames in a second, want none", n-n0)
	}

	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	eng, err := ocr.New(ocr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var text string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		shot, err := f.hub.Capture(t.Context(), f.dpy, capture.Target{Kind: capture.Screen})
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("%x", shot.Hash)
		if got := eval[string](t, ctx, `window.acuLive.last.hash`); got == want {
			res, err := eng.Recognize(t.Context(), pageImage(t, ctx))
			if err != nil {
				t.Fatal(err)
			}
			if text = res.Text(); strings.Contains(text, "LIVE LINE 4711") {
				screenshot(t, ctx, "live.png")
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the page never showed the xterm's new line; last text read off it:\n%s", text)
}

// pagePoint is where to click in the page for screen pixel (x, y).
func pagePoint(t *testing.T, ctx context.Context, x, y int) (float64, float64) {
	t.Helper()
	r := eval[[]float64](t, ctx, `(() => { const r = document.getElementById("screen").getBoundingClientRect(); return [r.left, r.top, r.width, r.height, window.acuLive.screenW, window.acuLive.screenH]; })()`)
	return r[0] + (float64(x)+0.5)*r[2]/r[4], r[1] + (float64(y)+0.5)*r[3]/r[5]
}

// TestLiveTakeoverClickAndKeys: taking over in the page, a click lands on
// the X pixel under the page's pointer (a test client records it), keys
// typed in the page reach an xterm, the take-over is a run with its
// intervention events, and input without a take-over is refused.
func TestLiveTakeoverClickAndKeys(t *testing.T) {
	f := newLiveFixture(t, 1280, 720, nil)
	win := testx.NewWindow(t, f.dpy, testx.Spec{Title: "target", X: 700, Y: 300, W: 300, H: 200, Fill: color.RGBA{B: 255, A: 255}})
	out := filepath.Join(t.TempDir(), "typed")
	testx.StartXterm(t, f.dpy, testx.XtermSpec{Geometry: "40x8+0+0",
		Command: []string{"sh", "-c", "read line; echo \"$line\" > " + out + "; exec sleep 600"}})

	// No take-over: input is refused.
	err := f.c.LiveInput(t.Context(), api.LiveInputRequest{Events: []api.LiveInput{{Type: "move", X: 1, Y: 1}}})
	if se, ok := err.(*api.StatusError); !ok || se.Status != 409 {
		t.Fatalf("input without a take-over = %v, want 409", err)
	}

	ctx := f.open(t, "/ui/", 1000, 700) // the page shows the screen scaled down
	guardtest.Poll(t, ctx, "the live stream", `document.body.dataset.state === "live" && window.acuLive.frames > 0`)
	if err := chromedp.Do(ctx, chromedp.Click("#takeover")); err != nil {
		t.Fatal(err)
	}
	guardtest.Poll(t, ctx, "the take-over", `document.body.dataset.takeover === "on"`)
	guardtest.Poll(t, ctx, "the take-over in the actions list", `document.querySelector("#actions li.intervention")?.textContent.includes("taken")`)
	st, err := f.c.Takeover(t.Context(), "")
	if err != nil || !st.Active || st.RunID == "" {
		t.Fatalf("takeover state = %+v, %v; want active with a run", st, err)
	}

	// A click on window pixel (123, 45): screen pixel (823, 345).
	x, y := pagePoint(t, ctx, 823, 345)
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(x, y)); err != nil {
		t.Fatal(err)
	}
	evs, err := win.WaitFor(t.Context(), func(evs []testx.Event) bool {
		for _, e := range evs {
			if e.Kind == testx.ButtonRelease {
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("the window got no click: %v (events %v)", err, win.Events())
	}
	for _, e := range evs {
		if e.Kind == testx.ButtonPress {
			if e.X != 123 || e.Y != 45 || e.Button != 1 {
				t.Errorf("press at %d,%d button %d, want 123,45 button 1", e.X, e.Y, e.Button)
			}
		}
	}

	// Keys: click into the xterm (focus follows the pointer), type a line.
	x, y = pagePoint(t, ctx, 100, 60)
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(x, y), chromedp.KeyEvent("hi there"), chromedp.KeyEvent("\r")); err != nil {
		t.Fatal(err)
	}
	var typed []byte
	for range 100 {
		if typed, _ = os.ReadFile(out); len(typed) > 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := strings.TrimSpace(string(typed)); got != "hi there" {
		t.Errorf("the xterm read %q, want %q", got, "hi there")
	}

	screenshot(t, ctx, "live-takeover.png")
	f.handBack(t, ctx, st.RunID)
	list, err := f.reg.Events(t.Context(), 0, runs.Filter{RunID: st.RunID, Streams: []string{live.StreamIntervention}}, 10)
	if err != nil {
		t.Fatal(err)
	}
	var phases []string
	for _, e := range list {
		phases = append(phases, string(e.Data))
	}
	if len(list) != 2 || !strings.Contains(phases[0], `"taken"`) || !strings.Contains(phases[1], `"handed_back"`) {
		t.Errorf("take-over events = %v, want taken then handed_back", phases)
	}
}

// TestRunTimelineShowsJudgedFrames: a wait judged by Tesseract on a real
// xterm keeps one frame per distinct screen (the static screen before the
// change: one), and the run timeline in Chromium shows each verdict with
// the frame it judged, the last one met.
func TestRunTimelineShowsJudgedFrames(t *testing.T) {
	f := newLiveFixture(t, 1024, 640, nil)
	oe, err := ocr.New(ocr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	jd, err := judge.NewOCR(judge.OCROptions{Engine: oe})
	if err != nil {
		t.Fatal(err)
	}
	eng := smartwait.New(smartwait.Options{Runs: f.reg, Capture: f.hub, Judge: jd, Store: f.db, Frames: f.db, DefaultDisplay: f.dpy})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = eng.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	rec, err := record.New(record.Options{Capture: f.hub, Runs: f.reg, Dir: t.TempDir(), DefaultDisplay: f.dpy})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.New(server.Options{Token: liveToken, Runs: f.reg, Waits: eng, Frames: f.db, Recordings: rec}))
	t.Cleanup(srv.Close)
	f.url, f.c = srv.URL, api.NewClient(srv.URL, liveToken)

	flag := filepath.Join(t.TempDir(), "go")
	testx.StartXterm(t, f.dpy, testx.XtermSpec{Geometry: "50x6+0+0", Args: []string{"-fa", "Monospace", "-fs", "18", "-bg", "white", "-fg", "black"},
		Command: []string{"sh", "-c", fmt.Sprintf("echo Building; while [ ! -e %s ]; do sleep 0.05; done; echo Build DONE; exec sleep 600", flag)}})
	time.Sleep(500 * time.Millisecond) // the xterm draws its first line
	w, err := f.c.CreateWait(t.Context(), api.CreateWait{Criteria: `"Build DONE" is visible`, Timeout: 60, PollInterval: 30})
	if err != nil {
		t.Fatal(err)
	}
	for range 300 {
		if got, _ := f.c.GetWait(t.Context(), w.ID); got.Evaluations > 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // a static screen: no second frame
	if fr, err := f.c.RunFrames(t.Context(), w.ID); err != nil || len(fr.Frames) != 1 {
		t.Fatalf("frames of a wait on a static screen = %+v, %v; want one", fr, err)
	}
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := f.reg.Wait(t.Context(), w.ID, 60*time.Second)
	if err != nil || res.Status != smartwait.StatusResolved {
		t.Fatalf("wait = %+v, %v; want resolved", res, err)
	}
	fr, err := f.c.RunFrames(t.Context(), w.ID)
	if err != nil || len(fr.Frames) < 2 {
		t.Fatalf("frames of the finished wait = %+v, %v; want the static one and the changed one", fr, err)
	}

	// The judged frames as an animated GIF, one image per kept frame.
	resp, err := http.Get(f.url + "/v1/runs/" + w.ID + "/frames.gif")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("GIF without a token: %d, want 401", resp.StatusCode)
	}
	req, _ := http.NewRequestWithContext(t.Context(), "GET", f.url+"/v1/runs/"+w.ID+"/frames.gif", nil)
	req.Header.Set("Authorization", "Bearer "+liveToken)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	anim, err := gif.DecodeAll(resp.Body)
	resp.Body.Close()
	if err != nil || len(anim.Image) != len(fr.Frames) {
		t.Errorf("frames.gif: %v, %d images; want %d", err, len(anim.Image), len(fr.Frames))
	}
	// And as an animated WebP from ffmpeg: one ANMF frame per kept frame,
	// at the frames' size, with the GIF's timing (the last shown 3 s).
	req, _ = http.NewRequestWithContext(t.Context(), "GET", f.url+"/v1/runs/"+w.ID+"/frames.webp", nil)
	req.Header.Set("Authorization", "Bearer "+liveToken)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	webp, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/webp" {
		t.Fatalf("frames.webp: %d %s %.200s", resp.StatusCode, resp.Header.Get("Content-Type"), webp)
	}
	wf := webpFrames(t, webp)
	if len(wf) != len(fr.Frames) {
		t.Errorf("frames.webp has %d frames, want %d", len(wf), len(fr.Frames))
	}
	for i, fw := range wf {
		// A frame may be the changed part only; the first is whole.
		if fw.w > anim.Image[0].Bounds().Dx() || fw.h > anim.Image[0].Bounds().Dy() || i == 0 && (fw.w != anim.Image[0].Bounds().Dx() || fw.h != anim.Image[0].Bounds().Dy()) {
			t.Errorf("webp frame %d is %dx%d, the judged frames %v", i, fw.w, fw.h, anim.Image[0].Bounds().Size())
		}
		if want := anim.Delay[i] * 10; fw.ms < want || fw.ms >= want+10 { // the GIF counts in 10 ms
			t.Errorf("webp frame %d shows %d ms, the GIF %d ms", i, fw.ms, want)
		}
	}

	bctx := f.open(t, "/ui/runs?run="+w.ID, 1200, 900)
	guardtest.Poll(t, bctx, "the timeline", `document.body.dataset.timeline === "`+w.ID+`"`)
	guardtest.Poll(t, bctx, "verdicts with their frames", `(() => {
		const v = [...document.querySelectorAll('#timeline .ev[data-stream="verdict"]')];
		const imgs = [...document.querySelectorAll('#timeline img.judged')];
		return v.length >= 2 && v[0].dataset.met === "false" && v[v.length - 1].dataset.met === "true" &&
			imgs.length === `+fmt.Sprint(len(fr.Frames))+` && imgs.every((i) => i.dataset.loaded === "1" && i.naturalWidth > 0);
	})()`)
	guardtest.Poll(t, bctx, "the run in the list", `document.querySelector('#runs tr.sel')?.dataset.id === "`+w.ID+`"`)
	guardtest.Poll(t, bctx, "the GIF and WebP exports", `[...document.querySelectorAll('button.export')].map((b) => b.dataset.format).join() === "gif,webp"`)
	screenshot(t, bctx, "runs.png")
}

type webpFrame struct{ w, h, ms int }

// webpFrames reads an animated WebP's container (RIFF, VP8X with the
// animation flag, ANIM, then one ANMF chunk per frame) and returns each
// frame's size and duration.
func webpFrames(t *testing.T, b []byte) []webpFrame {
	t.Helper()
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WEBP" {
		t.Fatalf("not a WebP file: % x", b[:min(len(b), 16)])
	}
	u24 := func(p []byte) int { return int(p[0]) | int(p[1])<<8 | int(p[2])<<16 }
	var out []webpFrame
	var animated, anim bool
	for p := b[12:]; len(p) >= 8; {
		id, n := string(p[:4]), int(binary.LittleEndian.Uint32(p[4:8]))
		if 8+n > len(p) {
			t.Fatalf("WebP chunk %s of %d bytes overruns the file", id, n)
		}
		c := p[8 : 8+n]
		switch id {
		case "VP8X":
			animated = c[0]&0x02 != 0
		case "ANIM":
			anim = true
		case "ANMF":
			out = append(out, webpFrame{w: u24(c[6:]) + 1, h: u24(c[9:]) + 1, ms: u24(c[12:])})
		}
		p = p[8+n+n%2:]
	}
	if !animated || !anim {
		t.Errorf("WebP is not animated (VP8X animation flag %v, ANIM chunk %v)", animated, anim)
	}
	return out
}

// TestRecordingsAPIAndTimeline: a recording started over the API for a
// run, stopped, listed and downloaded; the run's timeline in Chromium
// plays it and an event seeks to its moment.
func TestRecordingsAPIAndTimeline(t *testing.T) {
	f := newLiveFixture(t, 1024, 640, nil)
	rec, err := record.New(record.Options{Capture: f.hub, Runs: f.reg, Dir: t.TempDir(), DefaultDisplay: f.dpy})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = rec.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	srv := httptest.NewServer(server.New(server.Options{Token: liveToken, Runs: f.reg, Recordings: rec}))
	t.Cleanup(srv.Close)
	f.url, f.c = srv.URL, api.NewClient(srv.URL, liveToken)

	task, err := f.reg.Start(t.Context(), runs.StartOptions{Kind: "task", Spec: map[string]string{"display": f.dpy}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.StartRecording(t.Context(), api.StartRecording{Format: "avi"}); err == nil {
		t.Error("a recording in format avi started")
	}
	r, err := f.c.StartRecording(t.Context(), api.StartRecording{Format: "webm", RunID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	win := testx.NewWindow(t, f.dpy, testx.Spec{X: 50, Y: 50, W: 200, H: 100, Fill: color.RGBA{R: 255, A: 255}})
	time.Sleep(500 * time.Millisecond)
	if _, err := f.reg.Emit(t.Context(), task.ID, "iteration", map[string]any{"iteration": 1, "thought": "a red window"}); err != nil {
		t.Fatal(err)
	}
	win.Fill(color.RGBA{G: 255, A: 255})
	time.Sleep(1500 * time.Millisecond)
	r, err = f.c.StopRecording(t.Context(), r.ID)
	if err != nil || r.Status != runs.StatusCompleted || r.Frames < 2 {
		t.Fatalf("StopRecording = %+v, %v", r, err)
	}
	if _, err := f.reg.End(t.Context(), task.ID, runs.StatusCompleted, "", nil); err != nil {
		t.Fatal(err)
	}
	l, err := f.c.Recordings(t.Context(), task.ID, 0)
	if err != nil || len(l.Recordings) != 1 || l.Recordings[0].ID != r.ID {
		t.Fatalf("Recordings(run) = %+v, %v", l, err)
	}
	var buf bytes.Buffer
	if n, err := f.c.DownloadRecording(t.Context(), r.ID, &buf); err != nil || n != r.Bytes || !bytes.HasPrefix(buf.Bytes(), []byte{0x1a, 0x45, 0xdf, 0xa3}) {
		t.Fatalf("DownloadRecording = %d bytes (%v), want %d bytes of WebM", n, err, r.Bytes)
	}

	bctx := f.open(t, "/ui/runs?run="+task.ID, 1200, 900)
	guardtest.Poll(t, bctx, "the recording playing in the timeline", `(() => {
		const v = document.querySelector("#timeline video.recording");
		return v && v.dataset.loaded === "1" && v.readyState >= 1 && v.duration > 1;
	})()`)
	if err := chromedp.Do(bctx, chromedp.Click(`#timeline .ev[data-stream="iteration"]`)); err != nil {
		t.Fatal(err)
	}
	guardtest.Poll(t, bctx, "a seek to the event", `(() => { const v = document.querySelector("#timeline video.recording"); return v.currentTime > 0.2 && v.currentTime < 1.5; })()`)
	screenshot(t, bctx, "runs-recording.png")
}
