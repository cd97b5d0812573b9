package server

import (
	"bufio"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"testing"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/runs"
)

// A subscriber that gives no cursor starts at "now": it gets the hello, then
// only what happens after it, never the stored history. from=start replays
// it; a cursor resumes after it.
func TestEventsStartAtNowWithoutCursor(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	old, err := f.reg.Start(ctx, runs.StartOptions{Kind: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		f.reg.Emit(ctx, old.ID, "turn", map[string]int{"i": i})
	}
	open := func(query string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/v1/events"+query, nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		if resp.StatusCode != 200 {
			t.Fatalf("GET /v1/events%s = %d", query, resp.StatusCode)
		}
		return resp
	}

	// No cursor: read the hello first (the subscription exists by then),
	// then emit; the first event is the new one.
	resp := open("")
	br := bufio.NewReader(resp.Body)
	var hello struct{ Cursor int64 }
	err = api.ReadSSE(br, func(id, event string, data []byte) error {
		if event != "hello" {
			t.Fatalf("first SSE event = %q %s, want hello", event, data)
		}
		if err := json.Unmarshal(data, &hello); err != nil {
			return err
		}
		return errDone
	})
	if !errors.Is(err, errDone) {
		t.Fatalf("read hello: %v", err)
	}
	ev, err := f.reg.Emit(ctx, old.ID, "turn", map[string]string{"new": "yes"})
	if err != nil {
		t.Fatal(err)
	}
	got := readEvents(t, br, 1)
	if got[0].Cursor != ev.Cursor || got[0].Cursor <= hello.Cursor {
		t.Errorf("first event after connecting without a cursor = %d %s, want the new one %d (hello cursor %d)",
			got[0].Cursor, got[0].Data, ev.Cursor, hello.Cursor)
	}

	// from=start replays every stored event: the run's start first.
	all := readEvents(t, open("?from=start").Body, 7)
	if all[0].RunID != old.ID || all[0].Seq != 1 || all[6].Cursor != ev.Cursor {
		t.Errorf("from=start = %d..%d, want the whole history", all[0].Cursor, all[6].Cursor)
	}
	// after=N resumes after N.
	rest := readEvents(t, open("?after="+strconv.FormatInt(all[4].Cursor, 10)).Body, 2)
	if rest[0].Cursor != all[5].Cursor {
		t.Errorf("after=%d starts at %d, want %d", all[4].Cursor, rest[0].Cursor, all[5].Cursor)
	}
	// A bad from, or from with a cursor, is a 400 naming from.
	for _, q := range []string{"?from=yesterday", "?from=start&after=3"} {
		r, body := f.do("GET", "/v1/events"+q, "", map[string]string{"Accept": "text/event-stream"})
		if e := errorOf(t, body); r.StatusCode != 400 || e.Field != "from" {
			t.Errorf("GET /v1/events%s = %d %+v, want 400 for from", q, r.StatusCode, e)
		}
	}
}
