package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/server"
	"github.com/acu-dev/acu/internal/testx"
)

// scopeProbe is a request that would change something if its route let
// it through: the walk sends it with every token too weak for the route,
// then checks that nothing changed.
type scopeProbe struct {
	path  string // the path, ids filled in (default: the pattern's)
	body  string
	check func(t *testing.T) // fails if the refused requests had an effect
}

// TestScopesFromTheTable walks the route table (server.Routes) on a real
// daemon with no token, a read, an act and an admin token: no token is
// 401, a scope below the route's is 403, the route's scope or more passes
// the auth layer (any answer but 401 and 403). Every route that needs more
// than read, and every effect route, has a probe: the refused requests
// carry a body that would act, and the probe checks nothing happened (the
// launch marker file absent, the window still there, the clipboard and
// the pointer unchanged, no recording, take-over or task started, the
// other caller's wait still live and unchanged).
func TestScopesFromTheTable(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	appDir := filepath.Join(dataDir, "share", "applications")
	if err := os.MkdirAll(appDir, 0o700); err != nil {
		t.Fatal(err)
	}
	entryMarker, argvMarker := filepath.Join(dataDir, "entry-launched"), filepath.Join(dataDir, "argv-launched")
	if err := os.WriteFile(filepath.Join(appDir, "acu-marker.desktop"), []byte("[Desktop Entry]\nType=Application\nName=Acu Marker\nExec=touch "+entryMarker+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env = append(env, "XDG_DATA_HOME="+filepath.Join(dataDir, "share"), "XDG_DATA_DIRS="+filepath.Join(dataDir, "none"))
	d := startDaemon(t, env, dataDir, port)
	ctx := t.Context()
	tokens := map[string]string{"": "", api.ScopeAdmin: tokenOf(t, dataDir)}
	for _, scope := range []string{api.ScopeRead, api.ScopeAct} {
		out, errOut, code := acu(t, env, "token", "create", "--scope", scope, "--name", "walk-"+scope)
		if code != 0 {
			t.Fatalf("acu token create --scope %s: %s", scope, errOut)
		}
		tokens[scope] = strings.TrimSpace(out)
	}
	admin, read := d.client, api.NewClient(d.client.BaseURL(), tokens[api.ScopeRead])

	// The things the refused requests must leave alone.
	xt := testx.StartXterm(t, dpy, testx.XtermSpec{Title: "scope-walk", Geometry: "40x10+30+40"})
	var win api.Window
	eventually(t, 20*time.Second, "the xterm listed", func() bool {
		l, err := admin.Windows(ctx, "")
		for _, w := range l.Windows {
			if err == nil && w.Title == xt.Title {
				win = w
			}
		}
		return win.ID != ""
	})
	if _, err := admin.SetClipboard(ctx, api.Clipboard{Text: "before the walk"}); err != nil {
		t.Fatal(err)
	}
	pointerAt := func() [2]int {
		p, err := admin.Pointer(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		return [2]int{p.X, p.Y}
	}
	if _, err := admin.Act(ctx, api.ActRequest{Actions: []api.Action{{Kind: "move", At: &api.Point{X: ptr(100), Y: ptr(100)}}}}); err != nil {
		t.Fatal(err)
	}
	pointer := pointerAt()
	theirs, err := admin.CreateWait(ctx, api.CreateWait{Criteria: `"never shown" is visible`, Timeout: 600})
	if err != nil {
		t.Fatal(err)
	}
	held, err := admin.TakeOver(ctx, dpy) // for the refused hand-backs; handed back before the take-over probes
	if err != nil || !held.Active {
		t.Fatalf("take over = %+v, %v", held, err)
	}
	rec, err := admin.StartRecording(ctx, api.StartRecording{})
	if err != nil {
		t.Fatal(err)
	}

	unchanged := func(t *testing.T) {
		t.Helper()
		if p := pointerAt(); p != pointer {
			t.Errorf("pointer at %v after refused input, want %v", p, pointer)
		}
	}
	probes := map[string]scopeProbe{
		"POST /v1/apps/launch": {body: `{"argv":["touch",` + quote(argvMarker) + `]}`, check: func(t *testing.T) {
			if _, err := os.Stat(argvMarker); err == nil {
				t.Errorf("%s exists: a refused launch ran", argvMarker)
			}
		}},
		"POST /v1/windows/{id}/{op}": {path: "/v1/windows/" + win.ID + "/close", body: `{"kill":true}`, check: func(t *testing.T) {
			l, err := admin.Windows(ctx, "")
			if err != nil || !strings.Contains(fmt.Sprint(l.Windows), xt.Title) {
				t.Errorf("windows after refused closes = %+v, %v; want %q still open", l.Windows, err, xt.Title)
			}
		}},
		"PUT /v1/clipboard": {body: `{"text":"pwned"}`, check: func(t *testing.T) {
			if c, err := admin.GetClipboard(ctx, "", "", ""); err != nil || c.Text != "before the walk" {
				t.Errorf("clipboard after refused writes = %q, %v", c.Text, err)
			}
		}},
		"GET /v1/clipboard":          {check: func(*testing.T) {}}, // a read: nothing to change
		"POST /v1/actions":           {body: `{"actions":[{"kind":"move","at":{"x":700,"y":700}}]}`, check: unchanged},
		"POST /v1/live/input":        {body: `{"display":"` + dpy + `","events":[{"type":"move","x":700,"y":700}]}`, check: unchanged},
		"POST /v1/computer/{vendor}": {path: "/v1/computer/anthropic", body: `{"action":"mouse_move","coordinate":[700,500]}`, check: unchanged},
		"DELETE /v1/live/takeover": {path: "/v1/live/takeover?display=" + dpy, check: func(t *testing.T) {
			if st, err := admin.Takeover(ctx, dpy); err != nil || !st.Active {
				t.Errorf("take-over after refused hand-backs = %+v, %v; want still held", st, err)
			}
			if _, err := admin.HandBack(ctx, dpy); err != nil {
				t.Fatal(err)
			}
		}},
		"POST /v1/live/takeover": {body: `{"display":"` + dpy + `"}`, check: func(t *testing.T) {
			if st, err := admin.Takeover(ctx, dpy); err != nil || st.Active {
				t.Errorf("take-over after refused take-overs = %+v, %v; want none", st, err)
			}
		}},
		"POST /v1/tasks": {body: `{"task":"open the menu"}`, check: func(t *testing.T) {
			if l, err := admin.Runs(ctx, api.RunQuery{Kind: "task"}); err != nil || len(l.Runs) != 0 {
				t.Errorf("task runs after refused starts = %+v, %v; want none", l.Runs, err)
			}
		}},
		"POST /v1/recordings": {body: `{}`, check: func(t *testing.T) {
			if l, err := admin.Recordings(ctx, "", 0); err != nil || len(l.Recordings) != 1 {
				t.Errorf("recordings after refused starts = %+v, %v; want only the admin's", l.Recordings, err)
			}
		}},
		"POST /v1/recordings/{id}/stop": {path: "/v1/recordings/" + rec.ID + "/stop", check: func(t *testing.T) {
			l, err := admin.Recordings(ctx, "", 0)
			if err != nil || len(l.Recordings) != 1 || l.Recordings[0].EndedAt != nil {
				t.Errorf("recordings after refused stops = %+v, %v; want the admin's still recording", l.Recordings, err)
			}
			if _, err := admin.StopRecording(ctx, rec.ID); err != nil {
				t.Fatal(err)
			}
		}},
		"POST /v1/auth/link": {check: func(*testing.T) {}}, // mints a link the refused caller never sees
	}
	// The order matters for the probes that hold something for the
	// refused requests (the take-over, the recording).
	order := func(rs []server.RouteInfo) []server.RouteInfo {
		var first, rest []server.RouteInfo
		for _, r := range rs {
			if r.Key() == "DELETE /v1/live/takeover" {
				first = append(first, r)
			} else {
				rest = append(rest, r)
			}
		}
		return append(first, rest...)
	}

	client := &http.Client{Timeout: 2 * time.Minute}
	do := func(method, path, body, tok string) int {
		t.Helper()
		if method == "" {
			method = http.MethodPost
		}
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, d.client.BaseURL()+path, rd)
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		resp.Body.Close() // streams: the status is all the walk needs
		return resp.StatusCode
	}
	// harmless is a request every handler refuses past the auth layer
	// (bad JSON, a malformed display, cursor and limit), so passing calls
	// change nothing either.
	const harmless = "?display=:0/x&after=x&limit=x&timeout=x"

	for _, r := range order(server.Routes()) {
		t.Run(r.Key(), func(t *testing.T) {
			p, probed := probes[r.Key()]
			if (r.Desktop == server.DesktopEffect || api.ScopeRank(r.Scope) > api.ScopeRank(api.ScopeRead)) && !probed {
				t.Fatalf("%s (scope %s, desktop %q) has no probe: add one that checks a refused request changes nothing", r.Key(), r.Scope, r.Desktop)
			}
			if r.Desktop == server.DesktopEffect && api.ScopeRank(r.Scope) < api.ScopeRank(api.ScopeAct) {
				t.Errorf("%s changes the desktop with scope %q: effects need act", r.Key(), r.Scope)
			}
			path := p.path
			if path == "" {
				path = fillPattern(r.Pattern)
			}
			for _, scope := range []string{"", api.ScopeRead, api.ScopeAct, api.ScopeAdmin} {
				enough := api.ScopeRank(scope) >= api.ScopeRank(r.Scope)
				if enough {
					if r.Scope == "" && scope != "" {
						continue
					}
					harmlessPath := fillPattern(r.Pattern)
					if strings.Contains(harmlessPath, "?") {
						harmlessPath += "&" + harmless[1:]
					} else {
						harmlessPath += harmless
					}
					if got := do(r.Method, harmlessPath, "{", tokens[scope]); got == http.StatusUnauthorized || got == http.StatusForbidden {
						t.Errorf("%s %s with scope %q = %d, want past the auth layer", r.Method, harmlessPath, scope, got)
					}
					continue
				}
				want := http.StatusForbidden
				if scope == "" {
					want = http.StatusUnauthorized
				}
				if got := do(r.Method, path, p.body, tokens[scope]); got != want {
					t.Errorf("%s %s with scope %q = %d, want %d", r.Method, path, scope, got, want)
				}
			}
			if p.check != nil {
				p.check(t)
			}
		})
	}

	// Runs: a read token cancels and changes its own waits, not another
	// caller's; act may.
	t.Run("run ownership", func(t *testing.T) {
		for _, c := range []struct{ method, path, body string }{
			{"DELETE", "/v1/waits/" + theirs.ID, ""},
			{"PATCH", "/v1/waits/" + theirs.ID, `{"criteria":"\"changed\" is visible"}`},
			{"POST", "/v1/runs/" + theirs.ID + "/cancel", ""},
			{"POST", "/v1/runs/" + theirs.ID + "/resume", ""},
		} {
			if got := do(c.method, c.path, c.body, tokens[api.ScopeRead]); got != http.StatusForbidden {
				t.Errorf("%s %s with the read token on the admin's wait = %d, want 403", c.method, c.path, got)
			}
		}
		w, err := admin.GetWait(ctx, theirs.ID)
		if err != nil || w.State != "watching" || w.Criteria != theirs.Criteria {
			t.Errorf("the admin's wait after refused changes = %+v, %v; want watching %q", w, err, theirs.Criteria)
		}
		mine, err := read.CreateWait(ctx, api.CreateWait{Criteria: `"never shown" is visible`, Timeout: 600})
		if err != nil {
			t.Fatal(err)
		}
		if run, err := admin.Run(ctx, mine.ID); err != nil || run.Creator == "" || run.Creator == "token-file" {
			t.Errorf("the read token's wait = %+v, %v; want its creator recorded", run, err)
		}
		if _, err := read.UpdateWait(ctx, mine.ID, api.UpdateWait{Criteria: ptr(`"mine" is visible`)}); err != nil {
			t.Errorf("the read token changing its own wait = %v", err)
		}
		if w, err := read.CancelWait(ctx, mine.ID, "done"); err != nil || w.State != "cancelled" {
			t.Errorf("the read token cancelling its own wait = %+v, %v", w, err)
		}
		act := api.NewClient(d.client.BaseURL(), tokens[api.ScopeAct])
		if w, err := act.CancelWait(ctx, theirs.ID, "act may"); err != nil || w.State != "cancelled" {
			t.Errorf("the act token cancelling the admin's wait = %+v, %v", w, err)
		}
	})

	// Launches: a desktop entry needs act, an argv admin.
	t.Run("launch", func(t *testing.T) {
		act := api.NewClient(d.client.BaseURL(), tokens[api.ScopeAct])
		_, err := act.Launch(ctx, api.LaunchRequest{Argv: []string{"touch", argvMarker}})
		if se, ok := err.(*api.StatusError); !ok || se.Status != http.StatusForbidden || se.Field != "argv" {
			t.Errorf("argv launch with an act token = %v, want 403 naming argv", err)
		}
		if _, err := act.Launch(ctx, api.LaunchRequest{DesktopEntry: "Acu Marker"}); err != nil {
			t.Errorf("desktop entry launch with an act token = %v", err)
		}
		if _, err := admin.Launch(ctx, api.LaunchRequest{Argv: []string{"touch", argvMarker}}); err != nil {
			t.Errorf("argv launch with an admin token = %v", err)
		}
		for _, m := range []string{entryMarker, argvMarker} {
			eventually(t, 20*time.Second, m+" written by its launch", func() bool { _, err := os.Stat(m); return err == nil })
		}
	})
}

// fillPattern turns a route pattern into a path: wildcards become a
// value no run, wait or window has.
func fillPattern(p string) string {
	p = strings.ReplaceAll(p, "{$}", "")
	p = strings.ReplaceAll(p, "{vendor}", "anthropic")
	p = strings.ReplaceAll(p, "{op}", "move")
	for strings.Contains(p, "{") {
		i, j := strings.Index(p, "{"), strings.Index(p, "}")
		p = p[:i] + "nosuch" + p[j+1:]
	}
	return p
}

func quote(s string) string { return fmt.Sprintf("%q", s) }
