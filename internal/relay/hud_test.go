package relay

import (
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/acu-dev/acu/internal/guard"
	"github.com/acu-dev/acu/internal/guard/guardtest"
)

var hudPNG = flag.String("hud-png", "", "also write the HUD test's screenshot to this path (docs/img/hud.png)")

// TestHUDInChromium opens the HUD page in real headless Chromium through a
// one-time link: a POST to /feed shows up as the newest line, styled by
// priority, older lines fade; after the relay drops the connection the page
// reconnects by itself.
func TestHUDInChromium(t *testing.T) {
	h := newHarness(t, nil, nil)
	h.post(t, "/feed", `{"text":"Relay started"}`)
	// The page's CSP, asserted, not just its 200: own scripts and styles
	// only, no inline code, nothing from elsewhere, no framing.
	resp, err := http.Get(h.srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
		if resp.StatusCode != 200 || !strings.Contains(csp, want) {
			t.Errorf("GET / = %d with CSP %q: want %s", resp.StatusCode, csp, want)
		}
	}
	if strings.Contains(csp, "unsafe") {
		t.Errorf("the HUD's CSP allows unsafe code: %q", csp)
	}
	ctx := guardtest.Browser(t, 1000, 420)
	poll := func(what, expr string) { t.Helper(); guardtest.Poll(t, ctx, what, expr) }
	if err := chromedp.Do(ctx, chromedp.Navigate(h.r.LoginURL(h.srv.URL).URL)); err != nil {
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
}

// clock is a settable clock, safe for the relay's goroutines.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestHUDLoginInChromium: the HUD's one-time link in real headless
// Chromium: the page streams the feed after swapping the code for a
// session, the code leaves the address bar, a page on another loopback port
// gets no credential, the stolen session is useless as a cookie, and a used
// or expired link shows the refusal instead of the feed.
func TestHUDLoginInChromium(t *testing.T) {
	clk := &clock{t: time.Now()}
	h := newHarness(t, nil, func(o *Options) { o.Now = clk.now })
	h.post(t, "/feed", `{"text":"Logged in"}`)
	ctx := guardtest.Browser(t, 1000, 420)
	link := h.r.LoginURL(h.srv.URL).URL
	if err := chromedp.Do(ctx, chromedp.Navigate(link)); err != nil {
		t.Fatal(err)
	}
	guardtest.Poll(t, ctx, "the live feed", `document.getElementById("status").dataset.state === "live" && document.querySelector("#lines li.newest")?.textContent === "Logged in"`)
	guardtest.Poll(t, ctx, "the code gone from the address bar", `location.href === "`+h.srv.URL+`/"`)
	session := guardtest.Session(t, ctx)
	guardtest.CheckStolen(t, h.srv.URL+"/agent/digest", session, "acu_relay")
	guardtest.CheckNoLeak(t, ctx, guardtest.NewSpy(t), session)

	refused := `document.getElementById("status").dataset.state === "down" && document.getElementById("status").textContent.includes("unknown, used or expired")`
	if err := chromedp.Do(ctx, chromedp.Navigate(link)); err != nil {
		t.Fatal(err)
	}
	guardtest.Poll(t, ctx, "a refused reuse", refused)
	late := h.r.LoginURL(h.srv.URL).URL
	clk.add(guard.LoginCodeTTL)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(late)); err != nil {
		t.Fatal(err)
	}
	guardtest.Poll(t, ctx, "a refused expired link", refused)
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#lines li").length`)); n != 0 {
		t.Errorf("a refused page shows %d feed lines", n)
	}
	// Opened without a link (or with the old ?token=), the page gets nothing.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(h.srv.URL+"/?token="+testToken)); err != nil {
		t.Fatal(err)
	}
	guardtest.Poll(t, ctx, "a refused page without a link", `document.getElementById("status").dataset.state === "down" && document.getElementById("status").textContent.includes("acu relay open")`)
}
