package gate

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
)

// lastInput is an idle watch's record as wlUser reads it: the user's last
// input, and acu's own input bracketed.
type lastInput struct {
	last                            time.Time
	begun, done, flushed, cancelled int
	flushedBegun                    int // BeginFlushed calls
}

func (l *lastInput) Flush(context.Context) error { l.flushed++; return nil }

func (l *lastInput) BeginFlushed(context.Context) (time.Time, func(), error) {
	l.flushedBegun++
	return l.last, func() { l.cancelled++ }, nil
}

func (l *lastInput) Begin()              { l.begun++ }
func (l *lastInput) End()                { l.done++ }
func (l *lastInput) LastUser() time.Time { return l.last }
func (l *lastInput) Close() error        { return nil }

// TestWaylandUserCheck: with an idle watch plugged in, the user's input
// within the quiet period refuses (user_active, with when to retry), and
// older input or none does not; acu's own input is bracketed. Without a
// watch nothing is refused.
func TestWaylandUserCheck(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	w := &lastInput{}
	u := &wlUser{dpy: "/run/wayland-1", log: slog.New(slog.DiscardHandler), pause: true, watch: w, now: func() time.Time { return now }}
	ctx := context.Background()
	if err := u.check(ctx, 3*time.Second); err != nil {
		t.Errorf("no user input yet: %v", err)
	}
	w.last = now.Add(-time.Second)
	err := u.check(ctx, 3*time.Second)
	r, ok := err.(*Refused)
	if !ok || r.Code != api.CodeUserActive || r.RetryAfter != 2*time.Second {
		t.Errorf("input 1s ago, quiet 3s: %v, want user_active retrying after 2s", err)
	}
	if w.flushed != 2 {
		t.Errorf("the watch was flushed %d times before 2 checks", w.flushed)
	}
	w.last = now.Add(-4 * time.Second)
	if err := u.check(ctx, 3*time.Second); err != nil {
		t.Errorf("input 4s ago, quiet 3s: %v", err)
	}
	u.begin()
	if err := u.end(ctx, 0); err != nil || w.begun != 1 || w.done != 1 {
		t.Errorf("acu's input bracketed %d/%d times, %v; want 1/1", w.begun, w.done, err)
	}
	// An effect's check and bracket are one BeginFlushed (no Flush); a
	// refusal cancels its bracket.
	w.flushed = 0
	if err := u.checkBegin(ctx, 3*time.Second); err != nil || w.flushedBegun != 1 || w.cancelled != 0 {
		t.Errorf("checkBegin, input 4s ago: %v, %d BeginFlushed, %d cancelled; want nil, 1, 0", err, w.flushedBegun, w.cancelled)
	}
	w.last = now.Add(-time.Second)
	if err, ok := u.checkBegin(ctx, 3*time.Second).(*Refused); !ok || err.RetryAfter != 2*time.Second || w.flushedBegun != 2 || w.cancelled != 1 {
		t.Errorf("checkBegin, input 1s ago: %v, %d BeginFlushed, %d cancelled; want user_active, 2, 1", err, w.flushedBegun, w.cancelled)
	}
	if w.flushed != 0 {
		t.Errorf("checkBegin flushed the watch %d times besides BeginFlushed's round trip", w.flushed)
	}
	none := &wlUser{dpy: "/run/wayland-1", log: slog.New(slog.DiscardHandler), pause: true}
	if err := none.check(ctx, 3*time.Second); err != nil {
		t.Errorf("without a watch: %v, want no refusal", err)
	}
}
