package runs

import (
	"context"
	"slices"

	"github.com/acu-dev/acu/internal/store"
)

// Filter selects events. Zero fields do not filter.
type Filter struct {
	RunID   string
	Streams []string
}

func (f Filter) match(ev Event) bool {
	if f.RunID != "" && ev.RunID != f.RunID {
		return false
	}
	return len(f.Streams) == 0 || slices.Contains(f.Streams, ev.Stream)
}

// sub is one registration for live delivery. The registry drops it and
// closes lagged when q is full; the subscription's goroutine then catches up
// from the store and registers afresh.
type sub struct {
	f      Filter
	q      chan Event
	lagged chan struct{}
}

// publish hands ev to every matching subscriber without blocking. Callers
// hold wmu (so events are published in cursor order) and mu.
func (r *Registry) publish(ev Event) {
	for s := range r.subs {
		if !s.f.match(ev) {
			continue
		}
		select {
		case s.q <- ev:
		default:
			delete(r.subs, s)
			close(s.lagged)
		}
	}
}

// Subscription is a stream of events: first the persisted ones after the
// cursor it was opened with, then live ones, in cursor order, each exactly
// once.
type Subscription struct {
	c      chan Event
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// Events returns the stream. It is closed when the subscription ends: its
// context ended, Close was called, or the store failed (see Err).
func (s *Subscription) Events() <-chan Event { return s.c }

// Err returns why the subscription ended; valid once Events is closed.
func (s *Subscription) Err() error {
	<-s.done
	return s.err
}

// Close ends the subscription and waits for its goroutine to exit.
func (s *Subscription) Close() {
	s.cancel()
	<-s.done
}

const pageSize = 256

// Subscribe streams events matching f with a cursor greater than after;
// a negative after starts at the current end of the stream (live events
// only). A client that reconnects with the cursor of the last event it
// received (SSE's Last-Event-ID) gets exactly the events it missed. A slow
// consumer never blocks writers: when it falls more than the subscriber
// buffer behind, it continues from the store and loses nothing. The
// subscription runs until ctx ends or Close is called.
func (r *Registry) Subscribe(ctx context.Context, f Filter, after int64) (*Subscription, error) {
	if after < 0 {
		c, err := r.st.LastCursor(ctx)
		if err != nil {
			return nil, err
		}
		after = c
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &Subscription{c: make(chan Event), cancel: cancel, done: make(chan struct{})}
	r.m.subscribers.Inc()
	go r.pump(ctx, s, f, after)
	return s, nil
}

// pump owns s.c. Each round registers for live delivery first and only then
// reads the store, so every event is either in that read (committed before
// it) or published to the new registration after it; duplicates of the two
// are skipped by cursor, since both arrive in cursor order.
func (r *Registry) pump(ctx context.Context, s *Subscription, f Filter, cur int64) {
	defer func() {
		r.m.subscribers.Dec()
		close(s.c)
		close(s.done)
	}()
	send := func(ev Event) bool {
		select {
		case s.c <- ev:
			cur = ev.Cursor
			return true
		case <-ctx.Done():
			s.err = ctx.Err()
			return false
		}
	}
	for r.follow(ctx, s, f, &cur, send) {
		r.m.lagged.Inc()
	}
}

// follow registers for live delivery, catches up from the store, then
// follows live events. It returns true when the registration lagged and the
// caller should start again from the store.
func (r *Registry) follow(ctx context.Context, s *Subscription, f Filter, cur *int64, send func(Event) bool) (lagged bool) {
	reg := &sub{f: f, q: make(chan Event, r.subBuf), lagged: make(chan struct{})}
	r.mu.Lock()
	r.subs[reg] = struct{}{}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.subs, reg)
		r.mu.Unlock()
	}()
	r.ensurePublished(ctx)
	if !r.catchUp(ctx, s, f, cur, send) {
		return false
	}
	for {
		select {
		case ev := <-reg.q:
			if ev.Cursor > *cur && !send(ev) {
				return false
			}
		case <-reg.lagged:
			return true
		case <-ctx.Done():
			s.err = ctx.Err()
			return false
		}
	}
}

// catchUp sends the persisted events after *cur until the store has no more.
func (r *Registry) catchUp(ctx context.Context, s *Subscription, f Filter, cur *int64, send func(Event) bool) bool {
	for {
		sevs, err := r.st.EventsAfter(ctx, *cur, store.EventFilter{RunID: f.RunID, Streams: f.Streams, Limit: pageSize})
		if err != nil {
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			s.err = err
			return false
		}
		for _, sev := range sevs {
			if !send(Event(sev)) {
				return false
			}
		}
		if len(sevs) < pageSize {
			return true
		}
	}
}
