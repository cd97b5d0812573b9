package llm_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/llm/llmtest"
)

// fakeClock is the breaker's clock, moved by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestBreakerOpensAndRecovers(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	c, srv := newClient(t, llm.Gemini, nil, func(o *llm.Options) {
		o.MaxRetries = -1
		o.Breaker = llm.BreakerOptions{Failures: 3, CoolDown: 30 * time.Second}
		o.Now = clock.Now
	})
	srv.Fail(llmtest.Fault{Kind: llmtest.Status, Status: 502, Message: "bad gateway", Times: -1})
	for i := 1; i <= 3; i++ {
		if _, err := c.Chat(t.Context(), ask("q")); errors.Is(err, llm.ErrCircuitOpen) || err == nil {
			t.Fatalf("call %d: error = %v, want the 502", i, err)
		}
		wantState := llm.StateClosed
		if i == 3 {
			wantState = llm.StateOpen
		}
		if h := c.Health(); h.State != wantState || h.ConsecutiveFailures != i {
			t.Fatalf("after %d failures Health = %+v, want %s with %d failures", i, h, wantState, i)
		}
	}
	h := c.Health()
	if want := clock.Now().Add(30 * time.Second); !h.OpenUntil.Equal(want) {
		t.Errorf("OpenUntil = %v, want %v", h.OpenUntil, want)
	}
	if h.LastError == "" {
		t.Error("LastError is empty")
	}

	// Open: refused without touching the network.
	calls := srv.Calls()
	_, err := c.Chat(t.Context(), ask("q"))
	if !errors.Is(err, llm.ErrCircuitOpen) {
		t.Fatalf("Chat while open = %v, want ErrCircuitOpen", err)
	}
	if srv.Calls() != calls {
		t.Errorf("a call went out while the breaker was open")
	}

	// Half-open after the cool-down; a failed probe opens it again.
	clock.Advance(30 * time.Second)
	if h := c.Health(); h.State != llm.StateHalfOpen {
		t.Errorf("after the cool-down Health = %+v, want half-open", h)
	}
	if _, err := c.Chat(t.Context(), ask("q")); err == nil || errors.Is(err, llm.ErrCircuitOpen) {
		t.Fatalf("probe error = %v, want the 502", err)
	}
	if h := c.Health(); h.State != llm.StateOpen {
		t.Fatalf("after a failed probe Health = %+v, want open", h)
	}

	// The backend recovers: the next probe closes the breaker.
	srv.Clear()
	clock.Advance(31 * time.Second)
	resp, err := c.Chat(t.Context(), ask("q"))
	if err != nil || resp.Text != "YES" {
		t.Fatalf("probe after recovery = %q, %v, want YES", resp.Text, err)
	}
	if h := c.Health(); h.State != llm.StateClosed || h.ConsecutiveFailures != 0 || !h.OpenUntil.IsZero() {
		t.Errorf("after recovery Health = %+v, want closed with 0 failures", h)
	}
}

// TestBreakerSingleProbe: while half-open only one call goes out; the others
// are refused until it answers.
func TestBreakerSingleProbe(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1e9, 0)}
	c, srv := newClient(t, llm.OpenAI, nil, func(o *llm.Options) {
		o.MaxRetries = -1
		o.Timeout = time.Hour
		o.Breaker = llm.BreakerOptions{Failures: 1}
		o.Now = clock.Now
	})
	srv.Fail(llmtest.Fault{Kind: llmtest.Status, Status: 500})
	if _, err := c.Chat(t.Context(), ask("q")); err == nil {
		t.Fatal("want the 500")
	}
	clock.Advance(30 * time.Second) // default cool-down
	srv.Fail(llmtest.Fault{Kind: llmtest.Hang})
	var wg sync.WaitGroup
	var probeErr error
	wg.Go(func() { _, probeErr = c.Chat(t.Context(), ask("probe")) })
	for srv.Calls() < 2 {
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := c.Chat(t.Context(), ask("other")); !errors.Is(err, llm.ErrCircuitOpen) {
		t.Errorf("second call during the probe = %v, want ErrCircuitOpen", err)
	}
	// Release the hung probe by closing the server's connections: the probe
	// fails and the breaker opens again.
	srv.Close()
	wg.Wait()
	if probeErr == nil {
		t.Fatal("probe succeeded against a closed server")
	}
	if h := c.Health(); h.State != llm.StateOpen {
		t.Errorf("after the failed probe Health = %+v, want open", h)
	}
}

func TestBreakerDisabled(t *testing.T) {
	c, srv := newClient(t, llm.OpenAI, nil, func(o *llm.Options) {
		o.MaxRetries = -1
		o.Breaker = llm.BreakerOptions{Failures: -1}
	})
	srv.Fail(llmtest.Fault{Kind: llmtest.Status, Status: 500, Times: 10})
	for range 10 {
		if _, err := c.Chat(t.Context(), ask("q")); errors.Is(err, llm.ErrCircuitOpen) {
			t.Fatal("disabled breaker opened")
		}
	}
	if srv.Calls() != 10 {
		t.Errorf("calls = %d, want 10", srv.Calls())
	}
}
