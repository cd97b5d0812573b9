// The event stream: sequence order, subscriptions that resume without a gap
// or a duplicate, slow subscribers, filters and their end.

package runs

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSeqStrictlyIncreasingUnderConcurrentWriters(t *testing.T) {
	ctx := t.Context()
	e := newEnv(t, Options{})
	runs := []Run{e.start(t, "wait"), e.start(t, "agent"), e.start(t, "task")}
	sub, err := e.reg.Subscribe(ctx, Filter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()

	const writers, each = 8, 40
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := e.reg.Emit(ctx, runs[(w+i)%len(runs)].ID, "step", map[string]int{"w": w, "i": i}); err != nil {
					t.Errorf("Emit() = %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, run := range runs {
		if _, err := e.reg.End(ctx, run.ID, StatusCompleted, "", nil); err != nil {
			t.Fatal(err)
		}
	}
	total := len(runs)*2 + writers*each
	var got []Event
	for len(got) < total {
		ev, ok := <-sub.Events()
		if !ok {
			t.Fatalf("subscription closed after %d events: %v", len(got), sub.Err())
		}
		got = append(got, ev)
	}
	lastSeq := map[string]int64{}
	var lastCursor int64
	for _, ev := range got {
		if ev.Cursor <= lastCursor {
			t.Fatalf("cursor %d delivered after %d", ev.Cursor, lastCursor)
		}
		lastCursor = ev.Cursor
		if ev.Seq != lastSeq[ev.RunID]+1 {
			t.Fatalf("run %s: seq %d after %d", ev.RunID, ev.Seq, lastSeq[ev.RunID])
		}
		lastSeq[ev.RunID] = ev.Seq
	}
	if diff := cmp.Diff(e.events(t, Filter{}), got); diff != "" {
		t.Errorf("delivered events differ from stored ones (-stored +delivered):\n%s", diff)
	}
}

// A subscriber that disconnects and resumes from the cursor of the last
// event it saw gets exactly the events it missed, while writers continue.
func TestSubscribeResumeNoGapNoDup(t *testing.T) {
	ctx := t.Context()
	e := newEnv(t, Options{})
	runs := []Run{e.start(t, "wait"), e.start(t, "wait")}

	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := e.reg.Emit(ctx, runs[w%2].ID, "verdict", map[string]int{"i": i}); err != nil {
					t.Errorf("Emit() = %v", err)
					return
				}
			}
		})
	}

	var got []Event
	var last int64
	for round := range 4 {
		sub, err := e.reg.Subscribe(ctx, Filter{}, last)
		if err != nil {
			t.Fatal(err)
		}
		for range 40 + round*7 {
			ev := <-sub.Events()
			got = append(got, ev)
			last = ev.Cursor
		}
		sub.Close()
		if err := sub.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("Err() after Close = %v, want context.Canceled", err)
		}
	}
	close(stop)
	wg.Wait()
	for _, run := range runs {
		if _, err := e.reg.End(ctx, run.ID, StatusResolved, "", nil); err != nil {
			t.Fatal(err)
		}
	}
	// The final resume drains to the end of the stream.
	final, err := e.reg.LastCursor(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := e.reg.Subscribe(ctx, Filter{}, last)
	if err != nil {
		t.Fatal(err)
	}
	for last < final {
		ev := <-sub.Events()
		got = append(got, ev)
		last = ev.Cursor
	}
	sub.Close()
	if diff := cmp.Diff(e.events(t, Filter{}), got); diff != "" {
		t.Errorf("resumed stream differs from the stored one (-stored +delivered):\n%s", diff)
	}
}

// A consumer that does not read never blocks writers; when it reads again
// it gets every event, in order, from the store.
func TestSlowSubscriberLosesNothing(t *testing.T) {
	ctx := t.Context()
	e := newEnv(t, Options{SubscriberBuffer: 4})
	run := e.start(t, "agent")
	sub, err := e.reg.Subscribe(ctx, Filter{RunID: run.ID}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for i := range 300 { // far past the buffer, nobody reading
		if _, err := e.reg.Emit(ctx, run.ID, "turn", map[string]int{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.reg.End(ctx, run.ID, StatusCompleted, "", nil); err != nil {
		t.Fatal(err)
	}
	want := e.events(t, Filter{RunID: run.ID})
	var got []Event
	for len(got) < len(want) {
		got = append(got, <-sub.Events())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("slow subscriber's stream (-stored +delivered):\n%s", diff)
	}
	if n := e.metric(t, "acu_run_subscriber_lagged_total"); n < 1 {
		t.Errorf("acu_run_subscriber_lagged_total = %v, want at least 1", n)
	}
}

func TestSubscribeFilters(t *testing.T) {
	ctx := t.Context()
	e := newEnv(t, Options{})
	a, b := e.start(t, "wait"), e.start(t, "wait")
	for i := range 6 {
		run := []Run{a, b}[i%2]
		stream := []string{"verdict", "log", "verdict"}[i%3]
		if _, err := e.reg.Emit(ctx, run.ID, stream, nil); err != nil {
			t.Fatal(err)
		}
	}
	// From now on only: the next event is the first delivered.
	liveOnly, err := e.reg.Subscribe(ctx, Filter{}, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer liveOnly.Close()
	byRun, err := e.reg.Subscribe(ctx, Filter{RunID: a.ID, Streams: []string{StreamLifecycle, "verdict"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer byRun.Close()

	ended, err := e.reg.End(ctx, a.ID, StatusResolved, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ev := <-liveOnly.Events(); ev.RunID != a.ID || lifecycleOf(t, ev).Phase != PhaseEnd {
		t.Errorf("first live-only event = %+v, want a's end", ev)
	}
	var got []string
	for {
		ev := <-byRun.Events()
		got = append(got, ev.Stream)
		if ev.Stream == StreamLifecycle && lifecycleOf(t, ev).Phase == PhaseEnd {
			if !lifecycleOf(t, ev).EndedAt.Equal(ended.EndedAt) {
				t.Errorf("end event %+v, want endedAt %v", ev, ended.EndedAt)
			}
			break
		}
		if ev.RunID != a.ID {
			t.Fatalf("filtered subscription delivered %+v", ev)
		}
	}
	if diff := cmp.Diff([]string{StreamLifecycle, "verdict", "verdict", StreamLifecycle}, got); diff != "" {
		t.Errorf("filtered streams (-want +got):\n%s", diff)
	}
}

func TestSubscriptionEndsWithContext(t *testing.T) {
	e := newEnv(t, Options{})
	ctx, cancel := context.WithCancel(t.Context())
	sub, err := e.reg.Subscribe(ctx, Filter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	for range sub.Events() {
	}
	if err := sub.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("Err() = %v, want context.Canceled", err)
	}
	waitUntil(t, "no subscriber is registered", func() bool {
		e.reg.mu.Lock()
		defer e.reg.mu.Unlock()
		return len(e.reg.subs) == 0
	})
}
