package computer_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/computer"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/secret"
)

// localExec runs the loop's items in process on the real action service,
// as the daemon's routes do.
type localExec struct{ d computer.Desktop }

func (l localExec) Computer(ctx context.Context, vendor string, q api.ComputerQuery, item json.RawMessage) (api.ComputerResult, error) {
	return computer.Execute(ctx, l.d, vendor, q, item)
}
func (l localExec) ComputerTool(ctx context.Context, vendor string, q api.ComputerQuery) (api.ComputerResult, error) {
	return computer.Tool(ctx, l.d, vendor, q)
}
func (l localExec) ScreenshotWith(ctx context.Context, dpy string, o api.ShotOptions) (api.Shot, error) {
	s, err := l.d.Shot(ctx, dpy, o)
	if err != nil {
		return api.Shot{}, err
	}
	return api.Shot{Data: s.Data}, nil
}

// anthropicScript is a fake of the Messages API in its wire format: a
// screenshot tool_use, then a summary with no tool call. It counts the
// calls and checks that the second one hands back the tool_result.
func anthropicScript(t *testing.T, calls *atomic.Int32) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role    string            `json:"role"`
				Content []json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if r.URL.Path != "/v1/messages" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		n := calls.Add(1)
		content := `[{"type":"tool_use","id":"toolu_1","name":"computer","input":{"action":"screenshot"}}]`
		if n > 1 {
			last := req.Messages[len(req.Messages)-1]
			if len(last.Content) != 1 || !strings.Contains(string(last.Content[0]), `"tool_use_id":"toolu_1"`) {
				t.Errorf("call %d does not hand back the tool_result: %s", n, last.Content)
			}
			content = `[{"type":"text","text":"all done"}]`
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"no-price-model","content":` + content +
			`,"stop_reason":"end_turn","usage":{"input_tokens":100,"output_tokens":10}}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestLoopCostUnknown: a cost budget that a call's reply cannot be counted
// against (no price, no provider figure, not a local server) ends the loop
// after that call, with status budget, rather than running unbounded;
// without a budget the same calls run to the end, counted as unpriced.
func TestLoopCostUnknown(t *testing.T) {
	d, _, dpy := vendorDesktop(t)
	for _, tc := range []struct {
		name    string
		maxCost float64
		status  string
		calls   int32
	}{
		{"budget", 1, computer.StatusBudget, 1},
		{"no budget", 0, computer.StatusCompleted, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := anthropicScript(t, &calls)
			mc, err := llm.New(llm.Options{Provider: llm.Anthropic, BaseURL: srv.URL, APIKey: secret.String("sk-test"), Model: "no-price-model", MaxRetries: -1, Name: "test"})
			if err != nil {
				t.Fatal(err)
			}
			var turns []computer.TurnEvent
			res := computer.Run(t.Context(), computer.LoopOptions{Vendor: api.VendorAnthropic, Task: "look", Model: "no-price-model",
				Query: api.ComputerQuery{Display: dpy}, MaxCost: tc.maxCost, Exec: localExec{d}, LLM: mc,
				OnEvent: func(stream string, data any) {
					if ev, ok := data.(computer.TurnEvent); ok && stream == computer.StreamTurn {
						turns = append(turns, ev)
					}
				}})
			if res.Status != tc.status || calls.Load() != tc.calls || res.Unpriced != int(tc.calls) {
				t.Fatalf("Run = %+v after %d calls, want status %s after %d, all unpriced", res, calls.Load(), tc.status, tc.calls)
			}
			if tc.maxCost > 0 && !strings.Contains(res.Error, "cannot be kept") {
				t.Errorf("error %q, want it to say the budget cannot be kept", res.Error)
			}
			if len(turns) != int(tc.calls) || turns[0].Actions[0] != `computer {"action":"screenshot"}` {
				t.Errorf("turn events %+v, want one a call, showing the screenshot action", turns)
			}
		})
	}
}

// TestLoopCallTimeout: a model call that gets no reply is ended by the
// harness's per-call timeout (LoopOptions.CallTimeout, --call-timeout),
// not by the model client's longer one, and the loop's error names the
// limit.
func TestLoopCallTimeout(t *testing.T) {
	d, _, dpy := vendorDesktop(t)
	srv := llmtest.NewOpenAI(t, llmtest.Text("never sent")) // UI-TARS speaks the OpenAI wire
	srv.Fail(llmtest.Fault{Kind: llmtest.Hang, Times: -1})
	mc := srv.Client(t, func(o *llm.Options) { o.MaxRetries = -1; o.Timeout = 10 * time.Minute })
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	res := computer.Run(ctx, computer.LoopOptions{Vendor: api.VendorUITARS, Task: "look", Model: "llmtest-model",
		Query: api.ComputerQuery{Display: dpy}, CallTimeout: 300 * time.Millisecond, Exec: localExec{d}, LLM: mc})
	if res.Status != computer.StatusFailed || !strings.Contains(res.Error, "model call for turn 1: no reply within 300ms (the call timeout, --call-timeout)") {
		t.Fatalf("Run = %s: %q, want failed on the 300ms call timeout, named", res.Status, res.Error)
	}
	if srv.Calls() != 1 {
		t.Errorf("model calls = %d, want 1", srv.Calls())
	}
}
