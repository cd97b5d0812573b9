package agent

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/runs"
)

// TestAgentActsThroughTheGate: the agent loop's actions pass the daemon's
// gate, so the deny-list holds for it: a click into a denied window is
// refused, reported in the turn's action errors, and never reaches the
// window; the audit names the agent's run.
func TestAgentActsThroughTheGate(t *testing.T) {
	w := window(t, gray)
	var (
		mu      sync.Mutex
		audited []gate.AuditEvent
	)
	g := gate.New(gate.Options{DefaultDisplay: dpy,
		Policy: gate.Policy{Deny: []*regexp.Regexp{regexp.MustCompile(regexp.QuoteMeta(t.Name()))}},
		Audit:  func(_ context.Context, ev gate.AuditEvent) { mu.Lock(); audited = append(audited, ev); mu.Unlock() }})
	t.Cleanup(g.Close)
	h := start(t, llmtest.Text(reply("done")), func(o *Options) {
		o.Boot, o.BootText, o.MaxTurns, o.Gate = true, reply("click it", click("click", 500, 500)), 1, g
	}, nil)
	h.waitState("the session to end", func(s State) bool { return s.Phase == PhaseStopped })
	time.Sleep(200 * time.Millisecond)
	if ps := presses(w.Events()); len(ps) > 0 {
		t.Errorf("the denied window got %d presses", len(ps))
	}
	list, err := h.reg.List(t.Context(), runs.ListFilter{Kind: RunKind})
	if err != nil || len(list) != 1 {
		t.Fatalf("agent runs = %v, %v", list, err)
	}
	evts, err := h.reg.Events(t.Context(), 0, runs.Filter{RunID: list[0].ID, Streams: []string{StreamTurn}}, 10)
	if err != nil || len(evts) == 0 {
		t.Fatalf("turn events: %v", err)
	}
	var te TurnEvent
	if err := json.Unmarshal(evts[0].Data, &te); err != nil {
		t.Fatal(err)
	}
	if len(te.ActionErrors) == 0 || !strings.Contains(strings.Join(te.ActionErrors, " "), "deny-list") {
		t.Errorf("action errors = %q, want the deny-list's refusal", te.ActionErrors)
	}
	var named bool
	mu.Lock()
	defer mu.Unlock()
	for _, ev := range audited {
		if ev.Refused != "" && ev.Caller.Engine == "agent" && ev.Caller.Run == list[0].ID {
			named = true
		}
	}
	if !named {
		t.Errorf("no refusal audited for the agent's run %s: %+v", list[0].ID, audited)
	}
}
