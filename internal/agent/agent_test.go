package agent

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/guard"
	"github.com/acu-dev/acu/internal/guard/guardtest"
	"github.com/acu-dev/acu/internal/input"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/runlog"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/testx"
)

var gray = color.RGBA{64, 64, 64, 255}

// TestLoopExecutesActions: a scripted model drives the test window; clicks,
// double clicks, drags and typing land where the normalized coordinates say;
// the model gets the annotated screenshot with orange heat on the executed
// pixels and blue heat in the bbox; the session is a run with turn events and
// a flat run directory.
func TestLoopExecutesActions(t *testing.T) {
	w := window(t, gray)
	boot := `{"observation":"start","bboxes":[{"x1":0,"y1":700,"x2":200,"y2":1000}],"actions":[` +
		click("click", 500, 500) + "," + click("double_click", 250, 250) + `,{"name":"drag","x1":100,"y1":100,"x2":900,"y2":900},{"name":"type","text":"hi"}]}`
	h := start(t, llmtest.Script(reply("second", click("right_click", 750, 250)), reply("done")), func(o *Options) {
		o.Boot, o.BootText, o.MaxTurns = true, boot, 2
	}, nil)
	st := h.waitState("the session to end", func(s State) bool { return s.Phase == PhaseStopped })
	if st.Turn != 2 {
		t.Errorf("turns = %d, want 2", st.Turn)
	}
	area := input.Area{W: screenW, H: screenH}
	evs := waitEvents(t, w, func(evs []testx.Event) bool { return len(presses(evs)) >= 5 })
	type pt struct{ x, y, button int }
	var got []pt
	for _, e := range presses(evs) {
		got = append(got, pt{e.RootX, e.RootY, e.Button})
	}
	at := func(nx, ny, b int) pt { x, y := area.ToPixel(nx, ny); return pt{x, y, b} }
	want := []pt{at(500, 500, 1), at(250, 250, 1), at(250, 250, 1), at(100, 100, 1), at(750, 250, 3)}
	if len(got) != len(want) {
		t.Fatalf("presses = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("press %d at %v, want %v", i, got[i], want[i])
		}
	}
	var release testx.Event
	for _, e := range evs {
		if e.Kind == testx.ButtonRelease && e.Button == 1 {
			release = e
		}
	}
	if x, y := area.ToPixel(900, 900); release.RootX != x || release.RootY != y {
		t.Errorf("drag released at %d,%d, want %d,%d", release.RootX, release.RootY, x, y)
	}
	if typed := w.Typed(); typed != "hi" {
		t.Errorf("typed %q, want %q", typed, "hi")
	}

	reqs := h.model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("model calls = %d, want 1 (the turn limit of 2 ends the session before a second call)", len(reqs))
	}
	req := reqs[0]
	if req.Temperature != 0.7 || req.TopP != 0.9 || req.MaxTokens != 1000 {
		t.Errorf("sampling = %v/%v/%v, want 0.7/0.9/1000", req.Temperature, req.TopP, req.MaxTokens)
	}
	if !strings.Contains(req.System, "0 to 1000") || !strings.Contains(req.Text(), "1280x720") || !strings.Contains(req.Text(), "start") {
		t.Errorf("prompt lacks the coordinate space, the size or the observation:\nsystem: %s\nuser: %s", req.System, req.Text())
	}
	imgs := req.Images()
	if len(imgs) != 1 || imgs[0].MIME != "image/png" {
		t.Fatalf("images = %d (%v), want one PNG", len(imgs), imgs)
	}
	img := imgs[0].Image
	if b := img.Bounds(); b.Dx() != screenW || b.Dy() != screenH {
		t.Errorf("image %v, want %dx%d", b, screenW, screenH)
	}
	// Orange heat centred on the click's pixel; blue heat in the bbox;
	// the window's gray far from both.
	cx, cy := area.ToPixel(500, 500)
	if r, g, b := rgbAt(img, cx, cy); !(r > 150 && r > g+30 && g > b) {
		t.Errorf("pixel at the click (%d,%d) = %d,%d,%d; want orange heat", cx, cy, r, g, b)
	}
	bx, by := area.ToPixel(100, 850)
	if r, g, b := rgbAt(img, bx, by); !(b > r+30 && b > 64) {
		t.Errorf("pixel in the bbox (%d,%d) = %d,%d,%d; want blue heat", bx, by, r, g, b)
	}
	if r, g, b := rgbAt(img, 1270, 10); r != 64 || g != 64 || b != 64 {
		t.Errorf("pixel far from overlays = %d,%d,%d; want the window's 64,64,64", r, g, b)
	}

	// The session is a run of kind agent with a turn event per turn.
	list, err := h.reg.List(t.Context(), runs.ListFilter{Kind: RunKind})
	if err != nil || len(list) != 1 {
		t.Fatalf("agent runs = %v, %v; want one", list, err)
	}
	if list[0].Status != runs.StatusCompleted || list[0].Live() {
		t.Errorf("run status = %s (live %v), want completed", list[0].Status, list[0].Live())
	}
	evts, err := h.reg.Events(t.Context(), 0, runs.Filter{RunID: list[0].ID, Streams: []string{StreamTurn}}, 100)
	if err != nil || len(evts) != 2 {
		t.Fatalf("turn events = %d, %v; want 2", len(evts), err)
	}
	var te TurnEvent
	if err := json.Unmarshal(evts[0].Data, &te); err != nil {
		t.Fatal(err)
	}
	if te.Turn != 1 || te.Observation != "start" || len(te.Actions) != 4 || te.RawPNG == "" || te.AnnotatedPNG == "" {
		t.Errorf("turn event = %+v", te)
	}
	if _, err := os.Stat(te.AnnotatedPNG); err != nil {
		t.Errorf("annotated image of the event: %v", err)
	}
	// The run directory: flat layout, two records per turn, main.log.
	dir := filepath.Join(h.runs, "run_0001")
	turns, err := runlog.Load(dir)
	if err != nil || len(turns) != 2 {
		t.Fatalf("run log turns = %d, %v; want 2", len(turns), err)
	}
	if turns[0].RawPNG != "turn_0001_raw.png" || turns[1].AnnotatedPNG != "turn_0002_annotated.png" || turns[1].Observation != "second" {
		t.Errorf("turns = %+v", turns)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "turns.jsonl")); err != nil || bytes.Count(b, []byte("\n")) != 4 {
		t.Errorf("turns.jsonl: %d lines, %v; want 4", bytes.Count(b, []byte("\n")), err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "main.log")); err != nil || !bytes.Contains(b, []byte("agent session ended")) {
		t.Errorf("main.log = %q, %v", b, err)
	}
}

// TestCropSandboxes: within a crop, coordinates map into the working area,
// those outside 0..1000 are clamped onto its edge, and the screenshot is the
// area scaled by CAPTURE_SCALE_PERCENT.
func TestCropSandboxes(t *testing.T) {
	w := window(t, gray)
	crop := [4]int{500, 0, 1000, 500}
	boot := reply("crop", click("click", 0, 0), click("click", 1000, 1000), `{"name":"click","x1":2000,"y1":-50}`)
	h := start(t, llmtest.Text(reply("done")), func(o *Options) {
		o.Boot, o.BootText, o.MaxTurns, o.Crop, o.CaptureScalePercent = true, boot, 1, crop, 50
	}, nil)
	st := h.waitState("the session to end", func(s State) bool { return s.Phase == PhaseStopped })
	area := input.AreaFromCrop(screenW, screenH, crop)
	evs := waitEvents(t, w, func(evs []testx.Event) bool { return len(presses(evs)) >= 3 })
	ps := presses(evs)
	x0, y0 := area.ToPixel(0, 0)
	x1, y1 := area.ToPixel(1000, 1000)
	want := [][2]int{{x0, y0}, {x1, y1}, {x1, y0}}
	for i, p := range ps {
		if p.RootX != want[i][0] || p.RootY != want[i][1] {
			t.Errorf("press %d at %d,%d, want %v (area %v)", i, p.RootX, p.RootY, want[i], area)
		}
	}
	if want := area.X + area.W - 1; x1 != want || x0 != area.X {
		t.Errorf("area edges %d..%d, want %d..%d", x0, x1, area.X, want)
	}
	if st.Width != area.W/2 || st.Height != area.H/2 {
		t.Errorf("screenshot %dx%d, want half the %dx%d area", st.Width, st.Height, area.W, area.H)
	}
}

// TestScenarioB: clicks that change nothing stay visible as a fading trail
// (trail_turns 3): the model sees its earlier clicks.
func TestScenarioB(t *testing.T) {
	window(t, gray)
	h := start(t, llmtest.Script(reply("t2", click("click", 500, 500)), reply("t3", click("click", 800, 500)), reply("done")), func(o *Options) {
		o.Boot, o.BootText, o.MaxTurns = true, reply("t1", click("click", 200, 500)), 4
		o.UI.ExecutedHeat.TrailTurns = 3
		o.UI.ExecutedHeat.TrailShrink = 0.9
		o.UI.Labels.Enabled = false
	}, nil)
	reqs := h.waitCalls(3)
	img := reqs[2].Images()[0].Image
	area := input.Area{W: screenW, H: screenH}
	red := func(nx int) int {
		x, y := area.ToPixel(nx, 500)
		r, _, _ := rgbAt(img, x, y)
		return r
	}
	r1, r2, r3 := red(200), red(500), red(800)
	if !(r3 > r2 && r2 > r1 && r1 > 64+20) {
		t.Errorf("red at the clicks of turns 1, 2, 3 = %d, %d, %d; want all visible, fading with age", r1, r2, r3)
	}
	// Turn 1's image has only its own click.
	img1 := reqs[0].Images()[0].Image
	x, y := area.ToPixel(800, 500)
	if r, g, b := rgbAt(img1, x, y); r != 64 || g != 64 || b != 64 {
		t.Errorf("turn 1 image at turn 3's click = %d,%d,%d; want untouched", r, g, b)
	}
	h.waitState("the session to end", func(s State) bool { return s.Phase == PhaseStopped })
}

// TestScenarioC: with annotator=panel the engine waits in waiting_annotated;
// a wrong seq gets 409 and nothing advances; the right one continues.
func TestScenarioC(t *testing.T) {
	window(t, gray)
	h := start(t, llmtest.Text(reply("done")), func(o *Options) {
		o.Boot, o.BootText, o.MaxTurns, o.Annotator = true, reply("t1", click("click", 500, 500)), 2, AnnotatorPanel
	}, nil)
	st := h.waitState("waiting_annotated", func(s State) bool { return s.Phase == PhaseWaitingAnnotated })
	if st.PendingSeq != 1 || len(st.RawPNG) == 0 || len(st.Trail) != 1 {
		t.Fatalf("state = pending %d, raw %d bytes, trail %d; want 1, an image, 1", st.PendingSeq, len(st.RawPNG), len(st.Trail))
	}
	var buf bytes.Buffer
	png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 16, 9)))
	b64 := base64.StdEncoding.EncodeToString(buf.Bytes())
	code, body := h.do("POST", "/annotated", AnnotatedRequest{Seq: 2, ImageB64: b64}, true)
	if code != http.StatusConflict || !strings.Contains(string(body), "pending_seq 1") {
		t.Errorf("POST /annotated seq 2 = %d %s, want 409 naming pending_seq 1", code, body)
	}
	time.Sleep(100 * time.Millisecond)
	if st := h.a.State(); st.Phase != PhaseWaitingAnnotated || st.Turn != 1 || h.model.Calls() != 0 {
		t.Errorf("after the mismatch: phase %s turn %d model calls %d; want waiting_annotated, 1, 0", st.Phase, st.Turn, h.model.Calls())
	}
	if code, body := h.do("POST", "/annotated", AnnotatedRequest{Seq: 1, ImageB64: "not base64!"}, true); code != http.StatusBadRequest {
		t.Errorf("POST /annotated with a bad image = %d %s, want 400", code, body)
	}
	if code, body := h.do("POST", "/annotated", AnnotatedRequest{Seq: 1, ImageB64: "data:image/png;base64," + b64}, true); code != http.StatusOK {
		t.Fatalf("POST /annotated seq 1 = %d %s, want 200", code, body)
	}
	reqs := h.waitCalls(1)
	if b := reqs[0].Images()[0].Image.Bounds(); b.Dx() != 16 || b.Dy() != 9 {
		t.Errorf("model got a %v image, want the panel's 16x9", b)
	}
	st = h.waitState("turn 2 waiting", func(s State) bool { return s.Turn == 2 && s.Phase == PhaseWaitingAnnotated })
	if st.AnnotatedSeq != 1 {
		t.Errorf("annotated_seq = %d, want 1", st.AnnotatedSeq)
	}
}

// TestScenarioD: invalid JSON runs no action, becomes the observation, and
// the loop continues; the run directory uses the turn_dirs layout.
func TestScenarioD(t *testing.T) {
	w := window(t, gray)
	h := start(t, llmtest.Script("Sure! I will click the button now.", reply("recovered")), func(o *Options) {
		o.Boot, o.BootText, o.MaxTurns, o.LogLayout = true, "I think {this is not json", 3, runlog.TurnDirs
	}, nil)
	reqs := h.waitCalls(2)
	if !strings.Contains(reqs[0].Text(), "I think {this is not json") || !strings.Contains(reqs[0].Text(), "not a JSON object") {
		t.Errorf("turn 1 prompt = %q; want the text as the observation and a note", reqs[0].Text())
	}
	st := h.waitState("the session to end", func(s State) bool { return s.Phase == PhaseStopped })
	if st.Turn != 3 || st.Observation != "recovered" {
		t.Errorf("final turn %d observation %q; want 3, recovered", st.Turn, st.Observation)
	}
	if n := len(presses(w.Events())); n != 0 {
		t.Errorf("%d clicks, want none", n)
	}
	dir := filepath.Join(h.runs, "run_0001")
	for _, f := range []string{"turn_0001/vlm_output.json", "turn_0001/screenshot_raw.png", "turn_0003/screenshot_annotated.png", "turns.jsonl"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("turn_dirs layout: %v", err)
		}
	}
	turns, err := runlog.Load(dir)
	if err != nil || len(turns) != 3 || turns[1].Observation != "Sure! I will click the button now." {
		t.Errorf("Load = %+v, %v", turns, err)
	}
}

// TestScenarioE: a model that hangs times out with a clear error; the loop
// waits for /inject and continues in the same session.
func TestScenarioE(t *testing.T) {
	window(t, gray)
	h := start(t, llmtest.Text(reply("after")), func(o *Options) {
		o.Boot, o.BootText, o.MaxTurns = true, reply("t1"), 3
	}, func(lo *llm.Options) {
		lo.Timeout, lo.MaxRetries, lo.RetryBase = 2*time.Second, 1, 10*time.Millisecond // long enough for a loaded machine to answer the non-hanging calls
	})
	h.model.Fail(llmtest.Fault{Kind: llmtest.Hang, Times: 2})
	st := h.waitState("the model error", func(s State) bool { return s.Error != "" })
	if st.Phase != PhaseWaitingInject || !strings.Contains(st.Error, "timeout") || !strings.Contains(st.Error, "turn 1") {
		t.Errorf("state = %s %q; want waiting_inject and a timeout error naming the turn", st.Phase, st.Error)
	}
	live := h.reg.Live()
	if len(live) != 1 {
		t.Fatalf("live runs = %d, want the session still live", len(live))
	}
	h.inject(reply("retry by hand"))
	st = h.waitState("the session to end", func(s State) bool { return s.Phase == PhaseStopped })
	if st.Turn != 3 || st.Error != "" {
		t.Errorf("after /inject: turn %d error %q; want 3 turns and no error", st.Turn, st.Error)
	}
	evts, _ := h.reg.Events(t.Context(), 0, runs.Filter{RunID: live[0].ID, Streams: []string{"error"}}, 10)
	if len(evts) != 1 {
		t.Errorf("error events = %d, want 1", len(evts))
	}
}

// TestControls: pause holds the loop before a turn, step runs one, stop ends
// the session and its run.
func TestControls(t *testing.T) {
	window(t, gray)
	h := start(t, llmtest.Text(reply("again", click("move", 500, 500))), nil, nil)
	if code, body := h.do("POST", "/control", ControlRequest{Action: "pause"}, true); code != http.StatusAccepted {
		t.Fatalf("pause = %d %s", code, body)
	}
	time.Sleep(50 * time.Millisecond)
	h.inject(reply("first", click("move", 100, 100)))
	h.waitState("paused", func(s State) bool { return s.Phase == PhasePaused && s.Turn == 0 })
	h.do("POST", "/control", ControlRequest{Action: "step"}, true)
	h.waitState("turn 1 then paused", func(s State) bool { return s.Phase == PhasePaused && s.Turn == 1 })
	time.Sleep(100 * time.Millisecond)
	if st := h.a.State(); st.Turn != 1 {
		t.Errorf("turn %d while paused, want 1", st.Turn)
	}
	h.do("POST", "/control", ControlRequest{Action: "stop"}, true)
	h.waitState("stopped", func(s State) bool { return s.Phase == PhaseStopped })
	list, _ := h.reg.List(t.Context(), runs.ListFilter{Kind: RunKind})
	if len(list) != 1 || list[0].Status != runs.StatusCancelled {
		t.Errorf("runs = %+v; want one cancelled", list)
	}
	if code, _ := h.do("POST", "/control", ControlRequest{Action: "jump"}, true); code != http.StatusBadRequest {
		t.Errorf("unknown control = %d, want 400", code)
	}
}

// TestHTTPAuth: every endpoint but the static panel needs the token or a
// page's session header from a one-time link; foreign Hosts and Origins
// are refused.
func TestHTTPAuth(t *testing.T) {
	h := start(t, nil, nil, nil)
	for _, p := range []string{"/state", "/config"} {
		if code, _ := h.do("GET", p, nil, false); code != http.StatusUnauthorized {
			t.Errorf("GET %s without token = %d, want 401", p, code)
		}
	}
	if code, _ := h.do("POST", "/inject", InjectRequest{VLMText: "x"}, false); code != http.StatusUnauthorized {
		t.Errorf("POST /inject without token = %d, want 401", code)
	}
	code, body := h.do("GET", "/config", nil, true)
	var cfg struct {
		UI map[string]json.RawMessage `json:"ui"`
	}
	if code != 200 || json.Unmarshal(body, &cfg) != nil || cfg.UI["executed_heat"] == nil || cfg.UI["bbox_heat"] == nil {
		t.Errorf("GET /config = %d %s", code, body)
	}
	code, body = h.do("GET", "/state", nil, true)
	var st map[string]any
	json.Unmarshal(body, &st)
	for _, k := range []string{"phase", "turn", "msg_id", "pending_seq", "annotated_seq", "raw_b64", "bboxes", "actions", "observation", "vlm_json"} {
		if _, ok := st[k]; !ok {
			t.Errorf("GET /state (%d) lacks the seed's field %q: %s", code, k, body)
		}
	}
	// The browser way: the panel is static; a one-time link's code, swapped
	// at POST /auth/session, gives the page a session for its header.
	if code, body := h.do("GET", "/", nil, false); code != 200 || !strings.Contains(string(body), "/session.js") {
		t.Errorf("GET / = %d, want the panel page", code)
	}
	code, body = h.do("POST", "/auth/link", nil, true)
	var link struct {
		URL string `json:"url"`
	}
	json.Unmarshal(body, &link)
	loginCode, ok := strings.CutPrefix(link.URL, h.srv.URL+"/#code=")
	if code != 200 || !ok {
		t.Fatalf("POST /auth/link = %d %s, want %s/#code=…", code, body, h.srv.URL)
	}
	code, body = h.do("POST", "/auth/session", map[string]string{"code": loginCode}, false)
	var sess guard.SessionResponse
	if code != 200 || json.Unmarshal(body, &sess) != nil || sess.Session == "" {
		t.Fatalf("POST /auth/session = %d %s", code, body)
	}
	guardtest.CheckStolen(t, h.srv.URL+"/state", sess.Session, "acu_agent_session")
	if code, _ := h.do("POST", "/auth/session", map[string]string{"code": loginCode}, false); code != http.StatusUnauthorized {
		t.Errorf("reused login code = %d, want 401", code)
	}
	req, _ := http.NewRequest("GET", h.srv.URL+"/state", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Host = "evil.example"
	if resp, _ := http.DefaultClient.Do(req); resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Host = %d, want 403", resp.StatusCode)
	}
	req, _ = http.NewRequest("POST", h.srv.URL+"/inject", strings.NewReader(`{"vlm_text":"x"}`))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Origin", "http://evil.example")
	if resp, _ := http.DefaultClient.Do(req); resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Origin = %d, want 403", resp.StatusCode)
	}
}

func TestBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:1235/v1/chat/completions": "http://127.0.0.1:1235/v1",
		"http://127.0.0.1:1235/v1":                  "http://127.0.0.1:1235/v1",
		"http://127.0.0.1:1235/v1/":                 "http://127.0.0.1:1235/v1",
	} {
		if got, err := BaseURL(in); err != nil || got != want {
			t.Errorf("BaseURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := BaseURL("127.0.0.1:1235"); err == nil {
		t.Errorf("BaseURL without scheme succeeded")
	}
}

// TestRunWaitsForDisplay: a display that is not there keeps Run retrying
// (the HTTP surface answers with the error) until ctx ends, instead of
// taking the daemon down.
func TestRunWaitsForDisplay(t *testing.T) {
	model := llmtest.NewOpenAI(t, nil)
	hub, err := capture.NewHub(capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	a, err := New(Options{Display: ":9999", Hub: hub, Model: model.Client(t, nil)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	deadline := time.Now().Add(30 * time.Second)
	for a.State().Error == "" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if st := a.State(); !strings.Contains(st.Error, ":9999") {
		t.Errorf("state error = %q, want the display named", st.Error)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v, want nil after cancel", err)
	}
}

// TestCostLimit: the session ends once its model calls cost
// ACU_AGENT_MAX_COST_USD, whether the cost comes from the provider's own
// report (OpenRouter's usage.cost) or from a price (ACU_MODEL_PRICES); a
// call that comes back with no cost at all ends it at once, since the limit
// can no longer be kept. The run records the reason.
func TestCostLimit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cost   *float64 // usage.cost in the reply
		client func(*llm.Options)
		turns  int
		usd    float64
		reason string
	}{
		{"provider cost", llmtest.Cost(1), func(lo *llm.Options) { lo.UsageAccounting = true }, 3, 3, "cost limit of $2.5000 reached"},
		{"price table", nil, func(lo *llm.Options) { lo.Prices = llm.PriceTable{llmtest.Model: {InputPerMTok: 1}} }, 3, 3, "cost limit of $2.5000 reached"},
		{"cost unknown at run time", nil, func(lo *llm.Options) { lo.UsageAccounting = true }, 1, 0, "cannot be kept"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			window(t, gray)
			h := start(t, func(r llmtest.Request) llmtest.Reply {
				return llmtest.Reply{Text: reply("again"), Usage: llm.Usage{InputTokens: 1_000_000}, CostUSD: tc.cost}
			}, func(o *Options) {
				o.Boot, o.BootText, o.MaxCostUSD = true, reply("t1"), 2.5
			}, tc.client)
			st := h.waitState("the session to end", func(s State) bool { return s.Phase == PhaseStopped })
			if st.Turn != tc.turns || st.CostUSD != tc.usd {
				t.Errorf("ended after %d turns at $%v; want %d turns, $%v", st.Turn, st.CostUSD, tc.turns, tc.usd)
			}
			if unknown := tc.cost == nil && tc.turns == 1; st.CostUnknown != unknown {
				t.Errorf("state cost_unknown = %v, want %v", st.CostUnknown, unknown)
			}
			list, _ := h.reg.List(t.Context(), runs.ListFilter{Kind: RunKind})
			if len(list) != 1 || list[0].Status != runs.StatusCompleted || !strings.Contains(string(list[0].Result), tc.reason) {
				t.Errorf("run = %+v; want completed with %q as the reason", list, tc.reason)
			}
		})
	}
}

// TestCostLimitNeedsPrices: with the shipped price table (nothing
// injected), a model that has no price on an endpoint that reports no cost
// and is not a local server cannot have a cost limit: New refuses, naming
// the model. Without the limit it starts.
func TestCostLimitNeedsPrices(t *testing.T) {
	model := llmtest.NewOpenAI(t, nil)
	client := model.Client(t, func(o *llm.Options) { o.Model = "some-lab/unpriced-model" })
	hub, err := capture.NewHub(capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hub.Close() })
	opts := Options{Display: dpy, Hub: hub, Model: client, MaxCostUSD: 1}
	if _, err := New(opts); !errors.Is(err, llm.ErrUnpriced) || !strings.Contains(err.Error(), "some-lab/unpriced-model") {
		t.Errorf("New with a cost limit on an unpriced model = %v, want ErrUnpriced naming the model", err)
	}
	opts.MaxCostUSD = 0
	if _, err := New(opts); err != nil {
		t.Errorf("New without a cost limit = %v, want nil", err)
	}
	if model.Calls() != 0 {
		t.Errorf("%d model calls, want none before the refusal", model.Calls())
	}
}
