package server

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/guard"
	"github.com/acu-dev/acu/internal/guard/guardtest"
	"github.com/acu-dev/acu/internal/runs"
)

// clock is a settable clock, safe for the server's goroutines.
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

func (f *fixture) loginLink(next string) api.LoginLink {
	f.t.Helper()
	resp, body := f.do("POST", "/v1/auth/link?next="+next, "", nil)
	var link api.LoginLink
	if resp.StatusCode != 200 || json.Unmarshal(body, &link) != nil {
		f.t.Fatalf("POST /v1/auth/link = %d %s", resp.StatusCode, body)
	}
	if len(resp.Cookies()) != 0 {
		f.t.Errorf("POST /v1/auth/link set cookies %v", resp.Cookies())
	}
	return link
}

// TestLoginLink: the one-time link carries its code in the fragment; the
// code is redeemed once, at POST /auth/session, into a session that works
// only as the X-Acu-Session header. Nothing sets a cookie.
func TestLoginLink(t *testing.T) {
	f := newFixture(t)
	link := f.loginLink("/v1/runs")
	code, ok := strings.CutPrefix(link.URL, f.srv.URL+"/#code=")
	if !ok || code == "" {
		t.Fatalf("login URL = %q, want %s/#code=…", link.URL, f.srv.URL)
	}
	resp, body := f.do("POST", "/auth/session", `{"code":"`+code+`"}`, map[string]string{"Authorization": "", "Origin": f.srv.URL})
	var sess guard.SessionResponse
	if resp.StatusCode != 200 || json.Unmarshal(body, &sess) != nil || sess.Session == "" || sess.Next != "/v1/runs" {
		t.Fatalf("exchange = %d %s", resp.StatusCode, body)
	}
	if len(resp.Cookies()) != 0 {
		t.Errorf("the exchange set cookies %v", resp.Cookies())
	}
	if resp, body := f.do("GET", "/v1/runs", "", map[string]string{"Authorization": "", guard.SessionHeader: sess.Session}); resp.StatusCode != 200 {
		t.Errorf("GET /v1/runs with the session = %d %s", resp.StatusCode, body)
	}
	if resp, _ := f.do("GET", "/v1/runs", "", map[string]string{"Authorization": "", "Cookie": "acu_session=" + sess.Session}); resp.StatusCode != 401 {
		t.Errorf("GET /v1/runs with the session as a cookie = %d, want 401", resp.StatusCode)
	}
	// The replay: a stolen value as the old cookie creates no wait.
	if resp, _ := f.do("POST", "/v1/waits", `{"criteria":"x","timeout":60}`, map[string]string{"Authorization": "", "Cookie": "acu_session=" + sess.Session}); resp.StatusCode != 401 {
		t.Errorf("POST /v1/waits with the session as a cookie = %d, want 401", resp.StatusCode)
	}
	if resp, _ := f.do("POST", "/auth/session", `{"code":"`+code+`"}`, map[string]string{"Authorization": ""}); resp.StatusCode != 401 {
		t.Errorf("second exchange = %d, want 401", resp.StatusCode)
	}
	// A page on another local port cannot redeem a code: its Origin differs.
	code2, _ := strings.CutPrefix(f.loginLink("").URL, f.srv.URL+"/#code=")
	if resp, _ := f.do("POST", "/auth/session", `{"code":"`+code2+`"}`, map[string]string{"Authorization": "", "Origin": "http://127.0.0.1:1"}); resp.StatusCode != 403 {
		t.Errorf("exchange from another origin = %d, want 403", resp.StatusCode)
	}
	// The old cookie route is gone.
	if resp, _ := f.do("GET", "/auth?code="+code2, "", map[string]string{"Authorization": ""}); resp.StatusCode != 404 || len(resp.Cookies()) != 0 {
		t.Errorf("GET /auth = %d %v, want 404 and no cookie", resp.StatusCode, resp.Cookies())
	}
}

// TestPageLoginInChromium: `acu open`'s link logs the API page in, in real
// headless Chromium: the page shows the runs, the code leaves the address
// bar, a page served from another loopback port gets no credential, the
// stolen session value is useless as a cookie, a used or expired link fails.
func TestPageLoginInChromium(t *testing.T) {
	clk := &clock{t: time.Now()}
	f := newFixture(t, func(o *Options) { o.Now = clk.now })
	run, err := f.reg.Start(t.Context(), runs.StartOptions{Kind: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	link := f.loginLink("/v1/runs")
	ctx := guardtest.Browser(t, 1000, 700)
	if err := chromedp.Do(ctx, chromedp.Navigate(link.URL)); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	guardtest.Poll(t, ctx, "the runs", `document.body.dataset.state === "ok" && document.getElementById("out").textContent.includes("`+run.ID+`")`)
	guardtest.Poll(t, ctx, "the code gone from the address bar", `location.hash === "" && location.href === "`+f.srv.URL+`/"`)
	if err := chromedp.Do(ctx, chromedp.SetValue("#path", "/v1/runs/"+run.ID), chromedp.Click("#go")); err != nil {
		t.Fatal(err)
	}
	guardtest.Poll(t, ctx, "the run", `document.getElementById("status").textContent === "200 /v1/runs/`+run.ID+`"`)
	session := guardtest.Session(t, ctx)

	guardtest.CheckStolen(t, f.srv.URL+"/v1/runs", session, "acu_session")
	guardtest.CheckNoLeak(t, ctx, guardtest.NewSpy(t), session)

	// The link worked once.
	if err := chromedp.Do(ctx, chromedp.Navigate(link.URL)); err != nil {
		t.Fatal(err)
	}
	guardtest.Poll(t, ctx, "a refused reuse", `document.body.dataset.state === "login-failed" && document.getElementById("status").textContent.includes("unknown, used or expired")`)
	if s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`sessionStorage.getItem("acu_session") || ""`)); s != "" {
		t.Errorf("a refused login left a session in the page")
	}

	// A link used after guard.LoginCodeTTL fails.
	late := f.loginLink("/v1/runs")
	clk.add(guard.LoginCodeTTL)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(late.URL)); err != nil {
		t.Fatal(err)
	}
	guardtest.Poll(t, ctx, "a refused expired link", `document.body.dataset.state === "login-failed" && document.getElementById("status").textContent.includes("unknown, used or expired")`)
	if resp, _ := f.do("GET", "/", "", map[string]string{"Authorization": ""}); resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self';") || strings.Contains(resp.Header.Get("Content-Security-Policy"), "unsafe") {
		t.Errorf("GET / = %d, CSP %q", resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
	}
}
