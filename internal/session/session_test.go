package session_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/leakcheck"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/session"
	"github.com/acu-dev/acu/internal/store"
)

func TestMain(m *testing.M) { leakcheck.Main(m, "acu-dev/acu/") }

// TestMeter: the step budget ends the turn after the last allowed one; the
// cost budget ends the session once spent; a call of unknown cost under a
// cost budget ends it (the budget cannot be kept) and without one only
// counts as unpriced.
func TestMeter(t *testing.T) {
	m := session.Meter{Budget: session.Budget{MaxSteps: 2}}
	for want := 1; want <= 2; want++ {
		if n, err := m.Step(); n != want || err != nil {
			t.Fatalf("Step() = %d, %v, want %d, nil", n, err, want)
		}
	}
	if _, err := m.Step(); !session.IsLimit(err) || err.Error() != "turn limit of 2 reached" {
		t.Errorf("third Step() = %v, want the turn limit of 2", err)
	}

	m = session.Meter{Budget: session.Budget{MaxCost: 0.01}}
	reply := llm.Response{Model: "m", CostUSD: 0.004, CostKnown: true, Usage: llm.Usage{InputTokens: 100, OutputTokens: 10}, Latency: 3 * time.Millisecond}
	for i := range 2 {
		if err := m.Add(reply); err != nil {
			t.Fatalf("Add #%d = %v, want nil ($%.3f of $0.01)", i+1, err, m.CostUSD)
		}
	}
	err := m.Add(reply)
	var le *session.LimitError
	if !errors.As(err, &le) || le.Kind != session.LimitCost || err.Error() != "cost limit of $0.0100 reached ($0.0120 spent)" {
		t.Errorf("Add over the budget = %v, want the cost limit", err)
	}
	if m.TokensIn != 300 || m.TokensOut != 30 || m.ModelMs != 9 {
		t.Errorf("totals %d in, %d out, %v ms, want 300, 30, 9", m.TokensIn, m.TokensOut, m.ModelMs)
	}

	m = session.Meter{Budget: session.Budget{MaxCost: 1}}
	err = m.Add(llm.Response{Model: "no-price"})
	if !errors.As(err, &le) || le.Kind != session.LimitUnpriced || le.Model != "no-price" || m.Unpriced != 1 {
		t.Errorf("an unpriced call under a cost budget = %v (unpriced %d), want LimitUnpriced naming the model", err, m.Unpriced)
	}
	m = session.Meter{}
	if err := m.Add(llm.Response{Model: "no-price"}); err != nil || m.Unpriced != 1 {
		t.Errorf("an unpriced call without a budget = %v (unpriced %d), want nil, counted", err, m.Unpriced)
	}
}

// TestCheckPriced: a cost budget refuses a model whose cost cannot be
// known before the first call; a priced model, or no budget, passes.
func TestCheckPriced(t *testing.T) {
	c, err := llm.New(llm.Options{Provider: llm.OpenAI, BaseURL: "https://models.example.com/v1", Model: "no-price-model", Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := (session.Budget{MaxCost: 1}).CheckPriced(c, ""); !errors.Is(err, llm.ErrUnpriced) {
		t.Errorf("CheckPriced with a budget on an unpriced model = %v, want ErrUnpriced", err)
	}
	if err := (session.Budget{}).CheckPriced(c, ""); err != nil {
		t.Errorf("CheckPriced without a budget = %v, want nil", err)
	}
	priced, err := llm.New(llm.Options{Provider: llm.OpenAI, BaseURL: "https://models.example.com/v1", Model: "p", Name: "test",
		Prices: llm.PriceTable{"p": {InputPerMTok: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := (session.Budget{MaxCost: 1}).CheckPriced(priced, ""); err != nil {
		t.Errorf("CheckPriced on a priced model = %v, want nil", err)
	}
}

// TestCall: the per-call timeout ends a call with a TimeoutError naming
// it; the session's own end is not reported as a timeout.
func TestCall(t *testing.T) {
	hang := func(ctx context.Context) (int, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	}
	_, err := session.Call(t.Context(), 20*time.Millisecond, hang)
	var te *session.TimeoutError
	if !errors.As(err, &te) || te.After != 20*time.Millisecond || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a hanging call = %v, want a TimeoutError after 20ms", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := session.Call(ctx, time.Minute, hang); errors.As(err, &te) || !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled session's call = %v, want context.Canceled, no timeout", err)
	}
	if v, err := session.Call(t.Context(), 0, func(context.Context) (int, error) { return 7, nil }); v != 7 || err != nil {
		t.Errorf("Call without a timeout = %d, %v", v, err)
	}
}

// TestHold: the wait lasts while the display is held and Quiet after the
// human was last seen; a stop control ends it.
func TestHold(t *testing.T) {
	var polls atomic.Int32
	h := session.Hold[string]{Poll: 5 * time.Millisecond, Quiet: 50 * time.Millisecond,
		Held: func(context.Context) bool { return polls.Add(1) <= 4 }}
	d, err := h.Wait(t.Context())
	if err != nil || polls.Load() < 5 || d < 50*time.Millisecond {
		t.Errorf("Wait = %v, %v after %d polls, want nil after the human let go and %v of quiet", d, err, polls.Load(), h.Quiet)
	}

	control := make(chan string, 2)
	control <- "pause"
	control <- "stop"
	var applied []string
	h = session.Hold[string]{Poll: 5 * time.Millisecond, Held: func(context.Context) bool { return true }, Control: control,
		Apply: func(c string) bool { applied = append(applied, c); return c == "stop" }}
	if _, err := h.Wait(t.Context()); !errors.Is(err, session.ErrStopped) || len(applied) != 2 {
		t.Errorf("Wait with a stop control = %v (applied %v), want ErrStopped after both controls", err, applied)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := (session.Hold[string]{Held: func(context.Context) bool { return true }}).Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait after the session ended = %v, want context.Canceled", err)
	}
}

// TestRun: a session's run records its events (after its context ended,
// too), shows them to OnEvent, ends once, and names the engine and run in
// the gate's caller.
func TestRun(t *testing.T) {
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "acu.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reg := runs.New(db, runs.Options{})
	r, err := session.Start(t.Context(), reg, "agent", runs.StartOptions{Kind: "agent"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var shown []string
	r.OnEvent = func(stream string, _ any) { shown = append(shown, stream) }
	ctx, cancel := context.WithCancel(t.Context())
	r.Emit(ctx, "turn", map[string]int{"turn": 1})
	cancel()
	r.Emit(ctx, session.StreamError, map[string]string{"error": "x"})
	r.End(ctx, runs.StatusCompleted, "", map[string]int{"turns": 1})
	r.End(ctx, runs.StatusError, "again", nil) // ended: left as it is
	r.Emit(ctx, "turn", map[string]int{"turn": 2})

	run, err := reg.Get(t.Context(), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != runs.StatusCompleted {
		t.Errorf("run status %q, want completed", run.Status)
	}
	evs, err := reg.Events(t.Context(), 0, runs.Filter{RunID: r.ID()}, 100)
	if err != nil {
		t.Fatal(err)
	}
	var streams []string
	for _, e := range evs {
		if e.Stream == "turn" || e.Stream == session.StreamError {
			streams = append(streams, e.Stream)
		}
	}
	if len(streams) != 2 || streams[0] != "turn" || streams[1] != session.StreamError {
		t.Errorf("recorded streams %v, want [turn error]", streams)
	}
	if len(shown) != 3 {
		t.Errorf("OnEvent saw %v, want every Emit (3)", shown)
	}
	who := gate.CallerOf(r.Acting(gate.WithCaller(t.Context(), gate.Caller{Token: "tok"})))
	if who.Engine != "agent" || who.Run != r.ID() || who.Token != "tok" {
		t.Errorf("Acting's caller = %+v, want engine agent, run %s, the token kept", who, r.ID())
	}
	var none *session.Run
	none.Emit(t.Context(), "turn", nil) // a session without a run records nothing
	none.End(t.Context(), runs.StatusCompleted, "", nil)
}

// TestUserFirst: a refused effect pauses the loop (paused is told once)
// until the refusal's quiet period has passed, then runs again; a human
// who stays past the limit ends it with a HeldError; an effect that is not
// refused runs once, with no pause.
func TestUserFirst(t *testing.T) {
	refused := func(v string) (session.Refusal, bool) {
		return session.Refusal{Wait: 30 * time.Millisecond, Detail: "pointer moved"}, v == "refused"
	}
	var runs, pauses int
	act := func(free int) func(context.Context) (string, error) {
		return func(context.Context) (string, error) {
			runs++
			if runs <= free {
				return "refused", nil
			}
			return "ran", nil
		}
	}
	v, waited, err := session.UserFirst(t.Context(), time.Minute, act(2), refused, func(r session.Refusal) {
		pauses++
		if r.Detail != "pointer moved" {
			t.Errorf("paused with %+v", r)
		}
	})
	if v != "ran" || err != nil || runs != 3 || pauses != 1 || waited < 2*30*time.Millisecond {
		t.Errorf("UserFirst = %q, %v after %d runs, %d pauses, waited %v; want ran after 3 runs, 1 pause, >= 60ms", v, err, runs, pauses, waited)
	}

	runs, pauses = 0, 0
	v, waited, err = session.UserFirst(t.Context(), time.Minute, act(0), refused, func(session.Refusal) { pauses++ })
	if v != "ran" || err != nil || runs != 1 || pauses != 0 || waited != 0 {
		t.Errorf("UserFirst of a free display = %q, %v, %d runs, %d pauses, waited %v", v, err, runs, pauses, waited)
	}

	runs = 0
	_, _, err = session.UserFirst(t.Context(), 100*time.Millisecond, act(1000), refused, nil)
	var he *session.HeldError
	if !errors.As(err, &he) || he.After != 100*time.Millisecond || !strings.Contains(err.Error(), "over 100ms") {
		t.Errorf("UserFirst past the limit = %v, want a HeldError naming 100ms", err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	runs = 0
	if _, _, err := session.UserFirst(ctx, time.Minute, act(1000), refused, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("UserFirst after the session ended = %v, want context.Canceled", err)
	}
}
