package computer_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jezek/xgb/xtest"

	"github.com/acu-dev/acu/internal/actions"
	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/computer"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/secret"
	"github.com/acu-dev/acu/internal/session"
	"github.com/acu-dev/acu/internal/testx"
)

// TestLoopPausesForTheUser: the user touches the display (a second X
// client moves the pointer through XTEST, as a person's mouse would) while
// the model thinks; the action service refuses the model's click
// (user_active), and the loop pauses through the session harness,
// recording the pause and the resume on its run, then clicks once the user
// has been still. The model never sees the refusal.
func TestLoopPausesForTheUser(t *testing.T) {
	d, w, dpy, reg := vendorDesktopWith(t, actions.Policy{PauseOnUser: true, Quiet: 2 * time.Second})
	user, err := display.Open(t.Context(), dpy, display.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { user.Close() })
	// acu acts once first, so the gate follows the user's input on the
	// display from then on.
	if _, err := d.Act(t.Context(), api.ActRequest{Display: dpy, Actions: []api.Action{{Kind: api.ActMove, At: api.Pt(500, 500)}}}); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if r.URL.Path != "/v1/messages" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(rw, "bad request", http.StatusBadRequest)
			return
		}
		content := `[{"type":"tool_use","id":"toolu_1","name":"computer","input":{"action":"left_click","coordinate":[640,400]}}]`
		if calls.Add(1) == 1 {
			// The user moves the mouse while the model thinks.
			if err := xtest.FakeInputChecked(user.X, 6, 0, 0, user.Screen.Root, 100, 120, 0).Check(); err != nil {
				t.Errorf("the user's motion: %v", err)
			}
		} else {
			if last := string(req.Messages[len(req.Messages)-1].Content); strings.Contains(last, "user_active") || strings.Contains(last, "is_error") {
				t.Errorf("the model saw the refusal: %s", last)
			}
			content = `[{"type":"text","text":"clicked"}]`
		}
		rw.Header().Set("Content-Type", "application/json")
		_, _ = rw.Write([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"m","content":` + content +
			`,"stop_reason":"end_turn","usage":{"input_tokens":100,"output_tokens":10}}`))
	}))
	t.Cleanup(srv.Close)
	mc, err := llm.New(llm.Options{Provider: llm.Anthropic, BaseURL: srv.URL, APIKey: secret.String("sk-test"), Model: "m", MaxRetries: -1, Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var turns []computer.TurnEvent
	res := computer.Run(t.Context(), computer.LoopOptions{Vendor: api.VendorAnthropic, Task: "click the middle", Model: "m",
		Query: api.ComputerQuery{Display: dpy}, UserWait: time.Minute, Runs: reg, Exec: localExec{d}, LLM: mc,
		OnEvent: func(stream string, data any) {
			if ev, ok := data.(computer.TurnEvent); ok {
				turns = append(turns, ev)
			}
		}})
	if res.Status != computer.StatusCompleted || calls.Load() != 2 {
		t.Fatalf("Run = %+v after %d model calls, want completed after 2", res, calls.Load())
	}
	presses := 0
	for _, e := range w.Events() {
		if e.Kind == testx.ButtonPress && e.Button == 1 {
			presses++
		}
	}
	if presses != 1 {
		t.Errorf("the window got %d clicks, want the model's one, after the pause", presses)
	}
	if len(turns) == 0 || turns[0].Status != "paused" {
		t.Errorf("turn events %+v, want the pause first", turns)
	}
	list, err := reg.List(t.Context(), runs.ListFilter{Kind: computer.Kind, Limit: 1})
	if err != nil || len(list) != 1 {
		t.Fatalf("computer runs = %v, %v", list, err)
	}
	evs, err := reg.Events(t.Context(), 0, runs.Filter{RunID: list[0].ID, Streams: []string{session.StreamIntervention}}, 10)
	if err != nil {
		t.Fatal(err)
	}
	var phases []computer.InterventionEvent
	for _, e := range evs {
		var iv computer.InterventionEvent
		if err := json.Unmarshal(e.Data, &iv); err != nil {
			t.Fatal(err)
		}
		phases = append(phases, iv)
	}
	if len(phases) != 2 || phases[0].Phase != "paused" || phases[0].Turn != 1 || !strings.Contains(phases[0].Detail, "the user") ||
		phases[1].Phase != "resumed" || phases[1].PausedMs <= 0 {
		t.Errorf("interventions = %+v, want paused (naming the user) and resumed after a pause, at turn 1", phases)
	}
}
