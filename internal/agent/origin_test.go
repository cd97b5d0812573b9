package agent

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/acu-dev/acu/internal/llm/llmtest"
)

// originPanel serves the origin panel's client logic (testdata) at
// /origin/panel.html on the same origin as h's agent, as the origin engine
// serves its panel.html beside its endpoints.
func originPanel(t *testing.T, h *harness) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /origin/panel.html", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, "testdata/origin_panel.html")
	})
	mux.Handle("/", h.a.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/origin/panel.html"
}

// TestOriginPanelInChromium drives the origin panel's client logic in
// headless Chromium against acu, served by acu itself as the user's own
// panel (ACU_AGENT_PANEL_FILE) behind acu's token: opened through acu's
// one-time link, an inject reads as done (j.ok), acu's errors show their
// message (j.err), not "undefined".
func TestOriginPanelInChromium(t *testing.T) {
	window(t, gray)
	h := start(t, llmtest.Text(reply("done")), func(o *Options) {
		o.Annotator, o.MaxTurns, o.PanelFile = AnnotatorPanel, 1, "testdata/origin_panel.html"
	}, nil)
	if !h.a.opts.Token.Set() {
		t.Fatal("the harness runs without a token: this test must run behind one")
	}
	ctx, poll := browser(t, h)
	poll("the origin page with acu's login", `document.title === "origin panel" && !!window.acuSession`)
	status := func(what, prefix string) {
		t.Helper()
		poll(what, `document.getElementById("status").textContent.startsWith(`+jsString(prefix)+`)`)
	}
	click := func(id string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("status").textContent = ""; document.getElementById(`+jsString(id)+`).click(); true`)); err != nil {
			t.Fatal(err)
		}
	}
	set := func(id, v string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.SetValue("#"+id, v)); err != nil {
			t.Fatal(err)
		}
	}

	click("inject") // empty vlm_text: acu's 400
	status("the inject error's message", "Inject failed: vlm_text: want the model output")

	set("vlm", reply("start"))
	click("inject")
	status("the inject as done", "Injected")
	poll("the engine waiting for the annotated picture", `document.getElementById("phase").textContent === "waiting_annotated"`)

	set("seq", "7")
	click("annotate")
	status("the seq mismatch's message", "Annotate failed: seq 7 does not match")

	set("seq", "1")
	click("annotate")
	status("the annotated picture taken", "Annotated")
	h.waitState("the session to end", func(s State) bool { return s.Phase == PhaseStopped && s.AnnotatedSeq == 1 })
}

// TestOriginPanelTokenError: with a token set, the origin panel (which
// cannot send one) shows acu's 401 message, not "undefined".
func TestOriginPanelTokenError(t *testing.T) {
	window(t, gray)
	h := start(t, llmtest.Text(reply("done")), func(o *Options) { o.MaxTurns = 1 }, nil)
	ctx, _ := browser(t, h)
	// A fresh browser context holds no session from browser's login link.
	ctx, cancel := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
	defer cancel()
	poll := func(what, expr string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
			t.Fatalf("page never showed %s (%s): %v\npage: %s", what, expr, err, page)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(originPanel(t, h))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("vlm").value = "{}"; document.getElementById("inject").click(); true`)); err != nil {
		t.Fatal(err)
	}
	poll("the 401's message", `document.getElementById("status").textContent.startsWith("Inject failed: missing or wrong token")`)
}

// TestOwnPanelInject: acu's own panel still injects (it reads the status
// and error.message, not ok).
func TestOwnPanelInject(t *testing.T) {
	window(t, gray)
	h := start(t, llmtest.Text(reply("done")), func(o *Options) { o.MaxTurns = 1 }, nil)
	ctx, poll := browser(t, h)
	poll("the panel", `document.getElementById("inject") !== null && document.getElementById("phase").textContent !== ""`)
	if err := chromedp.Do(ctx, chromedp.SetValue("#inject-text", reply("Injected from acu's panel"))); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click("#inject")); err != nil {
		t.Fatal(err)
	}
	poll("the injected observation", `document.getElementById("observation").textContent === "Injected from acu's panel"`)
	h.waitState("the session to end", func(s State) bool { return s.Phase == PhaseStopped })
}

// TestOriginShapes checks the wire: acu's fields stay, the origin's are
// added.
func TestOriginShapes(t *testing.T) {
	window(t, gray)
	h := start(t, llmtest.Text(reply("done")), nil, nil)
	tests := []struct {
		name   string
		method string
		path   string
		body   any
		token  bool
		status int
		want   map[string]any
	}{
		{"inject", "POST", "/inject", InjectRequest{VLMText: reply("go")}, true, http.StatusAccepted,
			map[string]any{"ok": true, "queued": true}},
		{"bad inject", "POST", "/inject", InjectRequest{}, true, http.StatusBadRequest,
			map[string]any{"ok": false, "err": "vlm_text: want the model output to run, e.g. {\"observation\":\"...\",\"actions\":[...]}",
				"error": map[string]any{"code": "invalid", "field": "vlm_text", "message": "vlm_text: want the model output to run, e.g. {\"observation\":\"...\",\"actions\":[...]}"}}},
		{"no token", "GET", "/state", nil, false, http.StatusUnauthorized, nil},
		{"no route", "GET", "/nothing", nil, true, http.StatusNotFound, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, b := h.do(tt.method, tt.path, tt.body, tt.token)
			if code != tt.status {
				t.Fatalf("%s %s = %d %s, want %d", tt.method, tt.path, code, b, tt.status)
			}
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("%s %s: %s: %v", tt.method, tt.path, b, err)
			}
			if tt.want != nil {
				for k, v := range tt.want {
					if gb, _ := json.Marshal(got[k]); string(gb) != mustJSON(v) {
						t.Errorf("%s %s: %s = %s, want %s", tt.method, tt.path, k, gb, mustJSON(v))
					}
				}
				return
			}
			e, _ := got["error"].(map[string]any)
			if got["ok"] != false || got["err"] == "" || got["err"] != e["message"] {
				t.Errorf("%s %s = %s, want ok false and err = error.message", tt.method, tt.path, b)
			}
		})
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func jsString(s string) string { return mustJSON(s) }
