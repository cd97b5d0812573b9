package notify

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/pgtest"

	"github.com/acu-dev/acu/internal/store"
)

// recordingNotifier counts deliveries per key.
type recordingNotifier struct {
	mu   sync.Mutex
	keys map[string]int
}

func (r *recordingNotifier) Name() string { return "exec" }
func (r *recordingNotifier) Notify(ctx context.Context, d Delivery) error {
	time.Sleep(time.Millisecond) // long enough for the other dispatcher to read the row as due
	r.mu.Lock()
	r.keys[d.Key]++
	r.mu.Unlock()
	return nil
}

// Two dispatchers on one database (two processes' store handles) deliver
// every message exactly once: each attempt is claimed with a lease.
func TestTwoDispatchersDeliverOnce(t *testing.T) {
	path := pgtest.Path(t, "acu.db")
	rec := &recordingNotifier{keys: map[string]int{}}
	var ds []*Dispatcher
	for i := range 2 {
		d, err := NewDispatcher(openStore(t, path), DispatcherOptions{Notifiers: []Notifier{rec},
			PollInterval: 5 * time.Millisecond, Owner: fmt.Sprintf("proc-%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	for _, d := range ds {
		startDispatcher(t, d)
	}
	const n = 200
	for i := range n {
		if err := ds[i%2].Notify(t.Context(), Notification{Key: fmt.Sprintf("wait_%d:resolved", i), RunID: fmt.Sprintf("wait_%d", i), Message: "m"}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "every delivery", func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.keys) == n
	})
	time.Sleep(100 * time.Millisecond) // room for a duplicate to show
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for k, c := range rec.keys {
		if c != 1 {
			t.Errorf("%s delivered %d times, want once", k, c)
		}
	}
}

// A row leased by a dispatcher whose process died mid-attempt is delivered
// by another once the dead process's owner lease ends, without waiting out
// the row's own (long) lease.
func TestLeaseOfDeadOwnerIsFree(t *testing.T) {
	db := openStore(t, pgtest.Path(t, "acu.db"))
	ctx := t.Context()
	dead := store.Owner{ID: "dead-proc", Host: "h", PID: 1, LeaseUntil: time.Now().Add(time.Hour)}
	if err := db.RegisterOwner(ctx, dead); err != nil {
		t.Fatal(err)
	}
	if _, err := Enqueue(ctx, db, Notification{Key: "wait_x:resolved", RunID: "wait_x", Message: "m"}, []string{"exec"}); err != nil {
		t.Fatal(err)
	}
	due, err := db.DueOutbox(ctx, time.Now(), 10)
	if err != nil || len(due) != 1 {
		t.Fatalf("DueOutbox = %v, %v", due, err)
	}
	now := time.Now()
	if won, err := db.ClaimOutbox(ctx, due[0].ID, 0, dead.ID, now, now.Add(time.Hour)); !won || err != nil {
		t.Fatalf("ClaimOutbox by the first owner = %v, %v; want won", won, err)
	}
	if won, err := db.ClaimOutbox(ctx, due[0].ID, 0, "other", now, now.Add(time.Hour)); won || err != nil {
		t.Fatalf("ClaimOutbox of a leased row = %v, %v; want lost", won, err)
	}
	if due, _ := db.DueOutbox(ctx, time.Now(), 10); len(due) != 0 {
		t.Fatalf("DueOutbox lists a leased row: %+v", due)
	}
	// The owner's process dies: its lease ends (as the daemon's sweep does
	// for a gone pid).
	if err := db.ExpireOwner(ctx, dead.ID); err != nil {
		t.Fatal(err)
	}
	rec := &recordingNotifier{keys: map[string]int{}}
	d, err := NewDispatcher(db, DispatcherOptions{Notifiers: []Notifier{rec}, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	startDispatcher(t, d)
	waitDelivered(t, db, "wait_x", "wait_x:resolved:exec")
}
