package notify

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/pgtest"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/acu-dev/acu/internal/store"
)

func openStore(t *testing.T, path string) *store.DB {
	t.Helper()
	db, err := store.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// fastBackoff keeps retries quick in tests.
var fastBackoff = Backoff{Initial: 20 * time.Millisecond, Max: 100 * time.Millisecond}

// startDispatcher runs d until the test ends (or stop is called) and checks
// that Run returns nil.
func startDispatcher(t *testing.T, d *Dispatcher) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- d.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-errc; err != nil {
				t.Errorf("Run() = %v, want nil after cancel", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func outboxByKey(t *testing.T, db *store.DB, runID, key string) store.OutboxItem {
	t.Helper()
	items, err := db.Outbox(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.Key == key {
			return it
		}
	}
	t.Fatalf("no outbox row %q for run %q in %+v", key, runID, items)
	return store.OutboxItem{}
}

func attemptsOf(t *testing.T, db *store.DB, id int64) []store.OutboxAttempt {
	t.Helper()
	as, err := db.OutboxAttempts(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return as
}

func waitDelivered(t *testing.T, db *store.DB, runID, key string) store.OutboxItem {
	t.Helper()
	var it store.OutboxItem
	waitFor(t, "delivery of "+key, func() bool {
		it = outboxByKey(t, db, runID, key)
		return it.Delivered()
	})
	return it
}

func counterValue(t *testing.T, reg *prometheus.Registry, notifier, result string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "acu_notify_attempts_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["notifier"] == notifier && labels["result"] == result {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestDispatcherDeliversBoth is the resolution path: one notification, one
// row per notifier, the exec message in a file exactly, the webhook signed.
func TestDispatcherDeliversBoth(t *testing.T) {
	db := openStore(t, pgtest.Path(t, "acu.db"))
	out := filepath.Join(t.TempDir(), "wake.txt")
	ex, err := NewExec(ExecOptions{Command: `sh -c 'printf %s "$1" > "$2"' sh {message} ` + quoteArg(out)})
	if err != nil {
		t.Fatal(err)
	}
	srv := newHookServer(t)
	wh, err := NewWebhook(WebhookOptions{URL: srv.URL + "/hooks/wake", Token: testToken, Secret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	d, err := NewDispatcher(db, DispatcherOptions{Notifiers: []Notifier{ex, wh}, Backoff: fastBackoff, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	startDispatcher(t, d)

	msg := `[smart_wait resolved] Job wait_7: "Download complete" is visible → a dialog reads 'Download complete' $(id)`
	n := Notification{Key: "wait_7:resolved", RunID: "wait_7", Event: "resolved", Message: msg}
	if err := d.Notify(t.Context(), n); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"exec", "webhook"} {
		it := waitDelivered(t, db, "wait_7", "wait_7:resolved:"+name)
		if it.Attempts != 1 || it.LastError != "" {
			t.Errorf("row %s: attempts %d, last error %q; want 1 and none", it.Key, it.Attempts, it.LastError)
		}
		as := attemptsOf(t, db, it.ID)
		if len(as) != 1 || !as[0].OK {
			t.Errorf("row %s attempts = %+v, want one successful", it.Key, as)
		}
		if got := counterValue(t, reg, name, "delivered"); got != 1 {
			t.Errorf("delivered counter for %s = %v, want 1", name, got)
		}
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != msg {
		t.Errorf("exec wrote %q, want %q", got, msg)
	}
	reqs := srv.requests()
	if len(reqs) != 1 {
		t.Fatalf("webhook got %d requests, want 1", len(reqs))
	}
	var body map[string]any
	if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"text": msg, "mode": "now", "runId": "wait_7", "event": "resolved"}, body); diff != "" {
		t.Errorf("webhook body (-want +got):\n%s", diff)
	}
	if got := reqs[0].Header.Get(HeaderIdempotency); got != "wait_7:resolved:webhook" {
		t.Errorf("Idempotency-Key = %q", got)
	}

	// Notifying the same key again is a no-op: nothing new is delivered.
	if err := d.Notify(t.Context(), n); err != nil {
		t.Fatal(err)
	}
	items, err := db.Outbox(t.Context(), "wait_7")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 {
		t.Errorf("outbox has %d rows after a duplicate Notify, want 2", len(items))
	}
}

func TestDispatcherRetriesUntilDelivered(t *testing.T) {
	db := openStore(t, pgtest.Path(t, "acu.db"))
	srv := newHookServer(t, http.StatusInternalServerError, http.StatusBadGateway)
	wh, err := NewWebhook(WebhookOptions{URL: srv.URL + "/hooks/wake", Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	d, err := NewDispatcher(db, DispatcherOptions{Notifiers: []Notifier{wh}, Backoff: fastBackoff, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	startDispatcher(t, d)
	if err := d.Notify(t.Context(), Notification{Key: "wait_8:timeout", RunID: "wait_8", Event: "timeout", Message: "m"}); err != nil {
		t.Fatal(err)
	}
	it := waitDelivered(t, db, "wait_8", "wait_8:timeout:webhook")
	if it.Attempts != 3 {
		t.Errorf("attempts = %d, want 3 (500, 502, 200)", it.Attempts)
	}
	as := attemptsOf(t, db, it.ID)
	if len(as) != 3 {
		t.Fatalf("recorded attempts = %+v, want 3", as)
	}
	for i, want := range []string{"status 500", "status 502", ""} {
		if as[i].OK != (want == "") || !strings.Contains(as[i].Error, want) {
			t.Errorf("attempt %d = %+v, want ok=%v error containing %q", i+1, as[i], want == "", want)
		}
	}
	keys := map[string]bool{}
	for _, r := range srv.requests() {
		keys[r.Header.Get(HeaderIdempotency)] = true
	}
	if len(keys) != 1 || !keys["wait_8:timeout:webhook"] {
		t.Errorf("idempotency keys across retries = %v, want the same one", keys)
	}
	if f, dl := counterValue(t, reg, "webhook", "failed"), counterValue(t, reg, "webhook", "delivered"); f != 2 || dl != 1 {
		t.Errorf("counters failed=%v delivered=%v, want 2 and 1", f, dl)
	}
}

// TestDispatcherRestart: a dispatcher that could not deliver stops; a new one
// on the same SQLite file (a new process, in effect) delivers what was
// pending, continuing the attempt count.
func TestDispatcherRestart(t *testing.T) {
	path := pgtest.Path(t, "state/acu.db")

	var down atomic.Bool
	down.Store(true)
	var attemptsSeen []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		attemptsSeen = append(attemptsSeen, string(b))
		mu.Unlock()
		if down.Load() {
			http.Error(w, "restarting", http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(srv.Close)
	newWebhook := func() *Webhook {
		w, err := NewWebhook(WebhookOptions{URL: srv.URL, BodyTemplate: `{"text": {{json .Message}}, "attempt": {{.Attempt}}}`})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}

	// First process: enqueue, fail at least once, stop.
	db1, err := store.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d1, err := NewDispatcher(db1, DispatcherOptions{Notifiers: []Notifier{newWebhook()}, Backoff: Backoff{Initial: time.Hour, Max: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	stop1 := startDispatcher(t, d1)
	if err := d1.Notify(t.Context(), Notification{Key: "wait_9:resolved", RunID: "wait_9", Event: "resolved", Message: "resume me"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a failed attempt", func() bool { return outboxByKey(t, db1, "wait_9", "wait_9:resolved:webhook").Attempts >= 1 })
	stop1()
	if err := db1.Close(); err != nil {
		t.Fatal(err)
	}

	// Second process: same file, endpoint back. The first process scheduled
	// the retry up to an hour ahead; the new dispatcher's clock runs 61
	// minutes ahead so the row is due without rewriting it.
	down.Store(false)
	db2 := openStore(t, path)
	ahead := func() time.Time { return time.Now().Add(61 * time.Minute) }
	d2, err := NewDispatcher(db2, DispatcherOptions{Notifiers: []Notifier{newWebhook()}, Backoff: fastBackoff, Clock: ahead})
	if err != nil {
		t.Fatal(err)
	}
	startDispatcher(t, d2)
	it := waitDelivered(t, db2, "wait_9", "wait_9:resolved:webhook")
	if it.Attempts != 2 {
		t.Errorf("attempts = %d, want 2 (one failed before the restart, one delivered after)", it.Attempts)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{`{"text": "resume me", "attempt": 1}`, `{"text": "resume me", "attempt": 2}`}; !cmp.Equal(want, attemptsSeen) {
		t.Errorf("bodies seen = %q, want %q", attemptsSeen, want)
	}
}

// TestDispatcherShutdownMidDelivery: a delivery cut short by shutdown is
// recorded as interrupted and due at once, so the next start delivers it.
func TestDispatcherShutdownMidDelivery(t *testing.T) {
	path := pgtest.Path(t, "acu.db")
	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	hang, err := NewExec(ExecOptions{Command: `sh -c ': > "$1"; sleep 300' sh ` + quoteArg(started) + ` {message}`})
	if err != nil {
		t.Fatal(err)
	}
	db1, err := store.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d1, err := NewDispatcher(db1, DispatcherOptions{Notifiers: []Notifier{hang}})
	if err != nil {
		t.Fatal(err)
	}
	stop1 := startDispatcher(t, d1)
	if err := d1.Notify(t.Context(), Notification{Key: "wait_10:resolved", RunID: "wait_10", Message: "late"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the command to start", func() bool { _, err := os.Stat(started); return err == nil })
	stop1()
	it := outboxByKey(t, db1, "wait_10", "wait_10:resolved:exec")
	if it.Delivered() || it.Attempts != 1 || !strings.Contains(it.LastError, "interrupted by shutdown") {
		t.Errorf("row after shutdown = %+v, want one interrupted attempt", it)
	}
	if it.NextAt.After(time.Now()) {
		t.Errorf("row NextAt = %v, want due at once", it.NextAt)
	}
	db1.Close()

	out := filepath.Join(dir, "out")
	ok, err := NewExec(ExecOptions{Command: `sh -c 'printf %s "$1" > "$2"' sh {message} ` + quoteArg(out)})
	if err != nil {
		t.Fatal(err)
	}
	db2 := openStore(t, path)
	d2, err := NewDispatcher(db2, DispatcherOptions{Notifiers: []Notifier{ok}})
	if err != nil {
		t.Fatal(err)
	}
	startDispatcher(t, d2)
	waitDelivered(t, db2, "wait_10", "wait_10:resolved:exec")
	if b, _ := os.ReadFile(out); string(b) != "late" {
		t.Errorf("exec after restart wrote %q, want %q", b, "late")
	}
}

// TestDispatcherHungNotifierDoesNotBlock: a hung endpoint holds one slot
// until its timeout; another notification through the same webhook and one
// through exec are delivered meanwhile; the hung attempt is then recorded as
// timed out and retried.
func TestDispatcherHungNotifierDoesNotBlock(t *testing.T) {
	db := openStore(t, pgtest.Path(t, "acu.db"))
	entered := make(chan struct{})
	var hung atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), "hang") && hung.CompareAndSwap(false, true) {
			close(entered)
			<-r.Context().Done() // until the client gives up
		}
	}))
	t.Cleanup(srv.Close)
	wh, err := NewWebhook(WebhookOptions{URL: srv.URL, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	ex, err := NewExec(ExecOptions{Command: `sh -c 'printf %s "$1" > "$2"' sh {message} ` + quoteArg(out)})
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDispatcher(db, DispatcherOptions{Notifiers: []Notifier{wh, ex}, Backoff: fastBackoff})
	if err != nil {
		t.Fatal(err)
	}
	startDispatcher(t, d)

	if _, err := Enqueue(t.Context(), db, Notification{Key: "a", RunID: "wait_a", Message: "hang"}, []string{"webhook"}); err != nil {
		t.Fatal(err)
	}
	d.Kick()
	<-entered
	if err := d.Notify(t.Context(), Notification{Key: "b", RunID: "wait_b", Message: "fine"}); err != nil {
		t.Fatal(err)
	}
	waitDelivered(t, db, "wait_b", "b:webhook")
	waitDelivered(t, db, "wait_b", "b:exec")
	if a := outboxByKey(t, db, "wait_a", "a:webhook"); a.Attempts != 0 {
		t.Errorf("hung row already has %d attempts when the others were delivered; want it still in flight", a.Attempts)
	}

	a := waitDelivered(t, db, "wait_a", "a:webhook")
	as := attemptsOf(t, db, a.ID)
	if len(as) != 2 || as[0].OK || !strings.Contains(as[0].Error, "no response within 5s") || !as[1].OK {
		t.Errorf("hung row attempts = %+v, want a timeout then a delivery", as)
	}
}

func TestDispatcherUnknownNotifier(t *testing.T) {
	db := openStore(t, pgtest.Path(t, "acu.db"))
	ex, err := NewExec(ExecOptions{CLI: "true"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDispatcher(db, DispatcherOptions{Notifiers: []Notifier{ex}, Backoff: fastBackoff})
	if err != nil {
		t.Fatal(err)
	}
	startDispatcher(t, d)
	if _, err := Enqueue(t.Context(), db, Notification{Key: "k", RunID: "wait_u", Message: "m"}, []string{"pager"}); err != nil {
		t.Fatal(err)
	}
	d.Kick()
	waitFor(t, "retries of an unknown notifier", func() bool { return outboxByKey(t, db, "wait_u", "k:pager").Attempts >= 2 })
	it := outboxByKey(t, db, "wait_u", "k:pager")
	if it.Delivered() || !strings.Contains(it.LastError, `notifier "pager"`) || !strings.Contains(it.LastError, ErrNoNotifier.Error()) {
		t.Errorf("row = %+v, want undelivered with a no-such-notifier error", it)
	}
}

func TestEnqueue(t *testing.T) {
	db := openStore(t, pgtest.Path(t, "acu.db"))
	n := Notification{Key: "wait_1:resolved", RunID: "wait_1", Event: "resolved", Message: "m"}
	for i, want := range []int{2, 0} {
		got, err := Enqueue(t.Context(), db, n, []string{"exec", "webhook"})
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("Enqueue #%d inserted %d, want %d", i+1, got, want)
		}
	}
	items, err := db.Outbox(t.Context(), "wait_1")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, it := range items {
		keys = append(keys, it.Key+"/"+it.Notifier)
		var p payload
		if err := json.Unmarshal(it.Payload, &p); err != nil || p != (payload{Event: "resolved", Key: "wait_1:resolved"}) {
			t.Errorf("row %s payload %s (%v), want event and key", it.Key, it.Payload, err)
		}
	}
	if want := []string{"wait_1:resolved:exec/exec", "wait_1:resolved:webhook/webhook"}; !cmp.Equal(want, keys) {
		t.Errorf("rows = %q, want %q", keys, want)
	}
	if _, err := Enqueue(t.Context(), db, Notification{Message: "m"}, []string{"exec"}); err == nil {
		t.Error("Enqueue with an empty key = nil error")
	}
}

func TestNewDispatcherRejectsDuplicateNames(t *testing.T) {
	a, _ := NewExec(ExecOptions{})
	b, _ := NewExec(ExecOptions{CLI: "other"})
	if _, err := NewDispatcher(nil, DispatcherOptions{Notifiers: []Notifier{a, b}}); err == nil || !strings.Contains(err.Error(), `"exec"`) {
		t.Errorf("NewDispatcher with two exec notifiers = %v, want a duplicate-name error", err)
	}
}

func TestDispatcherRunTwice(t *testing.T) {
	db := openStore(t, pgtest.Path(t, "acu.db"))
	d, err := NewDispatcher(db, DispatcherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	startDispatcher(t, d)
	waitFor(t, "Run to start", d.running.Load)
	if err := d.Run(t.Context()); err == nil {
		t.Error("second concurrent Run() = nil, want an error")
	}
	for range 10 {
		d.Kick() // never blocks
	}
}

// flakyOutbox wraps a store and fails reads on demand (a locked or broken
// database): the dispatcher must keep going.
type flakyOutbox struct {
	*store.DB
	fail atomic.Int32
}

func (f *flakyOutbox) DueOutbox(ctx context.Context, now time.Time, limit int) ([]store.OutboxItem, error) {
	if f.fail.Add(-1) >= 0 {
		return nil, errors.New("database is locked")
	}
	return f.DB.DueOutbox(ctx, now, limit)
}

func TestDispatcherSurvivesOutboxErrors(t *testing.T) {
	db := &flakyOutbox{DB: openStore(t, pgtest.Path(t, "acu.db"))}
	db.fail.Store(2)
	ex, err := NewExec(ExecOptions{CLI: "true"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDispatcher(db, DispatcherOptions{Notifiers: []Notifier{ex}, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	startDispatcher(t, d)
	if err := d.Notify(t.Context(), Notification{Key: "k", RunID: "wait_f", Message: "m"}); err != nil {
		t.Fatal(err)
	}
	waitDelivered(t, db.DB, "wait_f", "k:exec")
}

func TestBackoffDelay(t *testing.T) {
	b := Backoff{Initial: time.Second, Max: time.Minute, Multiplier: 2, Jitter: 0.5}
	tests := []struct {
		failed int
		r      float64
		want   time.Duration
	}{
		{1, 0.5, time.Second},
		{2, 0.5, 2 * time.Second},
		{4, 0.5, 8 * time.Second},
		{1, 0, 500 * time.Millisecond},
		{1, 0.999999, 1499999 * time.Microsecond},
		{7, 0.5, time.Minute},      // 64s capped
		{7, 0, 30 * time.Second},   // capped, then jittered down
		{7, 0.99, time.Minute},     // jitter never exceeds Max
		{1000, 0.5, time.Minute},   // no overflow
		{0, 0.5, time.Second},      // treated as the first failure
		{3, 0.25, 3 * time.Second}, // 4s * 0.75
		{3, 0.75, 5 * time.Second}, // 4s * 1.25
		{10, 0.5, time.Minute},     // 512s capped
		{2, 1.0 / 3, 1666666666 * time.Nanosecond},
	}
	for _, tt := range tests {
		got := b.Delay(tt.failed, tt.r)
		if diff := got - tt.want; diff < -time.Microsecond || diff > time.Microsecond {
			t.Errorf("Delay(%d, %v) = %v, want %v", tt.failed, tt.r, got, tt.want)
		}
	}
	if got := (Backoff{}).Delay(1, 0.5); got != time.Second {
		t.Errorf("zero Backoff Delay(1) = %v, want the 1s default", got)
	}
}

// signalNotifier wraps a notifier and reports each finished attempt.
type signalNotifier struct {
	Notifier
	done chan attemptResult
}

type attemptResult struct {
	key string
	err error
}

func (s signalNotifier) Notify(ctx context.Context, d Delivery) error {
	err := s.Notifier.Notify(ctx, d)
	select {
	case s.done <- attemptResult{d.Key, err}:
	case <-ctx.Done():
	}
	return err
}

// BenchmarkDispatchDeliver measures one notification from Notify (durable
// enqueue of the row) through Kick to the webhook's 2xx.
func BenchmarkDispatchDeliver(b *testing.B) {
	b.ReportAllocs()
	db, err := store.Open(b.Context(), filepath.Join(b.TempDir(), "acu.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	wh, err := NewWebhook(WebhookOptions{URL: srv.URL, Secret: testSecret, Token: testToken})
	if err != nil {
		b.Fatal(err)
	}
	sig := signalNotifier{Notifier: wh, done: make(chan attemptResult, 1)}
	var dups int
	d, err := NewDispatcher(db, DispatcherOptions{Notifiers: []Notifier{sig}})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(b.Context())
	errc := make(chan error, 1)
	go func() { errc <- d.Run(ctx) }()
	defer func() { cancel(); <-errc }()
	i := 0
	for b.Loop() {
		i++
		key := "bench:" + strconv.Itoa(i)
		if err := d.Notify(ctx, Notification{Key: key, RunID: "wait_bench", Message: nastyMessages[0]}); err != nil {
			b.Fatal(err)
		}
		for r := range sig.done {
			if r.err != nil {
				b.Fatal(r.err)
			}
			if r.key == key+":webhook" {
				break
			}
			dups++
		}
	}
	b.ReportMetric(float64(dups), "redeliveries")
}

// staleOutbox hands out a due-rows read only when released, so a test can
// make a read that began before an attempt was recorded return afterwards.
type staleOutbox struct {
	*store.DB
	armed   atomic.Bool
	reading chan struct{} // a held read has its rows
	release chan struct{}
	reads   atomic.Int32
}

func (s *staleOutbox) DueOutbox(ctx context.Context, now time.Time, limit int) ([]store.OutboxItem, error) {
	items, err := s.DB.DueOutbox(ctx, now, limit)
	s.reads.Add(1)
	if s.armed.CompareAndSwap(true, false) {
		s.reading <- struct{}{}
		<-s.release
	}
	return items, err
}

// countingNotifier counts attempts and blocks each until the gate opens.
type countingNotifier struct {
	gate    chan struct{}
	entered chan struct{}
	n       atomic.Int32
}

func (c *countingNotifier) Name() string { return "exec" }
func (c *countingNotifier) Notify(ctx context.Context, d Delivery) error {
	c.n.Add(1)
	select {
	case c.entered <- struct{}{}:
	default:
	}
	select {
	case <-c.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

func TestDispatcherSkipsStaleDueRead(t *testing.T) {
	ob := &staleOutbox{DB: openStore(t, pgtest.Path(t, "acu.db")), reading: make(chan struct{}), release: make(chan struct{})}
	cn := &countingNotifier{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	d, err := NewDispatcher(ob, DispatcherOptions{Notifiers: []Notifier{cn}, PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	stop := startDispatcher(t, d)
	if err := d.Notify(t.Context(), Notification{Key: "k", RunID: "wait_s", Message: "m"}); err != nil {
		t.Fatal(err)
	}
	<-cn.entered // delivery 1 in flight
	ob.armed.Store(true)
	d.Kick()
	<-ob.reading // a read holding the row as due, taken while it is in flight
	close(cn.gate)
	waitDelivered(t, ob.DB, "wait_s", "k:exec")
	close(ob.release) // the stale read returns after the attempt was recorded
	reads := ob.reads.Load()
	d.Kick()
	waitFor(t, "the next read", func() bool { return ob.reads.Load() > reads })
	stop() // waits for any delivery the stale read might have started
	if got := cn.n.Load(); got != 1 {
		t.Errorf("deliveries = %d, want 1: a stale read redelivered a recorded row", got)
	}
}
