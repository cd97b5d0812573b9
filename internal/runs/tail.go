package runs

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/acu-dev/acu/internal/store"
)

// Events other processes write to the same database reach this process's
// subscribers and waiters through the store: the registry keeps the cursor
// up to which it has published (published), and
//
//   - before publishing an event it wrote itself, it first publishes from
//     the store every event between published and that event's cursor (a
//     gap means another process committed in between);
//   - Tail reads the store every interval and publishes what is new.
//
// The store assigns cursors inside the write transaction, and SQLite runs one
// write transaction at a time, so cursor order is commit order: an event
// read at cursor c means every event before c is committed and readable,
// and publishing in cursor order from the store loses nothing.

// unknownCursor is published before the registry has written or read
// anything: the first local event then starts the sequence without a gap
// check, as a single-process registry always did.
const unknownCursor = -1

// fillLocked publishes, from the store, the events between published and
// upTo (exclusive) that this registry has not published: other processes'
// events. upTo <= 0 reads everything new. Callers hold wmu.
func (r *Registry) fillLocked(ctx context.Context, upTo int64) {
	if r.published == unknownCursor {
		if upTo > 0 {
			return // the local event sets the start
		}
		c, err := r.st.LastCursor(ctx)
		if err != nil {
			r.log.LogAttrs(ctx, slog.LevelWarn, "read the event cursor", slog.Any(keyError, err))
			return
		}
		r.published = c
		return
	}
	for upTo <= 0 || r.published < upTo-1 {
		evs, err := r.st.EventsAfter(ctx, r.published, store.EventFilter{Limit: 1000})
		if err != nil {
			if ctx.Err() == nil {
				r.log.LogAttrs(ctx, slog.LevelWarn, "read other processes' events", slog.Any(keyError, err))
			}
			return
		}
		n := 0
		for _, sev := range evs {
			if upTo > 0 && sev.Cursor >= upTo {
				break
			}
			r.publishForeign(ctx, Event(sev))
			r.published = sev.Cursor
			n++
		}
		if n == 0 || len(evs) < 1000 {
			return
		}
	}
}

// ensurePublished starts the published cursor, when nothing has set it
// yet, at the store's last cursor: called once a subscriber or waiter is
// registered and before it reads the store, so every event committed after
// that read is published to it (by this process or by Tail), whoever wrote
// it.
func (r *Registry) ensurePublished(ctx context.Context) {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	if r.published == unknownCursor {
		r.fillLocked(ctx, 0)
	}
}

// publishLocalLocked publishes an event this registry just committed (and
// anything other processes committed before it). Callers hold wmu, not mu.
func (r *Registry) publishLocalLocked(ctx context.Context, ev Event, extra func()) {
	if r.published != unknownCursor && ev.Cursor > r.published+1 {
		r.fillLocked(ctx, ev.Cursor)
	}
	r.mu.Lock()
	r.publish(ev)
	if extra != nil {
		extra()
	}
	r.mu.Unlock()
	if ev.Cursor > r.published {
		r.published = ev.Cursor
	}
}

// publishForeign publishes an event another process (or a direct store
// write) committed. A lifecycle end or error also ends the run here: it
// leaves the live set, and its waiters wake with the run as stored.
func (r *Registry) publishForeign(ctx context.Context, ev Event) {
	var final bool
	if ev.Stream == StreamLifecycle {
		var lc Lifecycle
		if json.Unmarshal(ev.Data, &lc) == nil && (lc.Phase == PhaseEnd || lc.Phase == PhaseError) {
			final = true
		}
	}
	var ended Run
	if final {
		sr, err := r.st.GetRun(ctx, ev.RunID)
		if err != nil {
			r.log.LogAttrs(ctx, slog.LevelWarn, "read a run another process ended", slog.String(keyRunID, ev.RunID), slog.Any(keyError, err))
			final = false
		} else {
			ended = Run(sr)
		}
	}
	r.mu.Lock()
	r.publish(ev)
	if final {
		if _, mine := r.live[ev.RunID]; mine {
			delete(r.live, ev.RunID)
			r.log.LogAttrs(ctx, slog.LevelInfo, "run ended by another process", slog.String(keyRunID, ev.RunID), slog.String(keyStatus, ended.Status))
			if r.onElse != nil {
				defer r.onElse(ended) // after mu is released
			}
		}
		if w := r.waiters[ev.RunID]; w != nil {
			w.run = ended
			close(w.done)
			delete(r.waiters, ev.RunID)
		}
	}
	r.mu.Unlock()
}

// DefaultTailInterval is how often Tail reads the store for other
// processes' events.
const DefaultTailInterval = 100 * time.Millisecond

// Tail delivers events other processes write to the database (and events
// written straight to the store, such as dead letters) to this registry's
// subscribers and waiters, reading the store every interval
// (DefaultTailInterval when <= 0), until ctx ends. Run it once per process
// that serves subscribers; a registry without Tail sees only its own
// events, and those of other processes only when one of its own follows
// them.
func (r *Registry) Tail(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultTailInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		r.TailOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.wake:
		}
	}
}

// WakeTail makes Tail read the store now (a database notification said
// events were committed). It never blocks.
func (r *Registry) WakeTail() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// TailOnce publishes what other processes committed since the last read.
// Tail calls it on every tick; a caller with its own wake-up (a database
// notification) calls it directly.
func (r *Registry) TailOnce(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	r.wmu.Lock()
	defer r.wmu.Unlock()
	r.fillLocked(ctx, 0)
}
