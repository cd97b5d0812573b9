package store

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
)

// FuzzEventRoundTrip stores events whose stream name and data come from
// outside (HTTP filters, engine output) and checks that what is read back,
// and what a stream filter selects, is exactly what was written.
func FuzzEventRoundTrip(f *testing.F) {
	for _, s := range []struct{ stream, data string }{
		{"verdict", `{"answer":"YES"}`},
		{"log", `"plain"`},
		{"x' OR 1=1 --", `{"evidence":"ünïcödé → ✓"}`},
		{"", `{}`},
		{"turn", `{`},
		{"a\x00b", `null`},
	} {
		f.Add(s.stream, s.data)
	}
	db := openAt(f, filepath.Join(f.TempDir(), "fuzz.db"), nil)
	mustCreate(f, db, Run{ID: "r", Kind: "wait", Status: "running"})
	f.Fuzz(func(t *testing.T, stream, data string) {
		ctx := t.Context()
		ev, err := db.AppendEvent(ctx, Event{RunID: "r", Stream: stream, Data: json.RawMessage(data)})
		valid := stream != "" && (data == "" || json.Valid([]byte(data)))
		if !valid {
			if err == nil {
				t.Fatalf("AppendEvent(stream %q, data %q) = nil error, want one", stream, data)
			}
			return
		}
		if err != nil {
			t.Fatalf("AppendEvent(stream %q, data %q) = %v", stream, data, err)
		}
		got, err := db.EventsAfter(ctx, ev.Cursor-1, EventFilter{RunID: "r", Streams: []string{stream}, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Cursor != ev.Cursor || got[0].Stream != stream || !bytes.Equal(got[0].Data, []byte(data)) {
			t.Fatalf("read back %+v, want stream %q data %q cursor %d", got, stream, data, ev.Cursor)
		}
	})
}
