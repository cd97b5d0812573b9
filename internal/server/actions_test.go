package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/jpeg"
	"image/png"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jezek/xgb/xtest"

	"github.com/acu-dev/acu/internal/actions"
	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/input"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/server"
	"github.com/acu-dev/acu/internal/smartwait"
	"github.com/acu-dev/acu/internal/store"
	"github.com/acu-dev/acu/internal/testx"
)

const actToken = "act-token-0123456789"

// actFixture is a real desktop (Xvfb, session and accessibility buses), the
// action service on it, and the HTTP server in front, driven through
// api.Client.
type actFixture struct {
	d   *atspitest.Desktop
	reg *runs.Registry
	c   *api.Client
	url string
}

func newActFixture(t *testing.T, pol actions.Policy) *actFixture {
	t.Helper()
	d := atspitest.NewDesktop(t)
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "acu.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reg := runs.New(db, runs.Options{})
	eng := smartwait.New(smartwait.Options{Runs: reg, Capture: d.Hub, Store: db, DefaultDisplay: d.Display})
	svc, err := actions.New(actions.Options{Hub: d.Hub, Runs: reg, Settle: eng, DefaultDisplay: d.Display,
		SessionBus: d.Session.SessionBus, Policy: pol, SessionIdle: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = svc.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	srv := httptest.NewServer(server.New(server.Options{Token: actToken, Runs: reg, Actions: svc}))
	t.Cleanup(srv.Close)
	c := api.NewClient(srv.URL, actToken)
	c.SetClientName("test-client")
	return &actFixture{d: d, reg: reg, c: c, url: srv.URL}
}

// zenityForm starts a two-entry zenity form and returns it with the ids of
// its entries (top to bottom) and of its OK button, read from GET
// /v1/elements.
func (f *actFixture) zenityForm(t *testing.T, title string) (*atspitest.App, []api.Element, string, api.ElementMap) {
	t.Helper()
	app := f.d.Zenity(t, "--forms", "--title="+title, "--text=Acu form", "--add-entry=Name", "--add-entry=City")
	var m api.ElementMap
	var entries []api.Element
	ok := ""
	for range 20 { // the form may still be laying out
		var err error
		if m, err = f.c.Elements(t.Context(), api.ElementsQuery{}); err != nil {
			t.Fatal(err)
		}
		entries, ok = nil, ""
		for _, e := range m.Elements {
			if e.Type == "input" && e.Editable && e.Showing {
				entries = append(entries, e)
			}
			if e.Type == "button" && e.Text == "OK" {
				ok = e.ID
			}
		}
		if len(entries) == 2 && ok != "" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(entries) != 2 || ok == "" {
		t.Fatalf("form has %d entries and OK %q, want 2 and an id:\n%s", len(entries), ok, m.Text)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Box[1] < entries[j].Box[1] })
	return app, entries, ok, m
}

func waitOutput(t *testing.T, app *atspitest.App, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	out, err := app.Wait(ctx)
	if err != nil || out != want {
		t.Fatalf("zenity printed %q (%v), want %q", out, err, want)
	}
}

func TestActZenityFormByElement(t *testing.T) {
	f := newActFixture(t, actions.Policy{PauseOnUser: true})
	app, entries, ok, m := f.zenityForm(t, "Acu Form")
	if !strings.Contains(m.Text, "["+ok+"]") {
		t.Errorf("map text lacks %s:\n%s", ok, m.Text)
	}
	resp, err := f.c.Act(t.Context(), api.ActRequest{
		Actions: []api.Action{
			{Kind: api.ActType, At: api.El(entries[0].ID), Text: "Ada Lovelace"},
			{Kind: api.ActType, At: api.El(entries[1].ID), Text: "Zürich", Verify: true},
		},
		Settle:     &api.SettleOptions{},
		Screenshot: &api.ShotOptions{MaxWidth: 640},
		Diff:       true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.OK || len(resp.Results) != 2 {
		t.Fatalf("Act = %+v, want 2 ok results", resp)
	}
	for _, r := range resp.Results {
		if !r.OK || r.Element == "" || r.Via == "" {
			t.Errorf("result %+v: want ok on an element, with how", r)
		}
	}
	if resp.Settle == nil || !resp.Settle.Settled {
		t.Errorf("settle = %+v, want settled", resp.Settle)
	}
	if resp.Diff == nil || !strings.Contains(resp.Diff.Text, "Zürich") {
		t.Errorf("diff = %+v, want the typed value", resp.Diff)
	}
	if s := resp.Screenshot; s == nil || s.Width != 640 || s.ID == "" {
		t.Errorf("screenshot = %+v, want 640 wide with an id", s)
	} else if img, err := jpeg.Decode(bytes.NewReader(s.Data)); err != nil || img.Bounds().Dx() != 640 {
		t.Errorf("screenshot does not decode as a 640-wide JPEG: %v", err)
	}
	resp, err = f.c.Act(t.Context(), api.ActRequest{Actions: []api.Action{{Kind: api.ActClick, At: api.El(ok)}}})
	if err != nil || !resp.OK {
		t.Fatalf("click OK = %+v, %v", resp, err)
	}
	waitOutput(t, app, "Ada Lovelace|Zürich\n")
}

func TestActZenityFormByScreenshotPixels(t *testing.T) {
	f := newActFixture(t, actions.Policy{PauseOnUser: true})
	app, entries, _, m := f.zenityForm(t, "Acu Pixels")
	shot, err := f.c.ScreenshotWith(t.Context(), "", api.ShotOptions{Format: "jpeg", MaxWidth: 960})
	if err != nil {
		t.Fatal(err)
	}
	if shot.ID == "" || shot.Width != 960 || shot.FrameWidth != m.Screen[0] {
		t.Fatalf("screenshot %dx%d of %dx%d, id %q: want a 960-wide downscale of the screen with an id", shot.Width, shot.Height, shot.FrameWidth, shot.FrameHeight, shot.ID)
	}
	if _, err := jpeg.Decode(bytes.NewReader(shot.Data)); err != nil {
		t.Fatal(err)
	}
	// What a model reads off the 960-pixel image: each entry's centre in
	// the image's own pixels.
	inImage := func(e api.Element) *api.Point {
		x := e.Center[0] * shot.Width / shot.FrameWidth
		y := e.Center[1] * shot.Height / shot.FrameHeight
		return &api.Point{X: &x, Y: &y}
	}
	var okBtn api.Element
	for _, e := range m.Elements {
		if e.Type == "button" && e.Text == "OK" {
			okBtn = e
		}
	}
	resp, err := f.c.Act(t.Context(), api.ActRequest{Shot: shot.ID, Actions: []api.Action{
		{Kind: api.ActClick, At: inImage(entries[0])},
		{Kind: api.ActType, Text: "Grace"},
		{Kind: api.ActClick, At: inImage(entries[1]), Count: 3},
		{Kind: api.ActType, Text: "Paris"},
		{Kind: api.ActKey, Keys: "shift+Tab", Repeat: 1},
		{Kind: api.ActWait, Ms: 50},
		{Kind: api.ActClick, At: inImage(okBtn)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.OK {
		t.Fatalf("Act = %+v", resp)
	}
	for _, r := range resp.Results[:1] {
		at := *r.At
		e := entries[0]
		if at[0] < e.Box[0] || at[0] >= e.Box[0]+e.Box[2] || at[1] < e.Box[1] || at[1] >= e.Box[1]+e.Box[3] {
			t.Errorf("click landed at %v, outside the entry %v", at, e.Box)
		}
	}
	waitOutput(t, app, "Grace|Paris\n")
}

func TestActRefusals(t *testing.T) {
	f := newActFixture(t, actions.Policy{Deny: []*regexp.Regexp{regexp.MustCompile(`(?i)acu vault`)}, PauseOnUser: true, Quiet: 400 * time.Millisecond})
	app := f.d.Zenity(t, "--entry", "--title=Acu Vault", "--text=Master password:")
	m, err := f.c.Elements(t.Context(), api.ElementsQuery{Labels: true})
	if err != nil {
		t.Fatal(err)
	}
	if m.Screenshot == nil || len(m.Screenshot.Data) == 0 {
		t.Fatalf("labels=true returned no screenshot")
	}
	okID := ""
	for _, e := range m.Elements {
		if e.Type == "button" && e.Text == "OK" {
			okID = e.ID
		}
	}
	if okID == "" {
		t.Fatalf("no OK button:\n%s", m.Text)
	}

	t.Run("deny-list", func(t *testing.T) {
		for _, a := range []api.Action{
			{Kind: api.ActClick, At: api.El(okID)},
			{Kind: api.ActClick, At: api.Pt(500, 500)},
			{Kind: api.ActType, Text: "hunter2"}, // the focus is in the vault
		} {
			_, err := f.c.Act(t.Context(), api.ActRequest{Actions: []api.Action{a}})
			var se *api.StatusError
			if !errors.As(err, &se) || se.Status != http.StatusForbidden || se.Code != api.CodeWindowDenied || !strings.Contains(se.Message, "Acu Vault") {
				t.Errorf("%s = %v, want 403 window_denied naming the window", a.Kind, err)
			}
		}
		if app.Exited() {
			t.Fatalf("the denied dialog exited: %q", app.Stdout())
		}
	})

	t.Run("own button held is not the user", func(t *testing.T) {
		for _, kind := range []string{api.ActMouseDown, api.ActMouseUp} {
			if _, err := f.c.Act(t.Context(), api.ActRequest{Actions: []api.Action{{Kind: kind, At: api.Pt(5, 5)}}}); err != nil {
				t.Fatalf("%s = %v", kind, err)
			}
		}
	})

	t.Run("user active", func(t *testing.T) {
		// A second X client moves the pointer through XTEST, as a person's
		// device (or xdotool) would: input the server records as input.
		x, err := display.Open(t.Context(), f.d.Display, display.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		if err := xtest.FakeInputChecked(x.X, 6, 0, 0, x.Screen.Root, 13, 17, 0).Check(); err != nil {
			t.Fatal(err)
		}
		_, err = f.c.Act(t.Context(), api.ActRequest{Actions: []api.Action{{Kind: api.ActMove, At: api.Pt(10, 10)}}})
		var se *api.StatusError
		if !errors.As(err, &se) || se.Status != http.StatusConflict || se.Code != api.CodeUserActive || se.RetryAfterMs <= 0 {
			t.Fatalf("Act while the user moves the pointer = %v, want 409 user_active with retry_after_ms", err)
		}
		// Once the user has been still for the quiet period, acting resumes.
		deadline := time.Now().Add(20 * time.Second)
		for {
			time.Sleep(time.Duration(se.RetryAfterMs) * time.Millisecond)
			_, err = f.c.Act(t.Context(), api.ActRequest{Actions: []api.Action{{Kind: api.ActMove, At: api.Pt(10, 10)}}})
			if err == nil {
				break
			}
			if !errors.As(err, &se) || se.Code != api.CodeUserActive || time.Now().After(deadline) {
				t.Fatalf("Act after the user went still = %v", err)
			}
		}
	})

	t.Run("audit", func(t *testing.T) {
		list, err := f.reg.List(t.Context(), runs.ListFilter{Kind: actions.Kind, Limit: 10})
		if err != nil || len(list) != 1 {
			t.Fatalf("session runs = %v, %v; want one", list, err)
		}
		run := list[0]
		if !run.Live() || run.SessionKey != "test-client@"+f.d.Display {
			t.Errorf("session run %+v: want live, key test-client@%s", run, f.d.Display)
		}
		evs, err := f.reg.Events(t.Context(), 0, runs.Filter{RunID: run.ID, Streams: []string{actions.StreamAction}}, 100)
		if err != nil {
			t.Fatal(err)
		}
		var codes []string
		for _, ev := range evs {
			var a actions.AuditEvent
			if err := json.Unmarshal(ev.Data, &a); err != nil {
				t.Fatal(err)
			}
			if a.Client != "test-client" || a.Display != f.d.Display || len(a.Actions) != 1 {
				t.Errorf("audit event %s: want who, where and what", ev.Data)
			}
			codes = append(codes, a.Code)
		}
		if !slices.Contains(codes, api.CodeWindowDenied) || !slices.Contains(codes, api.CodeUserActive) || !slices.Contains(codes, "") {
			t.Errorf("audit codes = %q, want window_denied, user_active and a success", codes)
		}
	})
}

func TestActBadInput(t *testing.T) {
	f := newActFixture(t, actions.Policy{})
	f.d.Zenity(t, "--entry", "--title=Acu Input", "--text=Name:")
	tests := []struct {
		name, body, field string
	}{
		{"malformed JSON", `{"actions":[`, ""},
		{"unknown key", `{"actions":[{"kind":"click","colour":"red"}]}`, "colour"},
		{"unknown kind", `{"actions":[{"kind":"tap"}]}`, "actions[0].kind"},
		{"no actions", `{"actions":[]}`, "actions"},
		{"out of range", `{"actions":[{"kind":"click","at":{"x":1001,"y":5}}]}`, "actions[0].at"},
		{"outside the screenshot", `{"image":"960x540","actions":[{"kind":"click","at":{"x":960,"y":5}}]}`, "actions[0].at"},
		{"unknown shot", `{"actions":[{"kind":"click","at":{"x":5,"y":5,"shot":"shot_nope"}}]}`, "actions[0].at.shot"},
		{"unknown element", `{"actions":[{"kind":"click","at":{"element":"btn_okk"}}]}`, "actions[0].at.element"},
		{"unknown key name", `{"actions":[{"kind":"key","keys":"ctrl+nosuchkey"}]}`, "actions[0].keys"},
		{"untypeable text", `{"actions":[{"kind":"type","text":"a\u0001b"}]}`, "actions[0].text"},
		{"button", `{"actions":[{"kind":"click","button":"side"}]}`, "actions[0].button"},
		{"count", `{"actions":[{"kind":"click","count":4}]}`, "actions[0].count"},
		{"field of another kind", `{"actions":[{"kind":"move","at":{"x":1,"y":1},"text":"x"}]}`, "actions[0].text"},
		{"drag path", `{"actions":[{"kind":"drag","path":[{"x":1,"y":1}]}]}`, "actions[0].path"},
		{"wait", `{"actions":[{"kind":"wait","ms":600000}]}`, "actions[0].ms"},
		{"settle", `{"actions":[{"kind":"wait","ms":1}],"settle":{"quiet_ms":5}}`, "settle.quiet_ms"},
		{"screenshot", `{"actions":[{"kind":"wait","ms":1}],"screenshot":{"format":"gif"}}`, "screenshot.format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, f.url+"/v1/actions", strings.NewReader(tt.body))
			req.Header.Set("Authorization", "Bearer "+actToken)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var eb api.ErrorBody
			_ = json.NewDecoder(resp.Body).Decode(&eb)
			if resp.StatusCode != http.StatusBadRequest || eb.Error.Code != api.CodeInvalid || eb.Error.Field != tt.field {
				t.Errorf("POST %s = %d %+v, want 400 invalid naming %q", tt.body, resp.StatusCode, eb.Error, tt.field)
			}
			if tt.name == "unknown element" && !slices.Contains(eb.Error.Suggestions, "btn_ok") {
				t.Errorf("suggestions = %q, want btn_ok among them", eb.Error.Suggestions)
			}
		})
	}
}

func TestActPolicy(t *testing.T) {
	for _, tt := range []struct {
		name string
		pol  actions.Policy
		code string
	}{
		{"disabled", actions.Policy{Disabled: true}, api.CodeActDisabled},
		{"display not listed", actions.Policy{Displays: []string{":12345"}}, api.CodeDisplayDenied},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newActFixture(t, tt.pol)
			_, err := f.c.Act(t.Context(), api.ActRequest{Actions: []api.Action{{Kind: api.ActMove, At: api.Pt(1, 1)}}})
			var se *api.StatusError
			if !errors.As(err, &se) || se.Status != http.StatusForbidden || se.Code != tt.code {
				t.Errorf("Act = %v, want 403 %s", err, tt.code)
			}
		})
	}
}

// TestActPointerAndKeys: every pointer and key action over HTTP, recorded
// by a test window covering a window-relative area of the screen.
func TestActPointerAndKeys(t *testing.T) {
	f := newActFixture(t, actions.Policy{PauseOnUser: true})
	w := testx.NewWindow(t, f.d.Display, testx.Spec{Title: "Acu Recorder", X: 100, Y: 50, W: 401, H: 301})
	w.Focus()
	// Normalized 0..1000 of the window: (500,500) is its centre pixel.
	in := func(x, y int) *api.Point { return &api.Point{X: &x, Y: &y, Window: "Acu Recorder"} }
	resp, err := f.c.Act(t.Context(), api.ActRequest{Actions: []api.Action{
		{Kind: api.ActMove, At: in(0, 0)},
		{Kind: api.ActClick, At: in(500, 500), Button: "right", Count: 2},
		{Kind: api.ActMouseDown, At: in(100, 100)},
		{Kind: api.ActMouseUp, At: in(200, 100)},
		{Kind: api.ActDrag, Path: []api.Point{*in(0, 1000), *in(1000, 1000), *in(1000, 0)}, HoldMs: 20},
		{Kind: api.ActScroll, At: in(500, 0), DY: 2, DX: -1},
		{Kind: api.ActKey, Keys: "x", Repeat: 3, HoldMs: 5},
		{Kind: api.ActType, Text: "é!"},
	}})
	if err != nil || !resp.OK {
		t.Fatalf("Act = %+v, %v", resp, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := w.WaitFor(ctx, func([]testx.Event) bool { return w.Typed() == "xxxé!" }); err != nil {
		t.Fatalf("typed %q: %v", w.Typed(), err)
	}
	var got []string
	for _, e := range w.Events() {
		if e.Kind == testx.ButtonPress || e.Kind == testx.ButtonRelease {
			got = append(got, fmt.Sprintf("%v %d @%d,%d", e.Kind, e.Button, e.RootX, e.RootY))
		}
	}
	want := []string{
		"button_press 3 @300,200", "button_release 3 @300,200", "button_press 3 @300,200", "button_release 3 @300,200",
		"button_press 1 @140,80", "button_release 1 @180,80",
		"button_press 1 @100,350", "button_release 1 @500,50",
		"button_press 6 @300,50", "button_release 6 @300,50",
		"button_press 5 @300,50", "button_release 5 @300,50", "button_press 5 @300,50", "button_release 5 @300,50",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("button events (-want +got):\n%s", diff)
	}
}

func TestElementsLabels(t *testing.T) {
	f := newActFixture(t, actions.Policy{})
	f.d.Zenity(t, "--question", "--title=Acu Labels", "--text=Label me")
	m, err := f.c.Elements(t.Context(), api.ElementsQuery{Window: "Acu Labels", Labels: true, Shot: &api.ShotOptions{Format: "png"}})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Screenshot
	if s == nil || s.Format != "png" || s.ID == "" {
		t.Fatalf("labelled screenshot = %+v", s)
	}
	img, err := png.Decode(bytes.NewReader(s.Data))
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() != s.Region[2] {
		t.Fatalf("png %v of region %v: want full size", img.Bounds(), s.Region)
	}
	var btn *api.Element
	for i := range m.Elements {
		if m.Elements[i].Type == "button" {
			btn = &m.Elements[i]
		}
		if c := m.Elements[i].Center; c[0] < s.Region[0] || c[0] >= s.Region[0]+s.Region[2] {
			t.Errorf("element %s at %v is outside the window %v", m.Elements[i].ID, c, s.Region)
		}
	}
	if btn == nil {
		t.Fatalf("no button:\n%s", m.Text)
	}
	// The button's outline is drawn in the label colour, in the picture's
	// pixels (the picture is the window).
	x := btn.Box[0] - s.Region[0] + btn.Box[2]/2
	y := btn.Box[1] - s.Region[1] + btn.Box[3] - 1
	r, g, b, _ := img.At(x, y).RGBA()
	if r>>8 != 255 || g>>8 != 40 || b>>8 != 120 {
		t.Errorf("pixel %d,%d on %s's outline = %d,%d,%d, want the label colour 255,40,120", x, y, btn.ID, r>>8, g>>8, b>>8)
	}
	if !strings.Contains(m.Text, "["+btn.ID+"]") {
		t.Errorf("text lacks %s:\n%s", btn.ID, m.Text)
	}
}

// TestActRefusedWhileTakenOver: while a human holds the display in the
// live view (the _ACU_TAKEOVER hold), acting answers 409 user_active
// naming the take-over.
func TestActRefusedWhileTakenOver(t *testing.T) {
	f := newActFixture(t, actions.Policy{PauseOnUser: true})
	c, err := display.Open(t.Context(), f.d.Display, display.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	now := time.Now()
	if err := input.SetHold(t.Context(), c, input.Hold{By: "a browser (live view)", Since: now, Until: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	defer input.ClearHold(context.Background(), c)
	_, err = f.c.Act(t.Context(), api.ActRequest{Actions: []api.Action{{Kind: api.ActMove, At: api.Pt(500, 500)}}})
	var se *api.StatusError
	if !errors.As(err, &se) || se.Status != 409 || se.Code != api.CodeUserActive || !strings.Contains(se.Message, "taken over") {
		t.Fatalf("Act on a held display = %v, want 409 user_active naming the take-over", err)
	}
}
