package portal

import (
	"context"
	"fmt"
	"sync"
	"time"
)

const (
	idleMonitorName = "org.gnome.Mutter.IdleMonitor"
	idleMonitorPath = "/org/gnome/Mutter/IdleMonitor/Core"
	idleMonitor     = "org.gnome.Mutter.IdleMonitor"
)

// lastInput asks mutter's idle monitor (org.gnome.Mutter.IdleMonitor,
// GetIdletime: milliseconds since the last input event mutter handled,
// from any device, acu's remote-desktop devices included) when that
// event was, on acu's clock: within (lo, hi], as mutter counts whole
// milliseconds and answered between the call's send and its reply. A
// reading that can be of the same event as the one before narrows the
// interval to what both allow: readings at other fractions of a
// millisecond pin the event down to about the call's round trip.
func (s *Session) lastInput(ctx context.Context) (lo, hi time.Time, err error) {
	send := time.Now()
	var ms uint64
	if err := s.conn.Object(idleMonitorName, idleMonitorPath).CallWithContext(ctx, idleMonitor+".GetIdletime", 0).Store(&ms); err != nil {
		return time.Time{}, time.Time{}, fmt.Errorf("mutter idle monitor: GetIdletime: %w", err)
	}
	recv := time.Now()
	d := time.Duration(ms) * time.Millisecond
	lo, hi = send.Add(-d-time.Millisecond), recv.Add(-d)
	s.imu.Lock()
	defer s.imu.Unlock()
	if !s.evHi.IsZero() && lo.Before(s.evHi) && s.evLo.Before(hi) {
		lo, hi = later(lo, s.evLo), earlier(hi, s.evHi)
	}
	s.evLo, s.evHi = lo, hi
	return lo, hi, nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// pinned: readings narrow the last event down to this before the watch
// classifies it (at most pinReadings of them).
const (
	pinned      = 400 * time.Microsecond
	pinReadings = 6
)

// pin reads until the last event's interval is at most pinned wide.
func (s *Session) pin(ctx context.Context) (lo, hi time.Time, err error) {
	for range pinReadings {
		if lo, hi, err = s.lastInput(ctx); err != nil || hi.Sub(lo) <= pinned {
			return lo, hi, err
		}
	}
	return lo, hi, nil
}

// settleTimeout bounds Settled.
const settleTimeout = 2 * time.Second

// Settled returns once mutter has handled the last input event the
// session sent (not only taken the D-Bus call: mutter's input thread
// turns it into an event its main loop dispatches to the focused client
// later): its idle monitor reports an input event no earlier than that
// event was sent. Since mutter handles the session's events in order,
// every earlier one has reached its client too. Sync's Ping proves only
// that the calls arrived (GDBus answers it itself, not mutter's code), so
// this is the session's round trip for the ordering proof and for telling
// acu's input from the user's. The proof is to the readings' precision
// (pin): see the settleSure fallback.
func (s *Session) Settled(ctx context.Context) error {
	sent := s.sent.Load()
	if sent == nil {
		return s.Sync(ctx)
	}
	at := *sent
	deadline := time.Now().Add(settleTimeout)
	for {
		// The monitor counts whole milliseconds: a reading can prove an
		// event after at only from 1 ms after it on.
		if d := time.Until(at.Add(time.Millisecond)); d > 0 {
			if err := sleepCtx(ctx, d); err != nil {
				return err
			}
		}
		lo, _, err := s.lastInput(ctx)
		if err != nil {
			return err
		}
		if !lo.Before(at) {
			return nil
		}
		if !lo.Before(at.Add(-pinned)) && time.Since(at) > settleSure {
			return nil // as narrow as readings make it, and long after
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("mutter remote desktop: mutter reports no input event since acu's last one was sent %s ago", time.Since(at).Round(time.Millisecond))
		}
		if err := sleepCtx(ctx, 300*time.Microsecond); err != nil {
			return err
		}
	}
}

// settleSure: an event read within pinned before the input was sent is
// taken for it once this much has passed (the readings cannot pin an
// event closer than their round trip).
const settleSure = 10 * time.Millisecond

// IdleWatch tells the user's input on a GNOME display from acu's own, for
// the gate's user-first check: mutter's idle monitor reports when the
// last input event was, from any device, and acu brackets its own input
// (Begin before its first call, End once mutter has handled the last:
// Settled), so a last event outside every bracket is the user's (or
// another program's: another remote-desktop session, a virtual device).
// Every reading sees only the latest event: input of the user's followed
// by acu's before a reading is hidden by acu's. The gate reads before
// each effect (Flush) and Begin reads once more, so only the user's
// input inside acu's brackets is missed, as on wlroots.
type IdleWatch struct {
	s *Session

	mu       sync.Mutex
	own      []bracket // acu's input, the newest last; the first covers what came before the watch
	open     int       // Begin without End
	from     time.Time // the open bracket's start
	lastUser time.Time
}

type bracket struct{ from, to time.Time }

// maxBrackets bounds the brackets kept: a reading's event is the latest
// input, so only recent brackets can hold it.
const maxBrackets = 64

// IdleWatch opens the watch on mutter's idle monitor, on the session's
// bus. Input before it opened is nobody's.
func (s *Session) IdleWatch(ctx context.Context) (*IdleWatch, error) {
	// Open's own first input (it settles the devices) is nobody's either:
	// wait until mutter has handled it (mutter may have dropped it, which
	// Settled cannot tell from slowness: the reading decides).
	_ = s.Settled(ctx)
	if _, _, err := s.lastInput(ctx); err != nil {
		return nil, err
	}
	return &IdleWatch{s: s, own: []bracket{{to: time.Now()}}}, nil
}

// note classifies the event a reading placed in (lo, hi]: acu's when it
// may lie in one of acu's brackets (or an open one), else the user's.
// Under w.mu.
func (w *IdleWatch) note(lo, hi time.Time) {
	if w.open > 0 && hi.After(w.from) {
		return
	}
	for i := len(w.own) - 1; i >= 0; i-- {
		b := w.own[i]
		if hi.After(b.from) && !lo.After(b.to) {
			return
		}
	}
	if hi.After(w.lastUser) {
		w.lastUser = hi
	}
}

func (w *IdleWatch) read(ctx context.Context) error {
	lo, hi, err := w.s.pin(ctx)
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.note(lo, hi)
	w.mu.Unlock()
	return nil
}

// Flush reads the idle monitor, so LastUser counts every input mutter
// handled so far.
func (w *IdleWatch) Flush(ctx context.Context) error { return w.read(ctx) }

// ownGrace extends each bracket past End: Settled proves that mutter
// handled an event sent no earlier than acu's last call, which on a
// loaded machine can be an earlier one of acu's, handled late, with the
// rest just behind it (seen: a click's release 17 ms after its bracket
// closed, taken for the user's). The user's input within ownGrace after
// acu's is taken for acu's.
const ownGrace = 20 * time.Millisecond

// markWait bounds Begin's and End's readings.
const markWait = time.Second

// Begin marks the start of acu's own input: it reads the monitor first
// (the user's input since the last reading), then opens a bracket.
func (w *IdleWatch) Begin() {
	ctx, cancel := context.WithTimeout(context.Background(), markWait)
	defer cancel()
	_ = w.read(ctx)
	w.mu.Lock()
	if w.open == 0 {
		w.from = time.Now()
	}
	w.open++
	w.mu.Unlock()
}

// BeginFlushed is Flush then Begin (the gate's check and bracket in one
// call): it returns LastUser as the reading left it, before the bracket
// opened, and cancel, which takes the bracket back at once when acu then
// sends nothing in it (the gate refused the effect); otherwise End ends
// it. On an error no bracket was opened (cancel does nothing).
func (w *IdleWatch) BeginFlushed(ctx context.Context) (last time.Time, cancel func(), err error) {
	if err := w.read(ctx); err != nil {
		return time.Time{}, func() {}, err
	}
	w.mu.Lock()
	last = w.lastUser
	if w.open == 0 {
		w.from = time.Now()
	}
	w.open++
	w.mu.Unlock()
	var once sync.Once
	return last, func() {
		once.Do(func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.open > 0 {
				w.open--
			}
		})
	}, nil
}

// End closes the bracket once mutter has handled acu's last event
// (Settled; at most settleTimeout), ownGrace later: an event mutter
// handles after that is the user's. An End without a Begin does nothing.
func (w *IdleWatch) End() {
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout+markWait)
	defer cancel()
	_ = w.s.Settled(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.open == 0 {
		return
	}
	w.open--
	if w.open > 0 {
		return
	}
	w.own = append(w.own, bracket{from: w.from, to: time.Now().Add(ownGrace)})
	if len(w.own) > maxBrackets {
		w.own = append(w.own[:1], w.own[len(w.own)-maxBrackets+1:]...)
	}
}

// LastUser is when the user's last input (by the readings so far) was;
// zero when none was seen.
func (w *IdleWatch) LastUser() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastUser
}

// Close does nothing: the watch reads on the session's connection.
func (w *IdleWatch) Close() error { return nil }
