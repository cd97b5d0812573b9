package relay

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

var hudPNG = flag.String("hud-png", "", "also write the HUD test's screenshot to this path (docs/img/hud.png)")

// TestHUDInChromium opens the HUD page in real headless Chromium: a POST to
// /feed shows up as the newest line, styled by priority, older lines fade;
// after the relay drops the connection the page reconnects by itself.
func TestHUDInChromium(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not installed (apt-get install chromium): %v", err)
	}
	h := newHarness(t, nil, nil)
	h.post(t, "/feed", `{"text":"Relay started"}`)

	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(),
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1000, 420))
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	defer cancelT()

	poll := func(what, expr string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second))); err != nil {
			t.Fatalf("page never showed %s (%s): %v", what, expr, err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(h.srv.URL+"/")); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	poll("the live stream", `document.getElementById("status").dataset.state === "live"`)
	poll("the newest item at connect", `document.querySelector("#lines li.newest")?.textContent === "Relay started"`)

	start := time.Now()
	h.post(t, "/feed", `{"text":"Build finished: 42 tests passed","priority":"high"}`)
	poll("the posted line", `document.querySelector("#lines li.newest")?.textContent === "Build finished: 42 tests passed"`)
	t.Logf("POST /feed to the line on the page: %v", time.Since(start))
	poll("priority styling", `document.querySelector("#lines li.newest").classList.contains("p-high")`)
	h.post(t, "/feed", `{"text":"[PERIODIC]\n[1s ago, openrouter] a transcript stays off the HUD"}`)
	h.r.AddFeed("[🧠] Editing hud.js in VS Code", "normal", "agent")
	h.post(t, "/feed", `{"text":"Deploy failed: check the logs","priority":"urgent"}`)
	poll("the urgent line", `document.querySelector("#lines li.newest.p-urgent")?.textContent === "Deploy failed: check the logs"`)
	poll("fading older lines", `(() => { const li = document.querySelectorAll("#lines li"); return li.length === 4 && +li[0].style.opacity < +li[3].style.opacity; })()`)
	poll("no transcript", `![...document.querySelectorAll("#lines li")].some(li => li.textContent.includes("transcript"))`)

	// The relay drops every connection: the page reconnects by itself.
	h.srv.CloseClientConnections()
	h.post(t, "/feed", `{"text":"Back after a reconnect"}`)
	poll("the line posted across a reconnect", `document.querySelector("#lines li.newest")?.textContent === "Back after a reconnect"`)

	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	out := filepath.Join(t.TempDir(), "hud.png")
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", out, len(png))
	if *hudPNG != "" {
		if err := os.WriteFile(*hudPNG, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// CSP on the page.
	code, _ := h.do(t, "GET", "/", "")
	if code != 200 {
		t.Fatalf("GET / = %d", code)
	}
}
