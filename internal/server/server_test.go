package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/store"
)

const testToken = "test-token-0123456789"

type fixture struct {
	t    *testing.T
	reg  *runs.Registry
	srv  *httptest.Server
	host string
}

func newFixture(t *testing.T, adjust ...func(*Options)) *fixture {
	t.Helper()
	return newFixtureWith(t, func(o *Options, _ *runs.Registry) {
		for _, a := range adjust {
			a(o)
		}
	})
}

// newFixtureWith is newFixture with the server's options adjusted by modify
// (given the registry) before the server starts.
func newFixtureWith(t *testing.T, modify func(*Options, *runs.Registry)) *fixture {
	t.Helper()
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "acu.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reg := runs.New(db, runs.Options{Epoch: "epoch-1"})
	o := Options{Token: testToken, TokenHint: "/tmp/token", MaxBody: 4096, Version: "test", Epoch: "epoch-1", Runs: reg}
	if modify != nil {
		modify(&o, reg)
	}
	s := New(o)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &fixture{t: t, reg: reg, srv: srv, host: strings.TrimPrefix(srv.URL, "http://")}
}

func (f *fixture) do(method, path string, body string, hdr map[string]string) (*http.Response, []byte) {
	f.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(f.t.Context(), method, f.srv.URL+path, r)
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func errorOf(t *testing.T, b []byte) api.ErrorDetail {
	t.Helper()
	var eb api.ErrorBody
	if err := json.Unmarshal(b, &eb); err != nil || eb.Error.Code == "" {
		t.Fatalf("body %q is not a JSON error", b)
	}
	return eb.Error
}

func TestSecurity(t *testing.T) {
	f := newFixture(t)
	big := `{"criteria":"` + strings.Repeat("x", 5000) + `"}`
	tests := []struct {
		name       string
		method     string
		path       string
		body       string
		hdr        map[string]string
		wantStatus int
		wantCode   string
		wantInMsg  string
	}{
		{"health needs no token", "GET", "/health", "", map[string]string{"Authorization": ""}, 200, "", ""},
		{"missing token", "GET", "/v1/runs", "", map[string]string{"Authorization": ""}, 401, api.CodeUnauthorized, "token"},
		{"wrong token", "GET", "/v1/runs", "", map[string]string{"Authorization": "Bearer nope"}, 401, api.CodeUnauthorized, "token"},
		{"metrics need the token", "GET", "/metrics", "", map[string]string{"Authorization": ""}, 401, api.CodeUnauthorized, ""},
		{"foreign host", "GET", "/v1/runs", "", map[string]string{"Host": "evil.example:18790"}, 403, api.CodeForbidden, "Host"},
		{"foreign host even for health", "GET", "/health", "", map[string]string{"Host": "attacker.test"}, 403, api.CodeForbidden, "Host"},
		{"localhost host is fine", "GET", "/v1/runs", "", map[string]string{"Host": "localhost:18790"}, 200, "", ""},
		{"cross-origin post", "POST", "/v1/waits", `{"criteria":"x"}`, map[string]string{"Origin": "https://evil.example"}, 403, api.CodeForbidden, "cross-origin"},
		{"cross-site fetch", "POST", "/v1/runs/x/cancel", "", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, api.CodeForbidden, "cross-site"},
		{"foreign referer", "GET", "/v1/runs", "", map[string]string{"Referer": "https://evil.example/page"}, 403, api.CodeForbidden, ""},
		{"oversized body", "POST", "/v1/runs/x/cancel", big, nil, 413, api.CodeTooLarge, "4096"},
		{"malformed json", "POST", "/v1/runs/x/cancel", `{"reason": }`, map[string]string{"Content-Type": "application/json"}, 400, api.CodeInvalid, "malformed JSON"},
		{"wrong type names the field", "POST", "/v1/runs/x/cancel", `{"reason": 12}`, nil, 400, api.CodeInvalid, `"reason"`},
		{"unknown field named", "POST", "/v1/runs/x/cancel", `{"reason":"a","why":1}`, nil, 400, api.CodeInvalid, `"why"`},
		{"trailing data", "POST", "/v1/runs/x/cancel", `{"reason":"a"} {}`, nil, 400, api.CodeInvalid, "after the JSON"},
		{"unknown route is JSON 404", "GET", "/v1/nope", "", nil, 404, api.CodeNotFound, "no route"},
		{"unknown run", "GET", "/v1/runs/run_missing", "", nil, 404, api.CodeNotFound, "run_missing"},
		{"page after an unknown run", "GET", "/v1/runs?before=run_missing", "", nil, 400, api.CodeInvalid, "run_missing"},
		{"waits without engine", "GET", "/v1/waits", "", nil, 503, api.CodeUnavailable, "wait engine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.do(tt.method, tt.path, tt.body, tt.hdr)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("%s %s = %d %s, want %d", tt.method, tt.path, resp.StatusCode, body, tt.wantStatus)
			}
			if resp.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("answer carries CORS header %q", resp.Header.Get("Access-Control-Allow-Origin"))
			}
			if tt.wantCode == "" {
				return
			}
			e := errorOf(t, body)
			if e.Code != tt.wantCode || !strings.Contains(e.Message, tt.wantInMsg) {
				t.Errorf("error = %+v, want code %s and a message containing %q", e, tt.wantCode, tt.wantInMsg)
			}
			if strings.Contains(string(body), testToken) {
				t.Errorf("error body leaks the token")
			}
		})
	}
}

func TestSameOriginPageIsAllowed(t *testing.T) {
	f := newFixture(t)
	resp, body := f.do("GET", "/v1/runs", "", map[string]string{"Origin": f.srv.URL, "Sec-Fetch-Site": "same-origin"})
	if resp.StatusCode != 200 {
		t.Fatalf("same-origin GET = %d %s", resp.StatusCode, body)
	}
}

func TestRunsAPI(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	run, err := f.reg.Start(ctx, runs.StartOptions{Kind: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	// Wait's own timeout fires as 504 wait_timeout while the run is live.
	resp, body := f.do("POST", "/v1/runs/"+run.ID+"/wait?timeout=0.2", "", nil)
	if resp.StatusCode != http.StatusGatewayTimeout || errorOf(t, body).Code != api.CodeWaitTimeout {
		t.Fatalf("wait on live run = %d %s, want 504 wait_timeout", resp.StatusCode, body)
	}
	// A blocked wait resolves on the end, not before progress events.
	got := make(chan api.WaitResult, 1)
	go func() {
		cl := api.NewClient(f.srv.URL, testToken)
		res, err := cl.WaitRun(context.Background(), run.ID, 10*time.Second)
		if err != nil {
			t.Error(err)
		}
		got <- res
	}()
	for i := range 5 {
		if _, err := f.reg.Emit(ctx, run.ID, "turn", map[string]int{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case r := <-got:
		t.Fatalf("wait returned %+v before the run ended", r)
	case <-time.After(200 * time.Millisecond):
	}
	resp, body = f.do("POST", "/v1/runs/"+run.ID+"/cancel", `{"reason":"test"}`, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("cancel = %d %s", resp.StatusCode, body)
	}
	r := <-got
	if r.Status != runs.StatusCancelled || r.EndedAt == nil {
		t.Errorf("wait result = %+v, want cancelled with endedAt", r)
	}
	// Cancel again: conflict.
	resp, body = f.do("POST", "/v1/runs/"+run.ID+"/cancel", "", nil)
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("second cancel = %d %s, want 409", resp.StatusCode, body)
	}
	// Paging lists newest first with a next cursor.
	for range 3 {
		if _, err := f.reg.Start(ctx, runs.StartOptions{Kind: "task"}); err != nil {
			t.Fatal(err)
		}
	}
	cl := api.NewClient(f.srv.URL, testToken)
	p1, err := cl.Runs(ctx, api.RunQuery{Limit: 2})
	if err != nil || len(p1.Runs) != 2 || p1.Next == "" {
		t.Fatalf("page 1 = %+v, %v", p1, err)
	}
	p2, err := cl.Runs(ctx, api.RunQuery{Limit: 2, Before: p1.Next})
	if err != nil || len(p2.Runs) != 2 || p2.Next != "" {
		t.Fatalf("page 2 = %+v, %v", p2, err)
	}
	if p2.Runs[1].ID != run.ID {
		t.Errorf("oldest run = %s, want %s", p2.Runs[1].ID, run.ID)
	}
}

// readEvents reads n data events from an SSE body.
func readEvents(t *testing.T, body io.Reader, n int) []api.Event {
	t.Helper()
	var out []api.Event
	err := api.ReadSSE(bufio.NewReader(body), func(id, event string, data []byte) error {
		if event != "" {
			return nil
		}
		var e api.Event
		if err := json.Unmarshal(data, &e); err != nil {
			return err
		}
		if strconv.FormatInt(e.Cursor, 10) != id {
			t.Errorf("SSE id %s != cursor %d", id, e.Cursor)
		}
		out = append(out, e)
		if len(out) == n {
			return errDone
		}
		return nil
	})
	if !errors.Is(err, errDone) {
		t.Fatalf("read %d of %d events: %v", len(out), n, err)
	}
	return out
}

var errDone = errors.New("done")

func TestEventsResumeWithLastEventID(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	run, err := f.reg.Start(ctx, runs.StartOptions{Kind: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		f.reg.Emit(ctx, run.ID, "turn", map[string]int{"i": i})
	}
	// First connection replays from the start (from=start), reads the first
	// 3 events (start + 2 turns) and drops.
	req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/v1/events?from=start&run="+run.ID, nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	first := readEvents(t, resp.Body, 3)
	resp.Body.Close()
	// Meanwhile more happens.
	for i := 3; i < 6; i++ {
		f.reg.Emit(ctx, run.ID, "turn", map[string]int{"i": i})
	}
	f.reg.End(ctx, run.ID, runs.StatusCompleted, "", nil)
	f.reg.Emit(ctx, run.ID, "turn", map[string]int{"i": 99}) // late: dropped
	// Resume from the last id seen: exactly the missed events, in order.
	req2, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/v1/events?run="+run.ID, nil)
	req2.Header.Set("Authorization", "Bearer "+testToken)
	req2.Header.Set("Accept", "text/event-stream")
	req2.Header.Set("Last-Event-ID", strconv.FormatInt(first[2].Cursor, 10))
	resp2, err := http.DefaultClient.Do(req2)
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	rest := readEvents(t, resp2.Body, 5) // turns 2..5 and the lifecycle end
	all := append(first, rest...)
	for i, e := range all {
		if e.Seq != int64(i+1) {
			t.Errorf("event %d has seq %d, want %d (no gap, no duplicate)", i, e.Seq, i+1)
		}
	}
	last := all[len(all)-1]
	var lc api.Lifecycle
	json.Unmarshal(last.Data, &lc)
	if last.Stream != "lifecycle" || lc.Phase != "end" {
		t.Errorf("last event = %s %s, want the lifecycle end", last.Stream, last.Data)
	}
	// The JSON catch-up path returns the same, with the epoch.
	cl := api.NewClient(f.srv.URL, testToken)
	l, err := cl.EventsAfter(ctx, api.EventQuery{RunID: run.ID, After: first[2].Cursor})
	if err != nil || len(l.Events) != 5 || l.Epoch != "epoch-1" {
		t.Fatalf("catch-up = %d events epoch %q, %v", len(l.Events), l.Epoch, err)
	}
	if f.reg.Dropped() != 1 {
		t.Errorf("Dropped() = %d, want 1", f.reg.Dropped())
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{"criteria":"x","timeout":30}`, `{"criteria":1}`, `{`, `[]`, `null`, `{"timeout":"x"}`,
		`{"criteria":"a"}{"criteria":"b"}`, "\x00", `{"wake_when":"done","poll_interval":1e400}`, `{"criteria":"\ud800"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest("POST", "/v1/waits", bytes.NewReader(body))
		req.Body = http.MaxBytesReader(httptest.NewRecorder(), req.Body, 1024)
		var cw api.CreateWait
		err := decodeJSON(req, &cw)
		if err == nil {
			return
		}
		var he *httpError
		if !errors.As(err, &he) {
			t.Fatalf("decodeJSON(%q) = %v, want a client error", body, err)
		}
		if he.status != 400 && he.status != 413 {
			t.Fatalf("decodeJSON(%q) status %d", body, he.status)
		}
		if he.detail.Message == "" {
			t.Fatalf("decodeJSON(%q) has no message", body)
		}
	})
}
