// Package guardtest checks acu's browser login in real headless Chromium:
// it starts the browser for a test, and a spy server on another loopback
// port that records what the browser sends it, so a test can show that a
// logged-in page leaks no credential to other local ports and that a
// stolen session value is useless without the X-Acu-Session header.
package guardtest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"

	"github.com/acu-dev/acu/internal/guard"
)

// Browser starts headless Chromium with a fresh profile; the test's cleanup
// stops it. A missing Chromium fails the test.
func Browser(t *testing.T, width, height int) context.Context {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not installed (apt-get install chromium): %v", err)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(width, height))
	ctx, cancel := chromedp.NewContext(actx)
	// The first Run starts the browser, on a context without a deadline.
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("start chromium: %v", err)
	}
	ctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelT(); cancel(); cancelAlloc() })
	return ctx
}

// Poll waits until expr is true in the page, failing the test with the
// page's text if it never is.
func Poll(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	var err error
	for range 5 {
		_, err = chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second)))
		// Right after a navigation the poll can land in the previous
		// document's execution context, which is gone: poll again.
		if err == nil || !strings.Contains(err.Error(), "Cannot find context with specified id") {
			break
		}
	}
	if err != nil {
		page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		t.Fatalf("page never showed %s (%s): %v\npage: %s", what, expr, err, page)
	}
}

// Session returns the session the page at the browser's current origin
// keeps in sessionStorage (what a thief would have to steal).
func Session(t *testing.T, ctx context.Context) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`sessionStorage.getItem("acu_session") || ""`))
	if err != nil {
		t.Fatalf("read sessionStorage: %v", err)
	}
	if s == "" {
		t.Fatal("the page holds no session after the login")
	}
	return s
}

// Spy is a web server on another loopback port, the place a hostile local
// program would serve a page from. It records every request it gets.
type Spy struct {
	URL string
	mu  sync.Mutex
	got []http.Header
}

// NewSpy starts a spy; the test's cleanup stops it.
func NewSpy(t *testing.T) *Spy {
	t.Helper()
	s := &Spy{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.got = append(s.got, r.Header.Clone())
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<!doctype html><title>spy</title><p>another local port</p>"))
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Requests returns the headers of every request the spy got.
func (s *Spy) Requests() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

// CheckNoLeak is called with the browser on an acu page after its login
// (session is what the page holds). It opens the spy's page, on another
// port of the same loopback host, in the same tab, and asks it for a
// resource with credentials: the spy must receive no cookie, and its page
// must see no cookie and nothing of the acu page's sessionStorage. The
// browser must hold no cookie at all.
func CheckNoLeak(t *testing.T, ctx context.Context, spy *Spy, session string) {
	t.Helper()
	res, err := chromedp.CallBrowser(ctx, storage.GetCookies, storage.GetCookiesParams{})
	if err != nil {
		t.Fatalf("read the browser's cookies: %v", err)
	}
	for _, c := range res.Cookies {
		t.Errorf("the browser holds a cookie %s=%.8s… for %s%s; acu must set none", c.Name, c.Value, c.Domain, c.Path)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(spy.URL+"/")); err != nil {
		t.Fatalf("open the spy's page: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[int](`fetch("/probe", {credentials: "include"}).then(r => r.status)`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatalf("fetch on the spy's page: %v", err)
	}
	reqs := spy.Requests()
	if len(reqs) < 2 {
		t.Fatalf("the spy got %d requests, want the page and the probe", len(reqs))
	}
	for i, h := range reqs {
		if c := h.Get("Cookie"); c != "" {
			t.Errorf("request %d to another local port carried Cookie %q", i, c)
		}
		for k, vs := range h {
			for _, v := range vs {
				if v == session || k == guard.SessionHeader {
					t.Errorf("request %d to another local port carried the session in %s", i, k)
				}
			}
		}
	}
	seen, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.cookie + "|" + sessionStorage.length + "|" + localStorage.length`))
	if err != nil {
		t.Fatal(err)
	}
	if seen != "|0|0" {
		t.Errorf("the page on another local port sees cookie|sessionStorage|localStorage = %q, want nothing", seen)
	}
}

// CheckStolen shows that the session value is a credential only in the
// X-Acu-Session header of a request to its own listener: a GET of url with
// the value as any cookie, or with no credential at all, is 401, and with
// the header it is 200.
func CheckStolen(t *testing.T, url, session string, cookieNames ...string) {
	t.Helper()
	get := func(set func(*http.Request)) int {
		req, err := http.NewRequest("GET", url, nil)
		if err != nil {
			t.Fatal(err)
		}
		set(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(func(*http.Request) {}); code != http.StatusUnauthorized {
		t.Errorf("GET %s without a credential = %d, want 401", url, code)
	}
	for _, name := range cookieNames {
		if code := get(func(r *http.Request) { r.AddCookie(&http.Cookie{Name: name, Value: session}) }); code != http.StatusUnauthorized {
			t.Errorf("GET %s with the stolen session as cookie %s = %d, want 401", url, name, code)
		}
	}
	if code := get(func(r *http.Request) { r.Header.Set(guard.SessionHeader, session) }); code != http.StatusOK {
		t.Errorf("GET %s with the session in %s = %d, want 200", url, guard.SessionHeader, code)
	}
}
