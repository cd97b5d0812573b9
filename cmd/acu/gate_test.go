package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/testx"
)

// call sends a JSON request with the daemon's token and returns the
// status and the error code of the answer, if any.
func call(t *testing.T, d *daemonProc, method, path string, body any) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, d.client.BaseURL()+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tokenOf(t, d.dataDir))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	b, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(b, &e)
	return resp.StatusCode, e.Error.Code
}

func wantRefused(t *testing.T, what string, status int, code string, wantStatus int, wantCode string) {
	t.Helper()
	if status != wantStatus || code != wantCode {
		t.Errorf("%s: %d %s, want %d %s", what, status, code, wantStatus, wantCode)
	}
}

// TestActOffStopsEveryEffect: with ACU_ACT_ENABLED=false the daemon
// refuses every effect on every route, not only POST /v1/actions:
// launches, clipboard writes, window operations and take-over input.
func TestActOffStopsEveryEffect(t *testing.T) {
	dpy := startDisplay(t)
	w := testx.NewWindow(t, dpy, testx.Spec{Title: "target", X: 20, Y: 20, W: 300, H: 200})
	env, dataDir, port := newEnv(t, dpy)
	srv := llmtest.NewOpenAI(t, taskModel) // a task model: tasks would be on
	d := startDaemon(t, append(env, "ACU_ACT_ENABLED=false", "ACU_TASK_BASE_URL="+srv.URL, "ACU_TASK_API_KEY="+llmtest.Key), dataDir, port)

	marker := filepath.Join(t.TempDir(), "launched")
	st, code := call(t, d, "POST", "/v1/apps/launch", map[string]any{"argv": []string{"touch", marker}})
	wantRefused(t, "launch", st, code, 403, "act_disabled")
	st, code = call(t, d, "PUT", "/v1/clipboard", map[string]any{"text": "from acu"})
	wantRefused(t, "clipboard write", st, code, 403, "act_disabled")
	st, code = call(t, d, "POST", fmt.Sprintf("/v1/windows/0x%x/close", w.ID()), map[string]any{"kill": true})
	wantRefused(t, "window close", st, code, 403, "act_disabled")
	st, code = call(t, d, "POST", fmt.Sprintf("/v1/windows/0x%x/move", w.ID()), map[string]any{"x": 200, "y": 200})
	wantRefused(t, "window move", st, code, 403, "act_disabled")
	if st, _ := call(t, d, "POST", "/v1/live/takeover", map[string]any{}); st != 200 {
		t.Fatalf("take-over: %d", st)
	}
	st, code = call(t, d, "POST", "/v1/live/input", map[string]any{"events": []map[string]any{{"type": "down", "x": 100, "y": 100, "button": 1}}})
	wantRefused(t, "take-over input", st, code, 403, "act_disabled")
	st, code = call(t, d, "POST", "/v1/actions", map[string]any{"actions": []map[string]any{{"kind": "click", "at": map[string]int{"x": 100, "y": 100}}}})
	wantRefused(t, "actions", st, code, 403, "act_disabled")

	// The task engine acts only through the gate: it does not start.
	st, _ = call(t, d, "POST", "/v1/tasks", map[string]any{"task": "click OK"})
	if st != 503 || !strings.Contains(d.log.String(), "acting is turned off") {
		t.Errorf("POST /v1/tasks with acting off: %d; the log should say acting is turned off", st)
	}

	time.Sleep(300 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the refused launch ran")
	}
	for _, e := range w.Events() {
		if e.Kind == testx.ButtonPress {
			t.Errorf("the window was clicked: %+v", e)
		}
	}
	// Reads still work.
	if st, _ := call(t, d, "GET", "/v1/windows", nil); st != 200 {
		t.Errorf("window list with acting off: %d", st)
	}
}

// TestDenyListHoldsForTakeoverAndWindowOps: the default deny-list keeps a
// password manager's window (an xterm titled as KeePassXC's, under
// openbox) from the human's take-over input and from window operations,
// as from POST /v1/actions.
func TestDenyListHoldsForTakeoverAndWindowOps(t *testing.T) {
	dpy := startDisplay(t)
	testx.StartWM(t, dpy) // window operations through a real window manager
	typed := filepath.Join(t.TempDir(), "typed")
	vault := testx.StartXterm(t, dpy, testx.XtermSpec{Title: "Passwords - KeePassXC", Geometry: "60x15+20+20",
		Command: []string{"sh", "-c", "stty raw -echo; exec cat > " + typed}})
	env, dataDir, port := newEnv(t, dpy)
	d := startDaemon(t, env, dataDir, port)

	if st, _ := call(t, d, "POST", "/v1/live/takeover", map[string]any{}); st != 200 {
		t.Fatalf("take-over: %d", st)
	}
	st, code := call(t, d, "POST", "/v1/live/input", map[string]any{"events": []map[string]any{{"type": "down", "x": 150, "y": 100, "button": 1}}})
	wantRefused(t, "take-over click in the vault", st, code, 403, "window_denied")
	st, code = call(t, d, "POST", "/v1/live/input", map[string]any{"events": []map[string]any{{"type": "text", "text": "hunter2"}}})
	wantRefused(t, "take-over typing into the focused vault", st, code, 403, "window_denied")
	for op, body := range map[string]map[string]any{"close": {"kill": true}, "minimize": {}, "maximize": {}, "move": {"x": 300, "y": 300}} {
		st, code = call(t, d, "POST", fmt.Sprintf("/v1/windows/0x%x/%s", vault.Window, op), body)
		wantRefused(t, op+" the vault", st, code, 403, "window_denied")
	}
	time.Sleep(300 * time.Millisecond)
	if b, _ := os.ReadFile(typed); len(b) > 0 {
		t.Errorf("the vault received %q", b)
	}
	if vault.Cmd.ProcessState != nil {
		t.Errorf("the vault's program ended")
	}
	if st, _ := call(t, d, "GET", "/v1/windows", nil); st != 200 {
		t.Errorf("window list: %d", st)
	}
}
