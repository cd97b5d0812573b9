package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/dialect"
	"github.com/acu-dev/acu/internal/llm/llmtest"
)

// pngSize decodes a base64 PNG (or data URL) and returns its size.
func pngSize(t *testing.T, s string) (int, int) {
	t.Helper()
	if _, after, ok := strings.Cut(s, ";base64,"); ok {
		s = after
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Errorf("screenshot is not base64: %v", err)
		return 0, 0
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Errorf("screenshot is not a PNG: %v", err)
		return 0, 0
	}
	return img.Bounds().Dx(), img.Bounds().Dy()
}

// fakeVendor is an httptest server for one vendor's API whose answers
// are scripted from the requests; it records problems with them.
type fakeVendor struct {
	*httptest.Server
	mu       sync.Mutex
	problems []string
	calls    int
}

func (f *fakeVendor) problem(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.problems = append(f.problems, fmt.Sprintf(format, args...))
}

func (f *fakeVendor) check(t *testing.T) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.problems {
		t.Error(p)
	}
}

// anthropicFake speaks the Messages API with the computer tool: it asks
// for a screenshot, checks it is the declared size, types the form's two
// fields with the keyboard, calls smart_wait once and ends.
func anthropicFake(t *testing.T, name, city, ok [2]int) *fakeVendor {
	f := &fakeVendor{}
	script := []map[string]any{
		{"action": "screenshot"},
		{"action": "left_click", "coordinate": name},
		{"action": "type", "text": "Ada Lovelace"},
		{"action": "left_click", "coordinate": city},
		{"action": "type", "text": "London"},
		{"name": "smart_wait", "condition": "the form is still open", "timeout_s": 5},
		{"action": "left_click", "coordinate": ok},
	}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/messages" || r.Header.Get("x-api-key") != llmtest.Key || r.Header.Get("anthropic-version") == "" ||
			r.Header.Get("anthropic-beta") != "computer-use-2025-01-24" {
			f.problem("anthropic: %s with headers %v", r.URL.Path, r.Header)
			http.Error(w, `{"type":"error","error":{"type":"authentication_error","message":"bad request"}}`, http.StatusUnauthorized)
			return
		}
		var req struct {
			Model    string `json:"model"`
			Tools    []map[string]any
			Messages []struct {
				Role    string            `json:"role"`
				Content []json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil {
			f.problem("anthropic request: %v", err)
		}
		f.mu.Lock()
		f.calls++
		f.mu.Unlock()
		tool := req.Tools[0]
		dw, dh := int(tool["display_width_px"].(float64)), int(tool["display_height_px"].(float64))
		if tool["type"] != "computer_20250124" || tool["name"] != "computer" || dw > 1024 || dh > 768 {
			f.problem("anthropic tool declaration %v", tool)
		}
		turn := 0
		for _, m := range req.Messages {
			if m.Role == "assistant" {
				turn++
			}
		}
		if turn > 0 { // the last user message holds the previous call's tool_result
			last := req.Messages[len(req.Messages)-1]
			var tr struct {
				Type      string `json:"type"`
				ToolUseID string `json:"tool_use_id"`
				IsError   bool   `json:"is_error"`
				Content   []struct {
					Type   string `json:"type"`
					Text   string `json:"text"`
					Source struct {
						Type      string `json:"type"`
						MediaType string `json:"media_type"`
						Data      string `json:"data"`
					} `json:"source"`
				} `json:"content"`
			}
			_ = json.Unmarshal(last.Content[0], &tr)
			if tr.Type != "tool_result" || tr.ToolUseID != fmt.Sprintf("toolu_%d", turn) || tr.IsError {
				f.problem("anthropic turn %d: tool_result %+v", turn, tr)
			}
			prev := script[turn-1]
			if prev["name"] == "smart_wait" {
				if len(tr.Content) != 1 || !strings.Contains(tr.Content[0].Text, "smart_wait") {
					f.problem("smart_wait result %+v", tr.Content)
				}
			} else if len(tr.Content) == 0 || tr.Content[len(tr.Content)-1].Type != "image" || tr.Content[len(tr.Content)-1].Source.MediaType != "image/png" {
				f.problem("anthropic turn %d: no screenshot in %+v", turn, tr)
			} else if w, h := pngSize(t, tr.Content[len(tr.Content)-1].Source.Data); w != dw || h != dh {
				f.problem("anthropic screenshot %dx%d, declared %dx%d", w, h, dw, dh)
			}
		}
		var content []any
		stop := "tool_use"
		if turn < len(script) {
			step := script[turn]
			name := "computer"
			input := map[string]any{}
			for k, v := range step {
				if k == "name" {
					name = v.(string)
				} else {
					input[k] = v
				}
			}
			content = []any{map[string]any{"type": "text", "text": "Next step."},
				map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d", turn+1), "name": name, "input": input}}
		} else {
			content, stop = []any{map[string]any{"type": "text", "text": "The form is submitted."}}, "end_turn"
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": fmt.Sprintf("msg_%d", turn), "type": "message", "role": "assistant", "model": req.Model,
			"content": content, "stop_reason": stop, "usage": map[string]int{"input_tokens": 1500, "output_tokens": 40}})
	}))
	t.Cleanup(f.Close)
	return f
}

// openaiFake speaks the Responses API with the computer_use_preview tool,
// chaining turns by previous_response_id; the typing call carries a
// pending safety check, which must come back acknowledged.
func openaiFake(t *testing.T, name, city, ok [2]int) *fakeVendor {
	f := &fakeVendor{}
	script := []map[string]any{
		{"type": "screenshot"},
		{"type": "click", "button": "left", "x": name[0], "y": name[1]},
		{"type": "type", "text": "Ada Lovelace"},
		{"type": "double_click", "x": city[0], "y": city[1]},
		{"type": "type", "text": "London"},
		{"type": "click", "button": "left", "x": ok[0], "y": ok[1]},
	}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/responses" || r.Header.Get("Authorization") != "Bearer "+llmtest.Key {
			f.problem("openai: %s with %v", r.URL.Path, r.Header)
			http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusUnauthorized)
			return
		}
		var req struct {
			Model string           `json:"model"`
			Tools []map[string]any `json:"tools"`
			Input []map[string]any `json:"input"`
			Prev  string           `json:"previous_response_id"`
			Trunc string           `json:"truncation"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil {
			f.problem("openai request: %v", err)
		}
		tool := req.Tools[0]
		dw, dh := int(tool["display_width"].(float64)), int(tool["display_height"].(float64))
		if tool["type"] != "computer_use_preview" || tool["environment"] != "linux" || req.Trunc != "auto" {
			f.problem("openai tool %v truncation %q", tool, req.Trunc)
		}
		turn := 0
		if req.Prev != "" {
			fmt.Sscanf(req.Prev, "resp_%d", &turn)
			turn++
			out := req.Input[0]
			img, _ := out["output"].(map[string]any)
			if out["type"] != "computer_call_output" || out["call_id"] != fmt.Sprintf("call_%d", turn) || img["type"] != "computer_screenshot" {
				f.problem("openai turn %d: input %v", turn, out["type"])
			} else if w, h := pngSize(t, img["image_url"].(string)); w != dw || h != dh {
				f.problem("openai screenshot %dx%d, declared %dx%d", w, h, dw, dh)
			}
			acked, _ := out["acknowledged_safety_checks"].([]any)
			if (turn == 3) != (len(acked) == 1) {
				f.problem("openai turn %d: acknowledged %v", turn, acked)
			}
		}
		var output []any
		if turn < len(script) {
			call := map[string]any{"type": "computer_call", "id": fmt.Sprintf("cu_%d", turn+1), "call_id": fmt.Sprintf("call_%d", turn+1),
				"action": script[turn], "pending_safety_checks": []any{}, "status": "completed"}
			if turn == 2 {
				call["pending_safety_checks"] = []any{map[string]string{"id": "cu_sc_1", "code": "malicious_instructions", "message": "Check the screen."}}
			}
			output = []any{map[string]any{"type": "reasoning", "id": "rs_1", "summary": []any{}}, call}
		} else {
			output = []any{map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": "The form is submitted.", "annotations": []any{}}}}}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": fmt.Sprintf("resp_%d", turn), "object": "response", "status": "completed", "model": req.Model,
			"output": output, "usage": map[string]int{"input_tokens": 1200, "output_tokens": 30, "total_tokens": 1230}})
	}))
	t.Cleanup(f.Close)
	return f
}

// formFields returns the screen centres of a zenity form's two entries,
// top first, and of its OK button, from the daemon's element map.
func formFields(t *testing.T, c *api.Client, title string) [][2]int {
	t.Helper()
	for range 50 {
		m, err := c.Elements(t.Context(), api.ElementsQuery{Window: title})
		if err != nil {
			t.Fatal(err)
		}
		var out [][2]int
		var ok *[2]int
		for _, e := range m.Elements {
			if e.Type == "input" && e.Editable && e.Showing {
				out = append(out, e.Center)
			}
			if e.Type == "button" && e.Text == "OK" {
				ok = &e.Center
			}
		}
		if len(out) == 2 && ok != nil {
			if out[0][1] > out[1][1] {
				out[0], out[1] = out[1], out[0]
			}
			return append(out, *ok)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no two entries in the element map of %q", title)
	return nil
}

// TestComputerBudgets: the step and cost budgets stop the loop (exit 1,
// status budget); a cost budget for a model without a price refuses to
// start.
func TestComputerBudgets(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	env = append(env, "ACU_COMPUTER_API_KEY="+llmtest.Key, "ACU_LOG_LEVEL=warn")
	startDaemon(t, env, dataDir, port)
	f := anthropicFake(t, [2]int{1, 1}, [2]int{2, 2}, [2]int{3, 3})
	for _, tc := range []struct {
		name  string
		flags []string
		code  int
		calls int
	}{
		{"steps", []string{"--max-steps", "2"}, 1, 2},
		{"cost", []string{"--max-cost", "0.004"}, 1, 1}, // 1500+40 tokens at $3/$15 a million: $0.0051 a turn
		{"unpriced", []string{"--max-cost", "1", "--model", "no-price-model"}, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.mu.Lock()
			f.calls = 0
			f.mu.Unlock()
			args := append([]string{"computer", "-json", "--provider", "anthropic", "--base-url", f.URL}, tc.flags...)
			stdout, stderr, code := acu(t, env, append(args, "look at the screen")...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			if f.calls != tc.calls {
				t.Errorf("%d model calls, want %d", f.calls, tc.calls)
			}
			if tc.code == 1 && !strings.Contains(stdout, `"status":"budget"`) {
				t.Errorf("no budget result:\n%s", stdout)
			}
		})
	}
}

// TestComputerCLI runs `acu computer` for each provider against a fake of
// its API on a real zenity form: zenity's own output proves the form was
// filled and submitted.
func TestComputerCLI(t *testing.T) {
	dpy := startDisplay(t)
	session := atspitest.Start(t, dpy)
	env, dataDir, port := newEnv(t, dpy)
	env = append(env, "DBUS_SESSION_BUS_ADDRESS="+session.SessionBus, "ACU_COMPUTER_API_KEY="+llmtest.Key, "ACU_LOG_LEVEL=warn",
		"ACU_ACT_USER_QUIET=200ms")
	d := startDaemon(t, env, dataDir, port)
	for _, provider := range []string{"anthropic", "openai", "uitars"} {
		t.Run(provider, func(t *testing.T) {
			title := "Acu Computer " + provider
			app := zenityForm(t, dpy, session, title)
			// Where the fields are, in the model's picture: what a model
			// would read off the screenshot.
			tool, err := d.client.ComputerTool(t.Context(), provider, api.ComputerQuery{Limit: "1024x768"})
			if err != nil {
				t.Fatal(err)
			}
			fields := formFields(t, d.client, title)
			img, screen := dialect.Size{W: tool.Image[0], H: tool.Image[1]}, dialect.Size{W: tool.Screen[0], H: tool.Screen[1]}
			var name, city, ok [2]int
			name[0], name[1] = dialect.FromScreen(fields[0][0], fields[0][1], img, screen)
			city[0], city[1] = dialect.FromScreen(fields[1][0], fields[1][1], img, screen)
			ok[0], ok[1] = dialect.FromScreen(fields[2][0], fields[2][1], img, screen)
			rel := func(p [2]int) string { return fmt.Sprintf("(%d,%d)", p[0]*1000/screen.W, p[1]*1000/screen.H) }
			var f *fakeVendor
			args := []string{"computer", "-json", "--provider", provider, "--limit", "1024x768"}
			switch provider {
			case "anthropic":
				f = anthropicFake(t, name, city, ok)
				args = append(args, "--base-url", f.URL)
			case "openai":
				f = openaiFake(t, name, city, ok)
				args = append(args, "--base-url", f.URL+"/v1", "--acknowledge-safety-checks")
			case "uitars":
				turns := []string{
					"Thought: Click the name field.\nAction: click(start_box='" + rel(fields[0]) + "')",
					"Thought: Type the name.\nAction: type(content='Ada Lovelace')",
					"Thought: Go to the city.\nAction: click(start_box='<|box_start|>" + rel(fields[1]) + "<|box_end|>')",
					"Thought: Type the city.\nAction: type(content='London')",
					"Thought: Submit.\nAction: click(start_box='" + rel(fields[2]) + "')",
					"Thought: Done.\nAction: finished(content='Form submitted')",
				}
				var mu sync.Mutex
				n := 0
				srv := llmtest.NewOpenAI(t, func(r llmtest.Request) llmtest.Reply {
					mu.Lock()
					defer mu.Unlock()
					last := r.Messages[len(r.Messages)-1]
					if len(last.Images) != 1 || last.Images[0].Image == nil || last.Images[0].Image.Bounds().Dx() > 1024 {
						t.Errorf("uitars turn %d: last message has %d images", n, len(last.Images))
					}
					if !strings.Contains(r.Messages[0].Text, "## Action Space") {
						t.Errorf("uitars: no UI-TARS prompt")
					}
					n++
					return llmtest.Reply{Text: turns[min(n, len(turns))-1]}
				})
				args = append(args, "--base-url", srv.URL)
			}
			args = append(args, "Enter Ada Lovelace as the name and London as the city, then press OK")
			stdout, stderr, code := acu(t, env, args...)
			if f != nil {
				f.check(t)
			}
			if code != 0 {
				t.Fatalf("acu computer exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			out, err := app.Wait(ctx)
			if err != nil || out != "Ada Lovelace|London\n" {
				t.Errorf("zenity printed %q (%v), want the form's values\nstdout:\n%s", out, err, stdout)
			}
			var turns, results int
			var last struct {
				RunID  string `json:"runId"`
				Stream string `json:"stream"`
				Data   struct {
					Status    string  `json:"status"`
					Turns     int     `json:"turns"`
					TokensIn  int     `json:"tokens_in"`
					ModelMs   float64 `json:"model_ms"`
					ExecMs    float64 `json:"exec_ms"`
					SessionID string  `json:"session_run"`
				} `json:"data"`
			}
			for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
				if err := json.Unmarshal([]byte(line), &last); err != nil {
					t.Fatalf("not a JSON line: %q", line)
				}
				switch last.Stream {
				case "turn":
					turns++
				case "result":
					results++
				}
			}
			if results != 1 || last.Data.Status != "completed" || last.Data.TokensIn == 0 || turns < 4 {
				t.Errorf("events: %d turns, %d results, last %+v", turns, results, last)
			}
			// The run is recorded, one event per turn.
			evs, err := d.client.EventsAfter(t.Context(), api.EventQuery{RunID: last.RunID, Streams: []string{"turn"}, Limit: 1000})
			if err != nil || len(evs.Events) != turns {
				t.Errorf("run %s has %d turn events (%v), want %d", last.RunID, len(evs.Events), err, turns)
			}
			run, err := d.client.Run(t.Context(), last.RunID)
			if err != nil || run.Kind != "computer" || run.Status != "completed" {
				t.Errorf("run %s = %+v (%v), want a completed computer run", last.RunID, run, err)
			}
		})
	}
}
