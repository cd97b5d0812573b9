package server

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/smartwait"
)

// Texts that end up in a notification (criteria, wake_when, cancel reasons)
// are refused with a 400 naming the field when they hold NUL or another
// control character, or are too long: exec could never deliver them.
func TestTextFieldsRejected(t *testing.T) {
	f := newFixtureWith(t, func(o *Options, reg *runs.Registry) {
		o.MaxBody = 1 << 20
		o.Waits = smartwait.New(smartwait.Options{Runs: reg})
	})
	long := strings.Repeat("x", 4001)
	for _, tc := range []struct {
		name, method, path, body, field, inMsg string
	}{
		{"NUL in criteria", "POST", "/v1/waits", `{"criteria":"done\u0000rm -rf"}`, "criteria", "control characters"},
		{"escape in criteria", "POST", "/v1/waits", `{"criteria":"done\u001b[2J"}`, "criteria", "control characters"},
		{"DEL in criteria", "POST", "/v1/waits", `{"criteria":"done\u007f"}`, "criteria", "control characters"},
		{"NUL in wake_when", "POST", "/v1/waits", `{"wake_when":"done\u0000"}`, "wake_when", "control characters"},
		{"long criteria", "POST", "/v1/waits", `{"criteria":"` + long + `"}`, "criteria", "at most 4000 bytes"},
		{"NUL in update", "PATCH", "/v1/waits/wait_x", `{"criteria":"a\u0000"}`, "criteria", "control characters"},
		{"NUL in wait cancel reason", "DELETE", "/v1/waits/wait_x?reason=" + url.QueryEscape("a\x00b"), "", "reason", "control characters"},
		{"long wait cancel reason", "DELETE", "/v1/waits/wait_x?reason=" + long, "", "reason", "at most 4000 bytes"},
		{"NUL in run cancel reason", "POST", "/v1/runs/run_x/cancel", `{"reason":"a\u0000"}`, "reason", "control characters"},
		{"long run cancel reason", "POST", "/v1/runs/run_x/cancel", `{"reason":"` + strings.Repeat("y", 200<<10) + `"}`, "reason", "at most 4000 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := f.do(tc.method, tc.path, tc.body, nil)
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("%s %s = %d %s, want 400", tc.method, tc.path, resp.StatusCode, body)
			}
			e := errorOf(t, body)
			if e.Code != api.CodeInvalid || e.Field != tc.field || !strings.Contains(e.Message, tc.inMsg) {
				t.Errorf("error = %+v, want field %q and a message containing %q", e, tc.field, tc.inMsg)
			}
		})
	}
}

// GET /v1/waits pages like /v1/runs: limit and before, a total on every
// page, and truncated/next whenever more follow; nothing is left out
// silently.
func TestListWaitsPages(t *testing.T) {
	var reg *runs.Registry
	f := newFixtureWith(t, func(o *Options, r *runs.Registry) {
		reg = r
		o.Waits = smartwait.New(smartwait.Options{Runs: r})
	})
	ctx := t.Context()
	const n = 7
	for i := range n {
		if _, err := reg.Start(ctx, runs.StartOptions{Kind: smartwait.KindWait,
			Spec: map[string]any{"criteria": "c" + strconv.Itoa(i), "target": "screen"}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := reg.Start(ctx, runs.StartOptions{Kind: "agent"}); err != nil { // not a wait: not counted
		t.Fatal(err)
	}
	cl := api.NewClient(f.srv.URL, testToken)
	seen := map[string]bool{}
	q := api.WaitQuery{Limit: 3}
	for pages := 1; ; pages++ {
		l, err := cl.ListWaits(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if l.Total != n {
			t.Errorf("page %d: total = %d, want %d", pages, l.Total, n)
		}
		for _, w := range l.Waits {
			if seen[w.ID] {
				t.Errorf("wait %s listed twice", w.ID)
			}
			seen[w.ID] = true
		}
		if l.Truncated != (l.Next != "") || (l.Truncated && len(l.Waits) != 3) {
			t.Errorf("page %d = %d waits, truncated %v, next %q", pages, len(l.Waits), l.Truncated, l.Next)
		}
		if !l.Truncated {
			if pages != 3 {
				t.Errorf("pages = %d, want 3 for %d waits by 3", pages, n)
			}
			break
		}
		q.Before = l.Next
	}
	if len(seen) != n {
		t.Errorf("listed %d distinct waits, want %d", len(seen), n)
	}
	// The default page holds them all and says it is complete.
	if l, err := cl.ListWaits(ctx, api.WaitQuery{}); err != nil || len(l.Waits) != n || l.Truncated || l.Total != n {
		t.Errorf("default page = %d waits of %d, truncated %v, %v", len(l.Waits), l.Total, l.Truncated, err)
	}
	for _, tc := range []struct{ query, field string }{
		{"?before=wait_nope", "before"},
		{"?limit=0", "limit"},
		{"?limit=1001", "limit"},
	} {
		resp, body := f.do("GET", "/v1/waits"+tc.query, "", nil)
		if e := errorOf(t, body); resp.StatusCode != 400 || e.Field != tc.field {
			t.Errorf("GET /v1/waits%s = %d %+v, want 400 for %s", tc.query, resp.StatusCode, e, tc.field)
		}
	}
}
