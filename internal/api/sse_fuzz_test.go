package api

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type sseEvent struct{ ID, Event, Data string }

// FuzzReadSSE feeds ReadSSE two streams. Any bytes at all must not make
// it panic, and it must return an error (the callback's, the scanner's or
// io.ErrUnexpectedEOF: an event stream never ends on its own). A stream
// written the way the daemon writes one (retry, event, id and one data
// line per line of the payload, comments as heartbeats) must read back
// event for event. The seeds are the daemon's own events.
// Run it longer with: go test -run '^$' -fuzz FuzzReadSSE -fuzztime 10m ./internal/api/
func FuzzReadSSE(f *testing.F) {
	f.Add([]byte("retry: 2000\nevent: hello\ndata: {\"epoch\":\"e1\",\"cursor\":0}\n\n: ping\n\nid: 7\ndata: {\"cursor\":7}\n\n"), "7", "", `{"cursor":7}`)
	f.Add([]byte("event: frame\nid: 3\ndata: AAAA\n\n"), "3", "frame", "AAAA")
	f.Add([]byte("data: a\ndata:\ndata:  b\r\n\r\nid\ndata\n\n"), "", "message", "a\n\n b")
	f.Add([]byte("id: 1\ndata: x"), "", "", "")
	f.Fuzz(func(t *testing.T, raw []byte, id, event, data string) {
		stop := errors.New("stop")
		n := 0
		err := ReadSSE(bytes.NewReader(raw), func(id, event string, data []byte) error {
			n++
			if n == 3 {
				return stop
			}
			return nil
		})
		if err == nil {
			t.Fatalf("ReadSSE(%q) = nil, want an error", raw)
		}
		if n == 3 && !errors.Is(err, stop) {
			t.Fatalf("ReadSSE(%q) = %v after the callback returned %v", raw, err, stop)
		}

		// The round trip: fields hold no line breaks, as the daemon's never do.
		clean := func(s string) string { return strings.NewReplacer("\r", "", "\n", "").Replace(s) }
		id, event, data = clean(id), clean(event), strings.ReplaceAll(data, "\r", "")
		want := []sseEvent{{"", "hello", "{}"}, {id, event, data}, {id, "", "tail"}}
		var w strings.Builder
		w.WriteString("retry: 2000\nevent: hello\ndata: {}\n\n: ping\n\n")
		if event != "" {
			w.WriteString("event: " + event + "\n")
		}
		w.WriteString("id: " + id + "\n")
		for _, line := range strings.Split(data, "\n") {
			w.WriteString("data: " + line + "\n")
		}
		w.WriteString("\n: ping\n\ndata: tail\n\n")
		var got []sseEvent
		err = ReadSSE(strings.NewReader(w.String()), func(id, event string, data []byte) error {
			got = append(got, sseEvent{id, event, string(data)})
			return nil
		})
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("ReadSSE(%q) = %v, want io.ErrUnexpectedEOF at the end", w.String(), err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ReadSSE(%q) events (-want +got):\n%s", w.String(), diff)
		}
	})
}
