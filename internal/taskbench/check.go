package taskbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
)

// checkSettle is how long checkSettled gives a web page to show the
// outcome of the engine's last action: a browser runs a click's handler
// in its renderer after the accessibility action that asked for it has
// returned, which a loaded machine can put after the engine has ended
// (seen once in CI: a form's submit handler had not run when the page was
// read).
const checkSettle = 3 * time.Second

// checkSettled runs c and, for a check that reads a page, again until it
// passes or checkSettle has passed, and returns the last run's error:
// only the asked-for outcome passes, shown a little late or not.
func (d *desktop) checkSettled(ctx context.Context, c Check) error {
	deadline := time.Now().Add(checkSettle)
	for {
		err := d.check(ctx, c)
		if err == nil || !c.readsPage() || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// readsPage reports whether c (or one of its parts) reads a web page.
func (c Check) readsPage() bool {
	for _, sub := range c.All {
		if sub.readsPage() {
			return true
		}
	}
	return c.Kind == "page"
}

// check runs c on the desktop; a nil error is a pass, else the error says
// what the application showed instead.
func (d *desktop) check(ctx context.Context, c Check) error {
	if len(c.All) > 0 {
		var errs []error
		for _, sub := range c.All {
			if err := d.check(ctx, sub); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
	var got, what string
	var err error
	switch c.Kind {
	case "stdout":
		what = "stdout of " + c.Process
		got, err = d.stdout(c.Process, 2*time.Second)
	case "file":
		what = "file " + c.Path
		var b []byte
		b, err = os.ReadFile(filepath.Join(d.work, d.expand(c.Path)))
		got = string(b)
	case "command":
		argv := c.Run
		if c.Shell != "" {
			argv = []string{"sh", "-c", c.Shell}
			what = "command " + c.Shell
		} else {
			what = "command " + strings.Join(c.Run, " ")
		}
		got, err = d.run(ctx, append([]string(nil), argv...))
	case "page":
		what = "page " + c.Expr
		got, err = d.evalPage(ctx, c.Expr)
	default:
		return fmt.Errorf("check kind %q", c.Kind)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return c.match(what, strings.TrimSpace(got))
}

func (c Check) match(what, got string) error {
	show := strconv.Quote(clip(got, 200))
	if c.Equals != nil && got != strings.TrimSpace(*c.Equals) {
		return fmt.Errorf("%s is %s, want %q", what, show, *c.Equals)
	}
	if c.Contains != "" && !strings.Contains(got, c.Contains) {
		return fmt.Errorf("%s is %s, want it to contain %q", what, show, c.Contains)
	}
	if c.Matches != "" && !regexp.MustCompile(c.Matches).MatchString(got) {
		return fmt.Errorf("%s is %s, want it to match %s", what, show, c.Matches)
	}
	if c.Lacks != "" && strings.Contains(got, c.Lacks) {
		return fmt.Errorf("%s is %s, want it without %q", what, show, c.Lacks)
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// evalPage evaluates expr in the first page of the task's Chromium through
// the DevTools protocol and returns its value as a string.
func (d *desktop) evalPage(ctx context.Context, expr string) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	pages, err := d.pages(cctx)
	if err != nil {
		return "", err
	}
	if len(pages) == 0 {
		return "", errors.New("chromium has no page open")
	}
	actx, acancel := remote.NewAllocator(cctx, fmt.Sprintf("http://127.0.0.1:%d", d.cdpPort))
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	tctx, tcancel := chromedp.NewContext(bctx, chromedp.WithTargetID(target.ID(pages[0].ID)))
	defer tcancel()
	v, err := chromedp.Run(tctx, chromedp.Evaluate[any](expr))
	if err != nil {
		return "", fmt.Errorf("evaluate in %s: %w", pages[0].URL, err)
	}
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	default:
		return fmt.Sprint(v), nil
	}
}

type cdpPage struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	URL  string `json:"url"`
}

// pages lists Chromium's open pages (GET /json/list).
func (d *desktop) pages(ctx context.Context) ([]cdpPage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/json/list", d.cdpPort), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("chromium's DevTools port %d: %w", d.cdpPort, err)
	}
	defer resp.Body.Close()
	var all, pages []cdpPage
	if err := json.NewDecoder(resp.Body).Decode(&all); err != nil {
		return nil, fmt.Errorf("chromium's page list: %w", err)
	}
	for _, p := range all {
		if p.Type == "page" {
			pages = append(pages, p)
		}
	}
	return pages, nil
}

// waitCDP waits until Chromium answers on its DevTools port with a page.
func (d *desktop) waitCDP(ctx context.Context) error {
	for {
		ps, err := d.pages(ctx)
		if err == nil && len(ps) > 0 {
			return sleepCtx(ctx, time.Second)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("chromium's DevTools port %d did not answer: %v", d.cdpPort, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
