package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/runs"
)

// heartbeat keeps idle SSE connections (and the proxies between) alive.
const heartbeat = 15 * time.Second

// handleEvents serves GET /v1/events. With Accept: text/event-stream it is a
// Server-Sent Events stream: a "hello" event with the daemon's epoch and
// current cursor, then every matching event (id = global cursor) after the
// cursor given by Last-Event-ID or ?after=, or from the first stored event
// with ?from=start, else from now (no replay: a subscriber without a cursor
// must not make the daemon read its whole history), with heartbeats.
// Otherwise it is the JSON catch-up path: the events after ?after= (0 when
// absent), the epoch and the cursor.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) error {
	c, err := eventsCursor(r)
	if err != nil {
		return err
	}
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		return s.listEvents(w, r, eventFilter(r), c.after)
	}
	return s.streamEvents(w, r, eventFilter(r), c)
}

// cursor is where an event listing or stream starts: after a cursor
// (given: after or Last-Event-ID), from the start, or else from now.
type cursor struct {
	after            int64
	given, fromStart bool
}

func eventsCursor(r *http.Request) (cursor, error) {
	var c cursor
	q := r.URL.Query()
	if v := q.Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return c, errInvalid("after", "after must be a cursor (a whole number from 0), got %q", v)
		}
		c.after, c.given = n, true
	}
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return c, errInvalid("Last-Event-ID", "Last-Event-ID must be a cursor, got %q", v)
		}
		c.after, c.given = n, true
	}
	switch v := q.Get("from"); v {
	case "", "now":
	case "start":
		c.fromStart = true
	default:
		return c, errInvalid("from", "from must be start or now, got %q", v)
	}
	if c.fromStart && c.given {
		return c, errInvalid("from", "give a cursor (after, Last-Event-ID) or from=start, not both")
	}
	return c, nil
}

// listEvents answers GET /v1/events without SSE: a page of events after
// the cursor.
func (s *Server) listEvents(w http.ResponseWriter, r *http.Request, f runs.Filter, after int64) error {
	limit, err := intParam(r.URL.Query().Get("limit"), "limit", 1000, 1, 10000)
	if err != nil {
		return err
	}
	evs, err := s.opts.Runs.Events(r.Context(), after, f, limit)
	if err != nil {
		return err
	}
	cur, err := s.opts.Runs.LastCursor(r.Context())
	if err != nil {
		return err
	}
	out := api.EventList{Events: make([]api.Event, 0, len(evs)), Epoch: s.opts.Epoch, Cursor: cur}
	for _, e := range evs {
		out.Events = append(out.Events, toAPIEvent(e))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// streamEvents answers GET /v1/events as Server-Sent Events: a hello with
// the epoch and the newest cursor, then every event after c, with
// heartbeats, until the client leaves.
func (s *Server) streamEvents(w http.ResponseWriter, r *http.Request, f runs.Filter, c cursor) error {
	cur, err := s.opts.Runs.LastCursor(r.Context())
	if err != nil {
		return err
	}
	if !c.given && !c.fromStart {
		c.after = cur // from now: what happens after the hello
	}
	sub, err := s.opts.Runs.Subscribe(r.Context(), f, c.after)
	if err != nil {
		return err
	}
	defer sub.Close()

	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	hello, _ := json.Marshal(map[string]any{"epoch": s.opts.Epoch, "cursor": cur})
	if _, err := fmt.Fprintf(w, "retry: 2000\nevent: hello\ndata: %s\n\n", hello); err != nil {
		return nil
	}
	if err := rc.Flush(); err != nil {
		return nil
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return nil
		case <-tick.C:
			_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
				return nil
			}
			if rc.Flush() != nil {
				return nil
			}
		case ev, ok := <-sub.Events():
			if !ok {
				if err := sub.Err(); err != nil {
					s.log.Warn("event stream ended", "err", err)
				}
				return nil
			}
			b, err := json.Marshal(toAPIEvent(ev))
			if err != nil {
				return nil
			}
			_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if _, err := fmt.Fprintf(w, "id: %d\ndata: %s\n\n", ev.Cursor, b); err != nil {
				return nil
			}
			if rc.Flush() != nil {
				return nil
			}
		}
	}
}
