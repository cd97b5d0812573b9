package agent

import (
	"context"
	"flag"
	"image/color"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/acu-dev/acu/internal/guard"
	"github.com/acu-dev/acu/internal/guard/guardtest"
	"github.com/acu-dev/acu/internal/input"
	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/testx"
)

var panelPNG = flag.String("panel-png", "", "also write the panel test's screenshot to this path (docs/img/panel.png)")

// browser opens headless Chromium on the harness's panel through a one-time
// login link (the page never sees the token).
func browser(t *testing.T, h *harness) (context.Context, func(what, expr string)) {
	t.Helper()
	ctx := guardtest.Browser(t, 1400, 820)
	if err := chromedp.Do(ctx, chromedp.Navigate(h.a.LoginURL(h.srv.URL))); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	return ctx, func(what, expr string) { t.Helper(); guardtest.Poll(t, ctx, what, expr) }
}

// TestPanelLoginInChromium: the panel's one-time link in real headless
// Chromium: the panel works after the code is swapped for a session, the
// code leaves the address bar, a page on another loopback port gets no
// credential, the stolen session is useless as a cookie, and a used or
// expired link shows an error instead of the state.
func TestPanelLoginInChromium(t *testing.T) {
	clk := &clock{t: time.Now()}
	h := start(t, nil, func(o *Options) { o.Now = clk.now }, nil)
	ctx, poll := browser(t, h)
	poll("the state", `document.getElementById("phase").textContent !== "-" && document.getElementById("error").hidden`)
	poll("the code gone from the address bar", `location.href === "`+h.srv.URL+`/"`)
	session := guardtest.Session(t, ctx)
	guardtest.CheckStolen(t, h.srv.URL+"/state", session, "acu_agent_session")
	guardtest.CheckNoLeak(t, ctx, guardtest.NewSpy(t), session)

	link := h.a.LoginURL(h.srv.URL)
	if err := chromedp.Do(ctx, chromedp.Navigate(link)); err != nil {
		t.Fatal(err)
	}
	poll("the panel after a fresh link", `document.getElementById("phase").textContent !== "-" && document.getElementById("error").hidden`)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(link)); err != nil {
		t.Fatal(err)
	}
	poll("a refused reuse", `!document.getElementById("error").hidden && document.getElementById("error").textContent.includes("unknown, used or expired")`)

	late := h.a.LoginURL(h.srv.URL)
	clk.add(guard.LoginCodeTTL)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(late)); err != nil {
		t.Fatal(err)
	}
	poll("a refused expired link", `!document.getElementById("error").hidden && document.getElementById("error").textContent.includes("unknown, used or expired")`)
	if s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`sessionStorage.getItem("acu_session") || ""`)); s != "" {
		t.Errorf("a refused login left a session in the page")
	}
}

func desktop(x, y int) color.RGBA {
	switch {
	case y < 40:
		return color.RGBA{40, 44, 52, 255}
	case x > 200 && x < 1080 && y > 120 && y < 600:
		if y < 160 {
			return color.RGBA{70, 110, 170, 255}
		}
		return color.RGBA{235, 235, 235, 255}
	}
	return color.RGBA{30, 90, 110, 255}
}

// TestPanelInChromium: the panel page in real headless Chromium shows the
// current turn: counter, observation, actions, raw JSON and the annotated
// screenshot (orange heat at the click); Pause reaches the engine.
func TestPanelInChromium(t *testing.T) {
	w := testx.NewWindow(t, dpy, testx.Spec{Title: t.Name(), W: screenW, H: screenH, Pattern: desktop})
	w.Focus()
	time.Sleep(100 * time.Millisecond)
	second := `{"observation":"The dialog is open; I press OK and drag the slider.","bboxes":[{"x1":160,"y1":170,"x2":840,"y2":830}],"actions":[{"name":"click","x1":700,"y1":700},{"name":"drag","x1":300,"y1":500,"x2":600,"y2":500}]}`
	h := start(t, llmtest.Script(second, reply("done")), func(o *Options) {
		o.Boot, o.BootText, o.MaxTurns = true, reply("Start: I open the dialog.", click("click", 500, 200)), 2
		o.UI.ExecutedHeat.TrailTurns = 2
	}, nil)
	h.waitState("the session to end", func(s State) bool { return s.Phase == PhaseStopped && s.Turn == 2 })
	ctx, poll := browser(t, h)
	poll("the turn counter", `document.getElementById("turn").textContent === "2"`)
	poll("the observation", `document.getElementById("observation").textContent.startsWith("The dialog is open")`)
	poll("the actions", `document.querySelectorAll("#actions li").length === 2 && document.querySelector("#actions li").textContent.includes('"click"')`)
	poll("the raw JSON", `document.getElementById("vlm-json").textContent.includes('"drag"')`)
	poll("the screenshot of turn 2", `document.getElementById("shot").dataset.turn === "2" && document.getElementById("shot").width === 1280`)
	x, y := input.Area{W: screenW, H: screenH}.ToPixel(700, 700)
	rgb, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`Array.from(document.getElementById("shot").getContext("2d").getImageData(`+
		itoa(x)+`,`+itoa(y)+`,1,1).data)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rgb) < 3 || !(rgb[0] > 200 && rgb[0] > rgb[2]+60) {
		t.Errorf("panel pixel at the click (%d,%d) = %v; want orange heat over the light dialog", x, y, rgb)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	out := filepath.Join(t.TempDir(), "panel.png")
	os.WriteFile(out, png, 0o644)
	t.Logf("screenshot: %s (%d bytes)", out, len(png))
	if *panelPNG != "" {
		if err := os.WriteFile(*panelPNG, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Click("#pause")); err != nil {
		t.Fatal(err)
	}
	h.waitState("paused", func(s State) bool { return s.Paused })
	poll("the resume button", `document.getElementById("pause").textContent === "Resume"`)
}

// TestPanelAnnotatorInChromium: with annotator=panel the page draws the
// overlays on a canvas and POSTs /annotated with pending_seq (the seed's
// protocol); the model gets the page's picture with orange heat at the click.
func TestPanelAnnotatorInChromium(t *testing.T) {
	window(t, gray)
	h := start(t, llmtest.Text(reply("done")), func(o *Options) {
		o.Boot, o.BootText, o.MaxTurns, o.Annotator = true, `{"observation":"go","bboxes":[{"x1":0,"y1":700,"x2":200,"y2":1000}],"actions":[`+click("click", 500, 500)+`]}`, 2, AnnotatorPanel
	}, nil)
	h.waitState("waiting_annotated", func(s State) bool { return s.Phase == PhaseWaitingAnnotated })
	_, poll := browser(t, h)
	reqs := h.waitCalls(1)
	img := reqs[0].Images()[0].Image
	area := input.Area{W: screenW, H: screenH}
	cx, cy := area.ToPixel(500, 500)
	if r, g, b := rgbAt(img, cx, cy); !(r > 150 && r > g+30 && g > b) {
		t.Errorf("panel-annotated pixel at the click = %d,%d,%d; want orange heat", r, g, b)
	}
	bx, by := area.ToPixel(100, 850)
	if r, _, b := rgbAt(img, bx, by); !(b > r+30) {
		t.Errorf("panel-annotated pixel in the bbox = %d,_,%d; want blue heat", r, b)
	}
	st := h.waitState("the session to end", func(s State) bool { return s.Phase == PhaseStopped })
	if st.AnnotatedSeq != 2 {
		t.Errorf("annotated_seq = %d, want 2 (the page annotated both turns)", st.AnnotatedSeq)
	}
	poll("the turn counter", `document.getElementById("turn").textContent === "2"`)
}

func itoa(n int) string {
	b := []byte{}
	if n == 0 {
		return "0"
	}
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}
