package llm_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/llm/llmtest"
)

func apiError(t *testing.T, err error) *llm.APIError {
	t.Helper()
	var ae *llm.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v (%T) does not wrap *llm.APIError", err, err)
	}
	return ae
}

func TestFaults(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			t.Run("timeout retried then fails", func(t *testing.T) {
				c, srv := newClient(t, p, nil, func(o *llm.Options) { o.Timeout = 100 * time.Millisecond; o.MaxRetries = 1 })
				srv.Fail(llmtest.Fault{Kind: llmtest.Hang, Times: 2})
				_, err := c.Chat(t.Context(), ask("q"))
				if !errors.Is(err, llm.ErrAttemptTimeout) {
					t.Fatalf("Chat error = %v, want ErrAttemptTimeout", err)
				}
				if ae := apiError(t, err); ae.Status != 0 || !ae.Retryable {
					t.Errorf("APIError = %+v, want status 0, retryable", ae)
				}
				if !strings.Contains(err.Error(), "per-attempt timeout") {
					t.Errorf("error %q does not say it timed out", err)
				}
				if n := srv.Calls(); n != 2 {
					t.Errorf("calls = %d, want 2 (first attempt + 1 retry)", n)
				}
			})
			t.Run("timeout then success", func(t *testing.T) {
				// The retry must answer within the timeout too: keep it roomy.
				c, srv := newClient(t, p, nil, func(o *llm.Options) { o.Timeout = time.Second })
				srv.Fail(llmtest.Fault{Kind: llmtest.Hang})
				resp, err := c.Chat(t.Context(), ask("q"))
				if err != nil {
					t.Fatalf("Chat: %v", err)
				}
				if resp.Attempts != 2 || srv.Calls() != 2 {
					t.Errorf("attempts = %d, calls = %d, want 2, 2", resp.Attempts, srv.Calls())
				}
			})
			t.Run("429 Retry-After honoured", func(t *testing.T) {
				c, srv := newClient(t, p, nil, nil)
				srv.Fail(llmtest.Fault{Kind: llmtest.RateLimit, RetryAfter: "1"})
				resp, err := c.Chat(t.Context(), ask("q"))
				if err != nil {
					t.Fatalf("Chat: %v", err)
				}
				if resp.Attempts != 2 {
					t.Errorf("attempts = %d, want 2", resp.Attempts)
				}
				reqs := srv.Requests()
				if len(reqs) != 2 {
					t.Fatalf("requests = %d, want 2", len(reqs))
				}
				// RetryBase is 10 ms; only Retry-After explains a gap of a second.
				if gap := reqs[1].At.Sub(reqs[0].At); gap < time.Second {
					t.Errorf("retry came %v after the 429, want at least the 1s Retry-After", gap)
				}
			})
			t.Run("429 Retry-After beyond the deadline fails fast", func(t *testing.T) {
				c, srv := newClient(t, p, nil, nil)
				srv.Fail(llmtest.Fault{Kind: llmtest.RateLimit, RetryAfter: "20", Message: "slow down"})
				ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
				defer cancel()
				_, err := c.Chat(ctx, ask("q"))
				ae := apiError(t, err)
				if ae.Status != http.StatusTooManyRequests || ae.RetryAfter != 20*time.Second || ctx.Err() != nil {
					t.Errorf("Chat error = %v (RetryAfter %v, ctx %v), want the 429 with 20s at once", err, ae.RetryAfter, ctx.Err())
				}
				if !strings.Contains(err.Error(), "slow down") {
					t.Errorf("error %q lacks the provider's message", err)
				}
				if srv.Calls() != 1 {
					t.Errorf("calls = %d, want 1", srv.Calls())
				}
			})
			t.Run("500 retried", func(t *testing.T) {
				c, srv := newClient(t, p, nil, nil)
				srv.Fail(llmtest.Fault{Kind: llmtest.Status, Status: 500, Times: 2})
				resp, err := c.Chat(t.Context(), ask("q"))
				if err != nil {
					t.Fatalf("Chat: %v", err)
				}
				if resp.Attempts != 3 || srv.Calls() != 3 {
					t.Errorf("attempts = %d, calls = %d, want 3, 3", resp.Attempts, srv.Calls())
				}
			})
			t.Run("503 exhausts retries", func(t *testing.T) {
				c, srv := newClient(t, p, nil, func(o *llm.Options) { o.MaxRetries = 2 })
				srv.Fail(llmtest.Fault{Kind: llmtest.Status, Status: 503, Message: "overloaded", Times: -1})
				_, err := c.Chat(t.Context(), ask("q"))
				ae := apiError(t, err)
				if ae.Status != 503 || !ae.Retryable || !strings.Contains(err.Error(), "503 from "+string(p)+": overloaded") {
					t.Errorf("Chat error = %v, want 503 from %s: overloaded", err, p)
				}
				if srv.Calls() != 3 {
					t.Errorf("calls = %d, want 3", srv.Calls())
				}
			})
			t.Run("400 not retried", func(t *testing.T) {
				c, srv := newClient(t, p, nil, nil)
				srv.Fail(llmtest.Fault{Kind: llmtest.Status, Status: 400, Message: "image too large"})
				_, err := c.Chat(t.Context(), ask("q"))
				ae := apiError(t, err)
				if ae.Status != 400 || ae.Retryable || ae.Message != "image too large" {
					t.Errorf("APIError = %+v, want 400 image too large, not retryable", ae)
				}
				if srv.Calls() != 1 {
					t.Errorf("calls = %d, want 1", srv.Calls())
				}
				if h := c.Health(); h.ConsecutiveFailures != 0 {
					t.Errorf("a 400 counted towards the breaker: %+v", h)
				}
			})
			t.Run("bad key not retried", func(t *testing.T) {
				c, srv := newClient(t, p, nil, func(o *llm.Options) { o.KeyEnv = "TEST_API_KEY"; o.Service = "acme" })
				srv.SetKey("another-key")
				_, err := c.Chat(t.Context(), ask("q"))
				ae := apiError(t, err)
				wantStatus := http.StatusUnauthorized
				if p == llm.Gemini {
					wantStatus = http.StatusBadRequest // what Gemini really sends
				}
				if ae.Status != wantStatus || ae.Retryable || ae.Provider != "acme" {
					t.Errorf("APIError = %+v, want %d from acme, not retryable", ae, wantStatus)
				}
				if !strings.HasSuffix(err.Error(), ": check TEST_API_KEY") {
					t.Errorf("error %q does not say to check TEST_API_KEY", err)
				}
				if srv.Calls() != 1 {
					t.Errorf("calls = %d, want 1", srv.Calls())
				}
				if h := c.Health(); h.ConsecutiveFailures != 1 {
					t.Errorf("a refused key did not count towards the breaker: %+v", h)
				}
			})
			t.Run("malformed JSON", func(t *testing.T) {
				c, srv := newClient(t, p, nil, func(o *llm.Options) { o.MaxRetries = 1 })
				srv.Fail(llmtest.Fault{Kind: llmtest.Malformed, Times: 2})
				_, err := c.Chat(t.Context(), ask("q"))
				ae := apiError(t, err)
				if ae.Status != 200 || !strings.Contains(ae.Message, "malformed reply") {
					t.Errorf("APIError = %+v, want 200 malformed reply", ae)
				}
				if srv.Calls() != 2 {
					t.Errorf("calls = %d, want 2 (malformed replies are retried)", srv.Calls())
				}
			})
			t.Run("empty", func(t *testing.T) {
				c, srv := newClient(t, p, nil, func(o *llm.Options) { o.MaxRetries = -1 })
				srv.Fail(llmtest.Fault{Kind: llmtest.Empty})
				resp, err := c.Chat(t.Context(), ask("q"))
				if p == llm.Anthropic {
					// An empty content array is a valid, empty message.
					if err != nil || resp.Text != "" {
						t.Errorf("Chat = %q, %v, want an empty reply", resp.Text, err)
					}
					return
				}
				want := map[llm.Provider]string{llm.OpenAI: "no choices", llm.Gemini: "no candidates"}[p]
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("Chat error = %v, want one saying %q", err, want)
				}
			})
			t.Run("slow stream completes", func(t *testing.T) {
				c, srv := newClient(t, p, nil, nil)
				srv.Fail(llmtest.Fault{Kind: llmtest.Slow, Delay: time.Millisecond})
				resp, err := c.Chat(t.Context(), ask("q"))
				if err != nil || resp.Text != "YES" {
					t.Errorf("Chat = %q, %v, want YES", resp.Text, err)
				}
			})
			t.Run("slow stream hits the attempt timeout", func(t *testing.T) {
				// ~300 bytes at 20 ms each take seconds; the attempt has 200 ms.
				c, srv := newClient(t, p, nil, func(o *llm.Options) { o.Timeout = 200 * time.Millisecond; o.MaxRetries = -1 })
				srv.Fail(llmtest.Fault{Kind: llmtest.Slow, Delay: 20 * time.Millisecond})
				_, err := c.Chat(t.Context(), ask("q"))
				if !errors.Is(err, llm.ErrAttemptTimeout) {
					t.Errorf("Chat error = %v, want ErrAttemptTimeout", err)
				}
			})
		})
	}
}

// TestHangBlocksOnlyItsOwnCall: a call stuck on a hung endpoint does not delay
// another call on the same client.
func TestHangBlocksOnlyItsOwnCall(t *testing.T) {
	c, srv := newClient(t, llm.OpenAI, nil, func(o *llm.Options) { o.Timeout = time.Hour; o.MaxRetries = -1 })
	srv.Fail(llmtest.Fault{Kind: llmtest.Hang})
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var hungErr error
	wg.Go(func() { _, hungErr = c.Chat(ctx, ask("hang")) })
	for srv.Calls() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	resp, err := c.Chat(t.Context(), ask("second"))
	if err != nil || resp.Text != "YES" {
		t.Fatalf("second call = %q, %v while the first hangs, want YES", resp.Text, err)
	}
	cancel()
	wg.Wait()
	if !errors.Is(hungErr, context.Canceled) {
		t.Errorf("hung call error = %v, want context.Canceled", hungErr)
	}
	if h := c.Health(); h.ConsecutiveFailures != 0 || h.State != llm.StateClosed {
		t.Errorf("a caller's cancellation counted against the backend: %+v", h)
	}
}

// TestNetworkErrorRetried: a closed port is a network error, retried.
func TestNetworkErrorRetried(t *testing.T) {
	srv := llmtest.NewOpenAI(t, nil)
	opts := srv.Options()
	opts.BaseURL = "http://127.0.0.1:1/v1"
	opts.MaxRetries = 1
	c, err := llm.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Chat(t.Context(), ask("q"))
	ae := apiError(t, err)
	if ae.Status != 0 || !ae.Retryable || ae.Err == nil {
		t.Errorf("APIError = %+v, want a retryable network error", ae)
	}
	if !strings.Contains(err.Error(), "(2 attempts)") {
		t.Errorf("error %q does not say 2 attempts were made", err)
	}
}

// TestCallerDeadlineCounts: a caller's deadline that expires while the backend
// hangs counts against the backend; a cancellation does not.
func TestCallerDeadlineCounts(t *testing.T) {
	c, srv := newClient(t, llm.OpenAI, nil, func(o *llm.Options) { o.Timeout = time.Hour })
	srv.Fail(llmtest.Fault{Kind: llmtest.Hang})
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Chat(ctx, ask("q"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Chat error = %v, want context.DeadlineExceeded", err)
	}
	if h := c.Health(); h.ConsecutiveFailures != 1 {
		t.Errorf("Health = %+v, want 1 failure", h)
	}
	if srv.Calls() != 1 {
		t.Errorf("calls = %d, want 1 (no retry past the caller's deadline)", srv.Calls())
	}
}

func TestNoMessages(t *testing.T) {
	c, srv := newClient(t, llm.OpenAI, nil, nil)
	if _, err := c.Chat(t.Context(), llm.Request{System: "s"}); err == nil || !strings.Contains(err.Error(), "no messages") {
		t.Errorf("Chat without messages = %v, want a no-messages error", err)
	}
	if srv.Calls() != 0 {
		t.Error("a request went out")
	}
}

// TestConcurrentCalls: one client shared by many goroutines, some calls
// retried, accounts every call once.
func TestConcurrentCalls(t *testing.T) {
	c, srv := newClient(t, llm.Anthropic, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "ok", Usage: llm.Usage{InputTokens: 10, OutputTokens: 1}}
	}, func(o *llm.Options) { o.Model = "claude-haiku-4-5"; o.MaxRetries = 5 }) // 5 faults cannot exhaust a call
	srv.Fail(llmtest.Fault{Kind: llmtest.Status, Status: 500, Times: 5})
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			r := ask("q")
			r.RunID = []string{"a", "b"}[i%2]
			if _, err := c.Chat(t.Context(), r); err != nil {
				t.Errorf("Chat: %v", err)
			}
		})
	}
	wg.Wait()
	tot := c.Totals()
	if tot.Calls != 20 || tot.Failures != 0 || tot.InputTokens != 200 || tot.OutputTokens != 20 {
		t.Errorf("Totals = %+v, want 20 calls, 200 in, 20 out", tot)
	}
	if srv.Calls() != 25 {
		t.Errorf("server calls = %d, want 25 (20 + 5 retried)", srv.Calls())
	}
	if a, b := c.Cost("a"), c.Cost("b"); !near(a, b) || !near(a+b, c.Cost("")) {
		t.Errorf("Cost(a) = %v, Cost(b) = %v, total %v: want equal halves", a, b, c.Cost(""))
	}
}
